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
from devstack.template import ROOT, Template
from knowledge_service.edge.catalog import knowledge_routes

ITERATIONS = 50
"""Timed calls per route, after one warm-up call (latency is a distribution: p50 and p99)."""


DOCUMENT = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- requests:begin (python -m benchmarks.requests --write; do not edit by hand) -->"
END = "<!-- requests:end -->"


def measure(iterations: int = ITERATIONS) -> list[dict[str, object]]:
    """A row per route: its status and the requests one call makes; with ``iterations``, its
    p50 and p99 over that many timed calls (none: the counts alone, as the docs' test takes them)."""
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
            rows.append(row)
            if not iterations:
                continue
            timings = []
            for _ in range(iterations):
                started = time.perf_counter()
                handler(event, FakeLambdaContext(route.function))
                timings.append((time.perf_counter() - started) * 1000)
            row["p50_ms"] = round(statistics.median(timings), 2)
            row["p99_ms"] = round(statistics.quantiles(timings, n=100)[98], 2)
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


def counts_table(rows: list[dict[str, object]]) -> str:
    """The requests one call of each route makes, as docs/benchmarks.md shows them."""
    lines = [
        "| route | status | DynamoDB | S3 | other AWS | FORAGER |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        status = row["status"] if row["route"] != "binding resolution (every bound read)" else "—"
        lines.append(
            f"| {row['route']} | {status} | {row['dynamodb_requests']} | {row['s3_requests']} "
            f"| {row['other_aws_requests']} | {row['forager_requests']} |"
        )
    return "\n".join(lines) + "\n"


def documented() -> str:
    """The counts table docs/benchmarks.md shows now."""
    text = DOCUMENT.read_text()
    return text[text.index(BEGIN) + len(BEGIN) : text.index(END)].lstrip("\n")


def write_documented(table: str) -> None:
    text = DOCUMENT.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    DOCUMENT.write_text(text[:start] + "\n" + table + text[end:])


if __name__ == "__main__":  # python -m benchmarks.requests [--write]: the counts alone, fast
    import sys

    table = counts_table(measure(iterations=0))
    print(table, end="")
    if "--write" in sys.argv[1:]:
        write_documented(table)
