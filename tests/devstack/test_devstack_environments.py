"""Execution environments (``devstack.lambdas.EnvironmentHost``): each a process of its own,
forked from its function's zygote after the init, one invocation at a time, reused warm,
reaped idle, at most ``concurrency`` per function; and Lambda's semantics kept: the timeout
kills, a crash is a function error and is replaced, marshal errors, payload limits, init
failures, the function's environment and context, the calls counted inside."""

from __future__ import annotations

import os
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devstack.lambdas import EnvironmentHost, FunctionError, FunctionTimedOut
from devstack.template import Template

HANDLER = textwrap.dedent(
    """
    import os
    import signal
    import time
    from pathlib import Path

    import httpx

    CALLS = []

    def handler(event, context):
        CALLS.append(event.get("n"))
        gather = event.get("gather")
        if gather:  # every call of the round must be running at once, or this one fails
            Path(gather, str(event["n"])).touch()
            deadline = time.monotonic() + 30
            while len(list(Path(gather).iterdir())) < event["of"]:
                if time.monotonic() > deadline:
                    raise TimeoutError("the calls of this round did not run at the same time")
                time.sleep(0.01)
        time.sleep(event.get("sleep", 0))
        if "exit" in event:
            os._exit(event["exit"])
        if event.get("kill"):
            os.kill(os.getpid(), signal.SIGKILL)
        if event.get("raise"):
            raise ValueError(event["raise"])
        if event.get("unmarshalable"):
            return {"a set": {1, 2}}
        if event.get("big"):
            return "x" * event["big"]
        if event.get("upstream"):
            try:
                httpx.get(event["upstream"], timeout=1)
            except httpx.HTTPError:
                pass
        return {
            "pid": os.getpid(),
            "calls": len(CALLS),
            "env": {k: os.environ.get(k) for k in ("OWN", "SHARED", "AWS_LAMBDA_FUNCTION_NAME")},
            "request_id": context.aws_request_id,
            "remaining_ms": context.get_remaining_time_in_millis(),
            "log_stream": context.log_stream_name,
        }
    """
)


@pytest.fixture
def template(tmp_path: Path) -> Template:
    (tmp_path / "fn").mkdir()
    (tmp_path / "fn" / "app.py").write_text(HANDLER)
    (tmp_path / "fn" / "broken.py").write_text("raise RuntimeError('init went wrong')\n")
    (tmp_path / "template.yaml").write_text(
        textwrap.dedent(
            """
            Transform: AWS::Serverless-2016-10-31
            Resources:
              SleepyFunction:
                Type: AWS::Serverless::Function
                Properties:
                  CodeUri: fn/
                  Handler: app.handler
                  Timeout: 10
                  Environment:
                    Variables:
                      OWN: sleepy
              DozyFunction:
                Type: AWS::Serverless::Function
                Properties:
                  CodeUri: fn/
                  Handler: app.handler
                  Timeout: 1
              NamelessFunction:
                Type: AWS::Serverless::Function
                Properties:
                  CodeUri: fn/
                  Handler: app.missing
              BrokenFunction:
                Type: AWS::Serverless::Function
                Properties:
                  CodeUri: fn/
                  Handler: broken.handler
            """
        )
    )
    return Template(path=tmp_path / "template.yaml", stack_name=f"envs-{tmp_path.name}")


@pytest.fixture
def hosts() -> Iterator[list[EnvironmentHost]]:
    made: list[EnvironmentHost] = []
    yield made
    for host in made:
        host.stop()


def host_of(hosts: list[EnvironmentHost], template: Template, **options: Any) -> EnvironmentHost:
    host = EnvironmentHost(template, **options)
    hosts.append(host)
    return host


def _concurrently(
    host: EnvironmentHost, events: list[dict[str, Any]], functions: list[str] | None = None
) -> tuple[list[Any], float]:
    answers: list[Any] = [None] * len(events)
    names = functions or ["SleepyFunction"] * len(events)

    def call(i: int) -> None:
        answers[i] = host.invoke(names[i], events[i])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(events))]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers, time.monotonic() - started


def _round(tmp_path: Path, name: str, count: int, start: int = 0) -> list[dict[str, Any]]:
    """``count`` events that each wait until all ``count`` are running (a rendezvous in a directory)."""
    gather = tmp_path / name
    gather.mkdir()
    return [{"n": start + i, "gather": str(gather), "of": count} for i in range(count)]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


