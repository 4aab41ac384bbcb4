"""The local stack under bursts, and the answers it gives by itself: a listen queue that holds
200 connections, warm containers that run concurrently without sharing module state, the
single-threaded switch, TCP_NODELAY, and the envelope for every refusal (doubled slashes,
a 1 MB request line, oversized headers, a malformed request)."""

from __future__ import annotations

import json
import socket
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from devstack.gateway import ApiServer, Gateway
from devstack.lambdas import FunctionHost
from devstack.template import Template

TEMPLATE = Template()
MISSING_ROUTE = TEMPLATE.gateway_responses()["MISSING_AUTHENTICATION_TOKEN"]["ResponseTemplates"]["application/json"]


class Recorder:
    def __init__(self) -> None:
        self.called: list[str] = []

    def invoke(self, function: str, event: dict[str, Any]) -> Any:
        self.called.append(function)
        if function == "AuthorizerFunction":
            return {
                "principalId": "ada",
                "policyDocument": {
                    "Version": "2012-10-17",
                    "Statement": [{"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": "*"}],
                },
            }
        return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": '{"ok": true}'}


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def server(recorder: Recorder) -> Iterator[ApiServer]:
    api = ApiServer(Gateway.from_template(TEMPLATE, recorder.invoke), port=0).start()
    yield api
    api.stop()


# ---------------------------------------------------------------------- doubled slashes
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/knowledge//status"),
        ("POST", "/knowledge/feed//sync"),
        ("GET", "/knowledge/items/itm_0123456789abcdef//evidence"),
        ("GET", "//knowledge/status"),
    ],
)
def test_given_a_doubled_slash_when_requested_then_404_not_found_and_no_function_runs(
    recorder: Recorder, method: str, path: str
) -> None:
    gateway = Gateway.from_template(TEMPLATE, recorder.invoke)

    answer = gateway.handle(method, path, [("Authorization", "Bearer ks_x")], b"")

    assert answer.status == 404
    assert json.loads(answer.body) == json.loads(MISSING_ROUTE)
    assert json.loads(answer.body)["code"] == "not_found"
    assert recorder.called == []


def test_given_the_same_path_with_single_slashes_then_it_reaches_its_function(recorder: Recorder) -> None:
    gateway = Gateway.from_template(TEMPLATE, recorder.invoke)

    answer = gateway.handle("GET", "/knowledge/status", [("Authorization", "Bearer ks_x")], b"")

    assert answer.status == 200
    assert recorder.called[-1] != "AuthorizerFunction"


# ---------------------------------------------------------------------- http.server's refusals
def _raw(server: ApiServer, payload: bytes) -> tuple[int, dict[str, str], dict[str, Any]]:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
        conn.sendall(payload)
        received = b""
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, json.loads(body)


def test_given_a_1mb_query_string_then_414_in_the_envelope_not_an_html_page(server: ApiServer) -> None:
    status, headers, body = _raw(
        server, b"GET /knowledge/search?q=" + b"a" * 1_000_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    )

    assert status == 414
    assert headers["content-type"] == "application/json"
    assert body == {
        "success": False,
        "message": "The request line is longer than this API accepts (64 KiB).",
        "data": None,
        "code": "uri_too_long",
    }


def test_given_a_header_too_long_then_431_in_the_envelope(server: ApiServer) -> None:
    status, headers, body = _raw(
        server, b"GET /knowledge/status HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 70_000 + b"\r\n\r\n"
    )

    assert status == 431
    assert headers["content-type"] == "application/json"
    assert body["code"] == "headers_too_large"
    assert body["success"] is False


def test_given_a_malformed_request_line_then_400_in_the_envelope(server: ApiServer) -> None:
    status, headers, body = _raw(server, b"NOT A REQUEST AT ALL\r\n\r\n")

    assert status == 400
    assert headers["content-type"] == "application/json"
    assert body == {"success": False, "message": body["message"], "data": None, "code": "bad_request"}


def test_given_an_http_version_it_does_not_speak_then_505_in_the_envelope(server: ApiServer) -> None:
    status, _, body = _raw(server, b"GET /knowledge/status HTTP/2.0\r\nHost: x\r\n\r\n")

    assert status == 505
    assert body["code"] == "http_version_not_supported"


