"""Per read route, end to end through the local stack (``python -m devstack`` in its own
process, loopback): Lambda invocations, DynamoDB and FORAGER requests per request, counted
by the stack itself (``GET /_local/metrics``), and p50/p99 latency with FORAGER answering at
once and 20 ms late (the simulator's ``slow`` fault).

Then, per function, in a fresh interpreter on the same stack (its tables and simulator):
the handler module's import, the first request and the warm p50 after it, and the peak RSS.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks import imports
from benchmarks.load import local_stack
from devstack.events import rest_event
from devstack.invoke import stack_environment
from devstack.metering import difference
from devstack.samples import request_for
from devstack.template import ROOT, Template
from knowledge_service.edge.catalog import knowledge_routes

ITERATIONS = 30
LATE_SECONDS = 0.020
FIRST_REQUEST = {
    "ReadsFunction": ("GET", "/knowledge/search", {"project": "falcon", "q": "launch"}),
    "StatusFunction": ("GET", "/knowledge/status", {}),
    "FeedFunction": ("GET", "/knowledge/feed", {"project": "falcon"}),
    "ChangesFunction": ("GET", "/knowledge/changes", {"project": "falcon"}),
    "IngestionFunction": ("GET", "/knowledge/jobs", {"project": "falcon"}),
    "ExportsFunction": ("GET", "/knowledge/exports", {"project": "falcon"}),
    "BindingsFunction": ("GET", "/knowledge/projects", {}),
}
"""One read per function, for its first request in a fresh interpreter."""

_CHILD = """
import json, sys, time
started = time.perf_counter()
import app
imported = time.perf_counter()
event, function = json.loads(sys.argv[1])
class Context:  # what Lambda hands a handler (devstack.lambdas.FakeLambdaContext, without devstack's imports)
    def __init__(self):
        self.function_name, self.memory_limit_in_mb, self.function_version = function, 128, "$LATEST"
        self.aws_request_id = "bench-%d" % time.monotonic_ns()
        self.invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:" + function
        self._deadline = time.monotonic() + 3.0
    def get_remaining_time_in_millis(self):
        return max(0, int((self._deadline - time.monotonic()) * 1000))
def call():
    began = time.perf_counter()
    answer = app.lambda_handler(event, Context())
    return answer["statusCode"], (time.perf_counter() - began) * 1000
