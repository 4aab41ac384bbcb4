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
import subprocess
import sys
import time
from typing import Any

import httpx

from benchmarks.load import local_stack
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
from devstack.events import rest_event
from devstack.lambdas import FakeLambdaContext
method, path, query, token, function = json.loads(sys.argv[1])
event = rest_event(method, path, resource=path, query=query, headers={"Authorization": "Bearer " + token})
def call():
    began = time.perf_counter()
    answer = app.lambda_handler(event, FakeLambdaContext(function))
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


def _first_requests(environment: dict[str, str], token: str) -> list[dict[str, Any]]:
    template = Template()
    found = []
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
            "PYTHONPATH": os.pathsep.join([str(ROOT / props["CodeUri"]), str(ROOT)]),
        }
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, json.dumps([method, path, query, token, function])],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            found.append({"function": function, "error": done.stderr.strip().splitlines()[-1:]})
            continue
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        answer["first_over_warm_ms"] = round(answer["first_request_ms"] - answer["warm_p50_ms"], 1)
        found.append(
            {"function": function, **{k: round(v, 1) if isinstance(v, float) else v for k, v in answer.items()}}
        )
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
    print("\nFirst request per function (a fresh interpreter on the stack's tables; ms, MiB)")
    print(f"{'function':<20}{'status':>7}{'import':>8}{'first':>8}{'warm p50':>10}{'first-warm':>11}{'peak RSS':>10}")
    for row in results["first_requests"]:
        if "error" in row:
            print(f"{row['function']:<20} failed: {row['error']}")
            continue
        print(
            f"{row['function']:<20}{row['status']:>7}{row['import_ms']:>8}{row['first_request_ms']:>8}"
            f"{row['warm_p50_ms']:>10}{row['first_over_warm_ms']:>11}{row['peak_rss_mib']:>10}"
        )


if __name__ == "__main__":
    measured = measure()
    print(json.dumps(measured, indent=2))
    report(measured)
