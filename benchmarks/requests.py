"""Per route: p50/p99 handler latency, and the DynamoDB, S3, other AWS and FORAGER calls
one request makes, counted exactly.

AWS is moto in-process (tables from template.yaml) and FORAGER is the simulator on
loopback; every botocore API call is counted at ``BaseClient._make_api_call`` and every
FORAGER call by the simulator's request log. The counts are deterministic: they are what
a reviewer can hold the code to.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter

from benchmarks.emulator import BEARER, emulated
from devstack.events import rest_event
from devstack.lambdas import FakeLambdaContext, load_handler
from devstack.metering import aws_calls
from devstack.samples import request_for
from devstack.template import Template
from knowledge_service.edge.catalog import knowledge_routes

ITERATIONS = 50
"""Timed calls per route, after one warm-up call (latency is a distribution: p50 and p99)."""


def measure() -> list[dict[str, object]]:
    template = Template()
    rows = []
    with emulated("StatusFunction") as (rt, sim):
        assert sim is not None
        functions = {(r.method, r.path): r for r in template.routes()}
        for info in knowledge_routes():  # every route of every group, from the route table
            route = functions[(info.method, info.path)]
            handler = load_handler(route.handler_dir, route.handler, f"lambda_{route.function}")
            target, body = request_for(info)
            path, _, query = target.partition("?")
            event = rest_event(
                info.method,
                path,
                resource=info.path,
                query=dict(pair.split("=", 1) for pair in query.split("&")),
                headers={"Content-Type": "application/json", **BEARER},
                body=body,
            )
            handler(event, FakeLambdaContext(route.function))  # warm: credential cache, clients
            seen = sim.request_count
            with aws_calls() as counts:
                response = handler(event, FakeLambdaContext(route.function))
            row = _row(f"{info.method} {info.path}", response["statusCode"], counts, sim.request_count - seen)
            timings = []
            for _ in range(ITERATIONS):
                started = time.perf_counter()
                handler(event, FakeLambdaContext(route.function))
                timings.append((time.perf_counter() - started) * 1000)
            row["p50_ms"] = round(statistics.median(timings), 2)
            row["p99_ms"] = round(statistics.quantiles(timings, n=100)[98], 2)
            rows.append(row)
        with aws_calls() as counts:
            rt.config.scope("falcon")
        rows.append(_row("binding resolution (every bound read)", 200, counts, 0))
    return rows


def _row(name: str, status: int, counts: Counter[str], forager: int) -> dict[str, object]:
    def of(service: str) -> int:
        return sum(v for k, v in counts.items() if k.startswith(f"{service}:"))

    return {
        "route": name,
        "status": status,
        "dynamodb_requests": of("dynamodb"),
        "s3_requests": of("s3"),
        "other_aws_requests": sum(counts.values()) - of("dynamodb") - of("s3"),
        "forager_requests": forager,
        "calls": dict(sorted(counts.items())),
    }