# ---------------------------------------------------------------------- the pool
def test_concurrent_invocations_each_run_at_once_in_an_environment_of_their_own(
    hosts: list[EnvironmentHost], template: Template, tmp_path: Path
) -> None:
    host = host_of(hosts, template, concurrency=4)
    cold, _ = _concurrently(host, _round(tmp_path, "cold", 4))  # four environments, all running at once

    warm, _ = _concurrently(host, _round(tmp_path, "warm", 4, start=10))  # and again, warm

    assert len({a["pid"] for a in warm}) == 4  # four processes: nothing in one is shared by two calls
    assert os.getpid() not in {a["pid"] for a in warm}
    assert sorted(a["calls"] for a in warm) == [2, 2, 2, 2]  # each environment warm, used once before
    assert {a["pid"] for a in cold} == {a["pid"] for a in warm}
    assert len({a["log_stream"] for a in warm}) == 4  # one log stream per environment
    assert host.environments("SleepyFunction") == 4


def test_warm_environments_are_reused_the_lowest_numbered_first(
    hosts: list[EnvironmentHost], template: Template, tmp_path: Path
) -> None:
    host = host_of(hosts, template, concurrency=4)
    _concurrently(host, _round(tmp_path, "cold", 4))

    answers = [host.invoke("SleepyFunction", {"n": 10 + i}) for i in range(3)]

    assert host.environments("SleepyFunction") == 4
    assert [a["calls"] for a in answers] == [2, 3, 4]
    assert len({a["pid"] for a in answers}) == 1


def test_no_more_environments_run_than_the_bound_and_later_calls_wait(
    hosts: list[EnvironmentHost], template: Template
) -> None:
    host = host_of(hosts, template, concurrency=2)
    host.invoke("SleepyFunction", {"n": 0})  # the init, out of the timing

    answers, elapsed = _concurrently(host, [{"n": i, "sleep": 0.3} for i in range(4)])

    assert host.environments("SleepyFunction") == 2
    assert len({a["pid"] for a in answers}) == 2
    assert elapsed >= 0.6


def test_concurrency_1_runs_one_invocation_at_a_time_across_functions(
    hosts: list[EnvironmentHost], template: Template
) -> None:
    host = host_of(hosts, template, concurrency=1)
    host.invoke("SleepyFunction", {"n": 0})
    host.invoke("DozyFunction", {"n": 0})

    answers, elapsed = _concurrently(
        host, [{"n": i, "sleep": 0.2} for i in range(3)], ["SleepyFunction", "DozyFunction", "SleepyFunction"]
    )

    assert elapsed >= 0.6  # two functions, still one call at a time
    assert host.environments("SleepyFunction") == host.environments("DozyFunction") == 1
    assert len({a["pid"] for a in answers}) == 2


def test_an_idle_environment_is_reaped_and_the_next_call_forks_a_fresh_one(
    hosts: list[EnvironmentHost], template: Template
) -> None:
    host = host_of(hosts, template, idle_seconds=0.2)
    first = host.invoke("SleepyFunction", {"n": 1})
    deadline = time.monotonic() + 10
    while (host.environments("SleepyFunction") or not _gone(first["pid"])) and time.monotonic() < deadline:
        time.sleep(0.05)

    assert host.environments("SleepyFunction") == 0
    assert _gone(first["pid"])
    again = host.invoke("SleepyFunction", {"n": 2})
    assert again["pid"] != first["pid"] and again["calls"] == 1


def test_stop_ends_every_environment_and_leaves_no_process(
    hosts: list[EnvironmentHost], template: Template, tmp_path: Path
) -> None:
    host = host_of(hosts, template, concurrency=2)
    answers, _ = _concurrently(host, _round(tmp_path, "two", 2))

    host.stop()

    assert all(_gone(a["pid"]) for a in answers)
    with pytest.raises(FunctionError, match="stopping"):
        host.invoke("SleepyFunction", {"n": 3})


# ---------------------------------------------------------------------- Lambda's semantics
def test_the_function_sees_its_own_environment_and_a_lambda_context(
    hosts: list[EnvironmentHost], template: Template
) -> None:
    host = host_of(hosts, template, environment={"SHARED": "yes", "PATH": os.environ["PATH"]})

    sleepy = host.invoke("SleepyFunction", {"n": 1})
    dozy = host.invoke("DozyFunction", {"n": 1})

    named = template.physical_name
    assert sleepy["env"] == {"OWN": "sleepy", "SHARED": "yes", "AWS_LAMBDA_FUNCTION_NAME": named("SleepyFunction")}
    assert dozy["env"] == {"OWN": None, "SHARED": "yes", "AWS_LAMBDA_FUNCTION_NAME": named("DozyFunction")}
    assert 0 < sleepy["remaining_ms"] <= 10_000 and 0 < dozy["remaining_ms"] <= 1_000
    assert sleepy["request_id"] != dozy["request_id"]