# ---------------------------------------------------------------------- the listen queue
def test_given_200_connections_while_the_api_is_busy_then_every_one_is_queued_and_answered(
    recorder: Recorder,
) -> None:
    api = ApiServer(Gateway.from_template(TEMPLATE, recorder.invoke), port=0)  # listening, not accepting yet
    try:
        clients: list[socket.socket] = []
        for _ in range(200):  # a SYN the full queue drops would time out here
            clients.append(socket.create_connection(("127.0.0.1", api.port), timeout=0.5))
        for client in clients:
            client.sendall(b"POST /knowledge/nothing HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        api.start()
        statuses = []
        for client in clients:
            client.settimeout(10)
            statuses.append(client.recv(65536).split(b" ", 2)[1])
            client.close()
    finally:
        api.stop()

    assert statuses == [b"404"] * 200


def test_given_one_kept_alive_connection_then_back_to_back_requests_do_not_wait_for_nagle(
    server: ApiServer,
) -> None:
    with httpx.Client() as client:
        start = time.monotonic()
        for _ in range(30):  # with Nagle, each answer's body waits ~40 ms for the delayed ACK
            assert client.get(f"{server.url}/knowledge/nothing").status_code == 404
        elapsed = time.monotonic() - start

    assert elapsed < 30 * 0.02


# ---------------------------------------------------------------------- warm containers
HANDLER = textwrap.dedent(
    """
    import time
    from pathlib import Path

    import knowledge_service.runtime as layer

    CALLS = []

    def handler(event, context):
        CALLS.append(event["n"])
        gather = event.get("gather")
        if gather:  # every call of the round must be running at once, or this one fails
            Path(gather, str(event["n"])).touch()
            deadline = time.monotonic() + 30
            while len(list(Path(gather).iterdir())) < event["of"]:
                if time.monotonic() > deadline:
                    raise TimeoutError("the calls of this round did not run at the same time")
                time.sleep(0.01)
        time.sleep(event.get("sleep", 0))
        return {"module": id(CALLS), "layer": id(layer), "calls": len(CALLS)}
    """
)


def _round(tmp_path: Path, name: str, count: int, start: int = 0) -> list[dict[str, Any]]:
    """``count`` events that each wait until all ``count`` are running (a rendezvous in a directory)."""
    gather = tmp_path / name
    gather.mkdir()
    return [{"n": start + i, "gather": str(gather), "of": count} for i in range(count)]


@pytest.fixture
def template(tmp_path: Path) -> Template:
    (tmp_path / "fn").mkdir()
    (tmp_path / "fn" / "app.py").write_text(HANDLER)
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
              DozyFunction:
                Type: AWS::Serverless::Function
                Properties:
                  CodeUri: fn/
                  Handler: app.handler
                  Timeout: 10
            """
        )
    )
    return Template(path=tmp_path / "template.yaml", stack_name=f"bursts-{tmp_path.name}")


def _concurrently(
    host: FunctionHost, events: list[dict[str, Any]], functions: list[str] | None = None
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


def test_given_concurrent_invocations_then_each_runs_in_its_own_container_at_once(
    template: Template, tmp_path: Path
) -> None:
    shared_layer = sys.modules["knowledge_service.runtime"]
    host = FunctionHost(template, concurrency=4)
    cold, _ = _concurrently(host, _round(tmp_path, "cold", 4))  # four cold starts, all running at once

    warm, _ = _concurrently(host, _round(tmp_path, "warm", 4, start=10))  # and again, warm

    assert len({a["module"] for a in warm}) == 4  # no handler module shared between two calls
    assert len({a["layer"] for a in warm}) == 4  # nor the layer's module state
    assert sorted(a["calls"] for a in warm) == [2, 2, 2, 2]  # each container warm, used once before
    assert {a["module"] for a in cold} == {a["module"] for a in warm}
    assert sys.modules["knowledge_service.runtime"] is shared_layer  # the process's own layer untouched
    assert host.containers("SleepyFunction") == 4


def test_given_warm_containers_then_later_calls_reuse_them(template: Template, tmp_path: Path) -> None:
    host = FunctionHost(template, concurrency=4)
    _concurrently(host, _round(tmp_path, "cold", 4))

    answers = [host.invoke("SleepyFunction", {"n": 10 + i}) for i in range(3)]

    assert host.containers("SleepyFunction") == 4
    assert [a["calls"] for a in answers] == [2, 3, 4]  # the lowest-numbered warm container, reused


def test_given_more_calls_than_the_bound_then_no_more_containers_run_than_the_bound(template: Template) -> None:
    host = FunctionHost(template, concurrency=2)

    answers, elapsed = _concurrently(host, [{"n": i, "sleep": 0.3} for i in range(4)])

    assert host.containers("SleepyFunction") == 2
    assert len({a["module"] for a in answers}) == 2
    assert elapsed >= 0.6


def test_given_concurrency_1_then_calls_run_one_at_a_time_in_one_container(template: Template) -> None:
    host = FunctionHost(template, concurrency=1)

    answers, elapsed = _concurrently(host, [{"n": i, "sleep": 0.2} for i in range(3)])

    assert elapsed >= 0.6
    assert len({a["module"] for a in answers}) == 1
    assert sorted(a["calls"] for a in answers) == [1, 2, 3]
    assert host.containers("SleepyFunction") == 1


def test_given_two_functions_then_their_second_containers_do_not_share_a_layer(
    template: Template, tmp_path: Path
) -> None:
    host = FunctionHost(template, concurrency=4)

    answers, _ = _concurrently(
        host, _round(tmp_path, "both", 4), ["SleepyFunction", "SleepyFunction", "DozyFunction", "DozyFunction"]
    )

    assert host.containers("SleepyFunction") == host.containers("DozyFunction") == 2
    assert len({a["module"] for a in answers}) == 4
    # container 0 of every function is the process's own layer; every other container has its own
    assert len({a["layer"] for a in answers}) == 3
