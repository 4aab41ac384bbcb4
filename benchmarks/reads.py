"""The edge's added latency on search and retrieve, and the DynamoDB calls per read.

In-process: moto for AWS (tables from template.yaml), the simulator on loopback. For each
route, ``ITERATIONS`` warm handler calls are timed against the same number of direct httpx
calls to the simulator for the same query; the added latency is the difference of the two
distributions' p50 and p99. DynamoDB calls are counted at ``BaseClient._make_api_call``.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import httpx

from benchmarks.emulator import BEARER, emulated
from devstack.events import rest_event
from devstack.lambdas import FakeLambdaContext, load_handler
from devstack.metering import aws_calls
from devstack.template import Template
from knowledge_service.runtime import reset_runtime

ITERATIONS = 200
QUERY = "why did the launch date change"


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _timed(call: Callable[[], Any]) -> list[float]:
    samples = []
    for _ in range(ITERATIONS):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def measure() -> list[dict[str, object]]:
    template = Template()
    rows: list[dict[str, object]] = []
    with emulated("ReadsFunction") as (_, sim):
        assert sim is not None
        routes = {(r.method, r.path): r for r in template.routes()}
        direct = httpx.Client(headers={"Authorization": f"Bearer {sim.token}"})
        cases: list[tuple[str, str, dict[str, Any], Callable[[], Any]]] = [
            (
                "GET",
                "/knowledge/search",
                {"query": {"q": QUERY, "project": "falcon"}},
                lambda: direct.get(f"{sim.url}/api/projects/falcon/search", params={"q": QUERY, "limit": 20}),
            ),
            (
                "POST",
                "/knowledge/retrieve",
                {"body": json.dumps({"query": QUERY, "project": "falcon"})},
                lambda: direct.post(
                    f"{sim.url}/api/projects/falcon/retrieve",
                    json={"query": QUERY, "top_k": 8, "include_historical": False},
                    headers={"Idempotency-Key": os.urandom(8).hex()},
                ),
            ),
        ]
        for method, path, extra, upstream_call in cases:
            route = routes[(method, path)]
            handler = load_handler(route.handler_dir, route.handler, f"lambda_{route.function}")
            event = rest_event(method, path, resource=path, headers=BEARER, **extra)

            def edge_call(event: dict[str, Any] = event, handler: Any = handler, name: str = route.function) -> Any:
                response = handler(event, FakeLambdaContext(name))
                assert response["statusCode"] == 200, response["body"]
                return response

            edge_call()  # warm: credential cache, clients, imports
            upstream_call()
            with aws_calls() as counts:
                edge_call()
            dynamodb = sum(v for k, v in counts.items() if k.startswith("dynamodb:"))
            edge = _timed(edge_call)
            simulator = _timed(upstream_call)
            rows.append(
                {
                    "route": f"{method} {path}",
                    "iterations": ITERATIONS,
                    "edge_p50_ms": round(_percentile(edge, 0.5), 2),
                    "edge_p99_ms": round(_percentile(edge, 0.99), 2),
                    "simulator_p50_ms": round(_percentile(simulator, 0.5), 2),
                    "simulator_p99_ms": round(_percentile(simulator, 0.99), 2),
                    "added_p50_ms": round(_percentile(edge, 0.5) - _percentile(simulator, 0.5), 2),
                    "added_p99_ms": round(_percentile(edge, 0.99) - _percentile(simulator, 0.99), 2),
                    "added_mean_ms": round(statistics.fmean(edge) - statistics.fmean(simulator), 2),
                    "dynamodb_requests": dynamodb,
                    "calls": dict(sorted(counts.items())),
                }
            )
        direct.close()
        reset_runtime()
    return rows


if __name__ == "__main__":
    for row in measure():
        print(json.dumps(row))