def peak_kib():  # VmHWM: this process's own peak (ru_maxrss would carry the parent's across exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0
status, first_ms = call()
warm = sorted(call()[1] for _ in range(20))
print(json.dumps({"status": status, "import_ms": (imported - started) * 1000, "first_request_ms": first_ms,
                  "warm_p50_ms": warm[len(warm) // 2],
                  "peak_rss_mib": peak_kib() / 1024}))
"""


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))], 2)


def _reads() -> list[Any]:
    routes = knowledge_routes()
    return [r for r in routes if r.method == "GET" and r.project_access in ("read", "installation")] + [
        r for r in routes if (r.method, r.path) == ("POST", "/knowledge/retrieve")
    ]


def measure() -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    firsts: list[dict[str, Any]] = []
    with local_stack() as running:
        http = httpx.Client(base_url=running.url, timeout=30)
        control = httpx.Client(base_url=running.simulator_control_url, timeout=10)
        headers = {"Authorization": f"Bearer {running.admin_token}", "Content-Type": "application/json"}
        for route in _reads():
            target, body = request_for(route)
            if route.project_access == "installation":
                target = target.split("?", 1)[0]

            def call(target: str = target, body: str | None = body, method: str = route.method) -> int:
                return http.request(method, target, content=body, headers=headers).status_code

            status = call()  # warm
            attempts = []
            for _ in range(3):  # the quietest of three: another request's work only adds
                before = http.get("/_local/metrics").json()
                call()
                attempts.append(difference(before, http.get("/_local/metrics").json()))
            counts = min(attempts, key=lambda c: sum(c.values()))
            row: dict[str, Any] = {
                "route": f"{route.method} {route.path}",
                "status": status,
                "invocations": sum(v for k, v in counts.items() if k.startswith("invocations:")),
                "dynamodb_requests": sum(v for k, v in counts.items() if k.startswith("dynamodb:")),
                "forager_requests": sum(v for k, v in counts.items() if k.startswith("forager:")),
                "calls": dict(sorted(counts.items())),
            }
            for label, late in (("0ms", 0.0), ("20ms", LATE_SECONDS)):
                if late:
                    control.post("/faults", json={"mode": "slow", "delay_seconds": late}).raise_for_status()
                samples = []
                for _ in range(ITERATIONS):
                    began = time.perf_counter()
                    call()
                    samples.append((time.perf_counter() - began) * 1000)
                control.delete("/faults")
                row[f"p50_ms_forager_{label}"] = _percentile(samples, 0.5)
                row[f"p99_ms_forager_{label}"] = _percentile(samples, 0.99)
            rows.append(row)
        assert running.state_dir is not None
        firsts = _first_requests(stack_environment(running.state_dir), running.admin_token)
    return {"routes": rows, "first_requests": firsts}


FIRST_ROUNDS = 5
"""Fresh interpreters per function, in alternating rounds (every function once, then again)."""


def _first_requests(environment: dict[str, str], token: str, rounds: int = FIRST_ROUNDS) -> list[dict[str, Any]]:
    """In ``.bench-floor/`` (the layer's locked dependencies, compiled as ``sam build`` ships them)
    with the layer's own code as it ships too: its source and its unchecked-hash bytecode
    (``layers/common/Makefile``), so a module a route imports on first use is loaded, not
    compiled, as in Lambda."""
    with tempfile.TemporaryDirectory(prefix="bench-first-") as scratch:
        return _first_requests_in(
            imports.floor_python(),
            imports.deployed_copy(ROOT, Path(scratch), compiled=True),
            environment,
            token,
            rounds,
        )


def _first_requests_in(
    python: Path, layer: Path, environment: dict[str, str], token: str, rounds: int
) -> list[dict[str, Any]]:
    template = Template()
    samples: dict[str, list[dict[str, Any]]] = {function: [] for function in FIRST_REQUEST}
    errors: dict[str, list[str]] = {}
    for _ in range(rounds):  # alternating: a busy machine slows every function alike
        for function, (method, path, query) in FIRST_REQUEST.items():
            props = template.functions()[function]["Properties"]
            env = {
                **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FORAGER_", "DEVSTACK_"))},
                **environment,
                **{k: str(v) for k, v in (props.get("Environment") or {}).get("Variables", {}).items()},
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_DEFAULT_REGION": "us-east-1",
                "POWERTOOLS_TRACE_DISABLED": "true",
                "POWERTOOLS_LOG_LEVEL": "WARNING",
                "AWS_LAMBDA_FUNCTION_NAME": function,
                "PYTHONPATH": os.pathsep.join([str(ROOT / props["CodeUri"]), str(layer), str(ROOT)]),
                "PYTHONDONTWRITEBYTECODE": "1",
            }
            env.pop("VIRTUAL_ENV", None)
            env.pop("PYTHONPYCACHEPREFIX", None)
            event = rest_event(method, path, resource=path, query=query, headers={"Authorization": f"Bearer {token}"})
            done = subprocess.run(
                [str(python), "-c", _CHILD, json.dumps([event, function])],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                errors[function] = done.stderr.strip().splitlines()[-1:]
                continue
            answer = json.loads(done.stdout.strip().splitlines()[-1])
            answer["first_over_warm_ms"] = answer["first_request_ms"] - answer["warm_p50_ms"]
            samples[function].append(answer)
    found: list[dict[str, Any]] = []
    for function, runs in samples.items():
        if not runs:
            found.append({"function": function, "error": errors.get(function, ["no run"])})
            continue
        row: dict[str, Any] = {"function": function, "status": runs[-1]["status"], "rounds": len(runs)}
        for key in ("import_ms", "first_request_ms", "warm_p50_ms", "first_over_warm_ms", "peak_rss_mib"):
            values = [run[key] for run in runs]
            row[key] = round(statistics.median(values), 1)  # the median of the rounds, and their min
            row[key.replace("_ms", "_min_ms") if key.endswith("_ms") else key + "_min"] = round(min(values), 1)
        found.append(row)
    return found


def report(results: dict[str, Any]) -> None:
    print(
        "\nPer read route, end to end through the local stack (counts per request; latency over"
        f" {ITERATIONS} calls, FORAGER at 0 ms and 20 ms)"
    )
    print(
        f"{'route':<42}{'status':>7}{'Lambda':>7}{'DynamoDB':>9}{'FORAGER':>8}"
        f"{'p50@0':>8}{'p99@0':>8}{'p50@20':>8}{'p99@20':>8}"
    )
    for row in results["routes"]:
        print(
            f"{row['route']:<42}{row['status']:>7}{row['invocations']:>7}{row['dynamodb_requests']:>9}"
            f"{row['forager_requests']:>8}{row['p50_ms_forager_0ms']:>8}{row['p99_ms_forager_0ms']:>8}"
            f"{row['p50_ms_forager_20ms']:>8}{row['p99_ms_forager_20ms']:>8}"
        )
    print(
        "\nFirst request per function (fresh interpreters on the stack's tables, in .bench-floor/ with the layer"
        f" as it ships, source and bytecode; median (min) of {FIRST_ROUNDS} alternating rounds; ms, MiB)"
    )
    print(
        f"{'function':<20}{'status':>7}{'import':>16}{'first':>16}{'warm p50':>14}{'first-warm':>16}"
        f"{'<=150':>6}{'peak RSS':>10}"
    )
    for row in results["first_requests"]:
        if "error" in row:
            print(f"{row['function']:<20} failed: {row['error']}")
            continue

        def both(key: str, row: dict[str, Any] = row) -> str:
            return f"{row[key]} ({row[key.replace('_ms', '_min_ms')]})"

        print(
            f"{row['function']:<20}{row['status']:>7}{both('import_ms'):>16}{both('first_request_ms'):>16}"
            f"{both('warm_p50_ms'):>14}{both('first_over_warm_ms'):>16}"
            f"{'yes' if row['first_over_warm_ms'] <= 150 else 'NO':>6}{row['peak_rss_mib']:>10}"
        )


def first_requests_only(rounds: int = FIRST_ROUNDS) -> list[dict[str, Any]]:
    """The first-request rows alone, on a fresh local stack (``python -m benchmarks.stack_routes first``)."""
    with local_stack() as running:
        assert running.state_dir is not None
        return _first_requests(stack_environment(running.state_dir), running.admin_token, rounds)


if __name__ == "__main__":
    if sys.argv[1:] == ["first"]:
        report({"routes": [], "first_requests": first_requests_only()})
    else:
        measured = measure()
        print(json.dumps(measured, indent=2))
        report(measured)