def test_an_invocation_past_its_timeout_is_killed_and_the_next_gets_a_fresh_environment(
    hosts: list[EnvironmentHost], template: Template
) -> None:
    host = host_of(hosts, template)
    first = host.invoke("DozyFunction", {"n": 1})
    started = time.monotonic()

    with pytest.raises(FunctionTimedOut, match=r"Task timed out after 1\.00 seconds") as timed_out:
        host.invoke("DozyFunction", {"n": 2, "sleep": 30})

    assert timed_out.value.error_type == "Sandbox.Timedout"
    assert time.monotonic() - started < 5  # stopped at its Timeout, not waited for
    assert _gone(first["pid"])
    assert host.invoke("DozyFunction", {"n": 3})["pid"] != first["pid"]


@pytest.mark.parametrize(("event", "reason"), [({"exit": 3}, "exit status 3"), ({"kill": True}, "signal: killed")])
def test_a_crashed_environment_is_a_function_error_and_is_replaced(
    hosts: list[EnvironmentHost], template: Template, event: dict[str, Any], reason: str
) -> None:
    host = host_of(hosts, template)
    first = host.invoke("SleepyFunction", {"n": 1})

    with pytest.raises(FunctionError, match=f"Runtime exited with error: {reason}") as crashed:
        host.invoke("SleepyFunction", event)

    assert crashed.value.error_type == "Runtime.ExitError"
    assert host.environments("SleepyFunction") == 0
    again = host.invoke("SleepyFunction", {"n": 2})
    assert again["pid"] != first["pid"] and again["calls"] == 1  # forked after the init, before any call


def test_a_handler_error_keeps_the_environment_warm(hosts: list[EnvironmentHost], template: Template) -> None:
    host = host_of(hosts, template)
    first = host.invoke("SleepyFunction", {"n": 1})

    with pytest.raises(FunctionError, match=r"^boom$") as raised:
        host.invoke("SleepyFunction", {"raise": "boom"})
    with pytest.raises(FunctionError, match="Unable to marshal response") as unmarshalable:
        host.invoke("SleepyFunction", {"unmarshalable": True})

    assert raised.value.error_type == "ValueError"
    assert unmarshalable.value.error_type == "Runtime.MarshalError"
    assert host.invoke("SleepyFunction", {"n": 2}) | {"remaining_ms": 0, "request_id": ""} == first | {
        "calls": 4,
        "remaining_ms": 0,
        "request_id": "",
    }


def test_lambdas_payload_limits_hold_both_ways(hosts: list[EnvironmentHost], template: Template) -> None:
    host = host_of(hosts, template)

    with pytest.raises(FunctionError) as request:
        host.invoke("SleepyFunction", {"n": 1, "pad": "x" * (6 * 1024 * 1024)})
    with pytest.raises(FunctionError) as response:
        host.invoke("SleepyFunction", {"big": 7 * 1024 * 1024})

    assert request.value.error_type == "RequestEntityTooLargeException"
    assert response.value.error_type == "Function.ResponseSizeTooLarge"
    assert host.invoke("SleepyFunction", {"big": 5 * 1024 * 1024}) == "x" * (5 * 1024 * 1024)


def test_an_init_that_fails_is_reported_as_lambda_reports_it(hosts: list[EnvironmentHost], template: Template) -> None:
    host = host_of(hosts, template)

    with pytest.raises(FunctionError, match="has no callable 'missing'") as nameless:
        host.invoke("NamelessFunction", {})
    with pytest.raises(FunctionError, match="init went wrong") as broken:
        host.invoke("BrokenFunction", {})

    assert nameless.value.error_type == "Runtime.HandlerNotFound"
    assert broken.value.error_type == "Runtime.ImportModuleError"
    assert host.environments("NamelessFunction") == host.environments("BrokenFunction") == 0


def test_the_calls_an_invocation_makes_are_counted_inside_and_handed_back(
    hosts: list[EnvironmentHost], template: Template
) -> None:
    told: list[Any] = []
    host = host_of(hosts, template, on_calls=told.append)

    host.invoke("SleepyFunction", {"n": 1, "upstream": "http://127.0.0.1:9/nothing"})
    host.invoke("SleepyFunction", {"n": 2})

    assert told == [
        {"aws": {}, "forager": {"GET": 1}, "footprint": {}, "cloudwatch": {}},
        {"aws": {}, "forager": {}, "footprint": {}, "cloudwatch": {}},
    ]
