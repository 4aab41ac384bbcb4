"""Pages: PUT and GET through the handler against the emulator, a PUT into a 2,000-page
base (what a write costs does not grow with the base: it reads its own link targets), and
lint + stats over a 10,000-page base (a cold walk and a cached one).

In-process: moto for AWS (tables and buckets from template.yaml), the pages function's own
handler with an admin principal in the request context. The 10,000-page base is seeded
straight into the page store's heads (what the walk reads) with a link graph, so the walk,
not the seeding, is what is timed.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.emulator import BEARER, emulated
from devstack.events import rest_event
from devstack.lambdas import FakeLambdaContext, load_handler
from devstack.metering import aws_calls
from devstack.template import Template
from knowledge_service.domain.pages.describe import describe
from knowledge_service.domain.pages.tree import forget_walks
from knowledge_service.runtime import Runtime

ITERATIONS = 100
BASE_PAGES = 10_000
WRITE_BASE_PAGES = 2_000
WRITE_ITERATIONS = 20
KB = "/api/v1/projects/falcon/kb"
PAGE = "---\ntype: Runbook\ntitle: Deploy the hub\ntags: [ops]\n---\n# Deploy\n\nSee [caddy](caddy.md).\n" + "x" * 2000


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _row(name: str, samples: list[float], calls: dict[str, int], n: int) -> dict[str, Any]:
    return {
        "route": name,
        "iterations": len(samples),
        "p50_ms": round(statistics.median(samples), 2),
        "p99_ms": round(_percentile(samples, 0.99), 2),
        "dynamodb_per_call": round(sum(v for k, v in calls.items() if k.startswith("dynamodb:")) / n, 1),
        "s3_per_call": round(sum(v for k, v in calls.items() if k.startswith("s3:")) / n, 1),
    }


def _seed(rt: Runtime, pages: int) -> None:
    """``pages`` heads in 100 directories, each linking to the next page and to its index."""
    table = rt.pages.table
    with table.batch_writer() as batch:
        for n in range(pages):
            path = f"/fs/d{n % 100:02d}/p{n:05d}.md"
            text = f"---\ntype: Concept\ntitle: Page {n}\n---\n[next](p{n + 100:05d}.md) [up](/fs/index.md)\n"
            batch.put_item(
                Item={
                    "pk": "PAGE#falcon",
                    "sk": path,
                    "version": f"sha256:{n:064x}",
                    "size_bytes": len(text),
                    "last_write_by": "human",
                    "last_write_at": "2026-11-30T00:00:00Z",
                    "meta": json.dumps(describe(path, text), separators=(",", ":")),
                }
            )


def measure() -> list[dict[str, Any]]:
    template = Template()
    rows: list[dict[str, Any]] = []
    with emulated("PagesFunction", with_forager=False) as (rt, _):
        rt.projects.create("falcon", "colony")
        route = next(r for r in template.routes() if r.function == "PagesFunction")
        handler = load_handler(route.handler_dir, route.handler, "lambda_PagesFunction")

        def call(method: str, path: str, resource: str, **extra: Any) -> Callable[[], Any]:
            headers = {**BEARER, **extra.pop("headers", {})}
            event = rest_event(method, path, resource=resource, headers=headers, **extra)

            def invoke() -> Any:
                response = handler(event, FakeLambdaContext("PagesFunction"))
                assert response["statusCode"] == 200, response["body"]
                return response

            return invoke

        greedy = f"{KB.replace('falcon', '{id}')}/pages/{{path+}}"
        cases = [
            (
                "PUT kb/pages/{path} (2 KiB, JSON)",
                lambda i: call(
                    "PUT",
                    f"{KB}/pages/svc/p{i % 20}.md",
                    greedy,
                    headers={"Content-Type": "application/json"},
                    body=json.dumps({"content": PAGE + str(i)}),
                ),
            ),
            ("GET kb/pages/{path}", lambda i: call("GET", f"{KB}/pages/svc/p{i % 20}.md", greedy)),
        ]
        for name, make in cases:
            samples: list[float] = []
            with aws_calls() as calls:
                for i in range(ITERATIONS):
                    invoke = make(i)
                    start = time.perf_counter()
                    invoke()
                    samples.append((time.perf_counter() - start) * 1000)
            rows.append(_row(name, samples, dict(calls), ITERATIONS))

        _seed(rt, WRITE_BASE_PAGES)  # a PUT reads its own link targets, not the base
        name = f"PUT kb/pages/{{path}} (2 KiB, JSON, into a {WRITE_BASE_PAGES:,}-page base)"
        put = cases[0][1]
        samples = []
        with aws_calls() as calls:
            for i in range(WRITE_ITERATIONS):
                invoke = put(ITERATIONS + i)
                start = time.perf_counter()
                invoke()
                samples.append((time.perf_counter() - start) * 1000)
        rows.append(_row(name, samples, dict(calls), WRITE_ITERATIONS))

        _seed(rt, BASE_PAGES)
        for name, path in (("GET kb/lint", "/lint"), ("GET kb/stats", "/stats")):
            resource = f"{KB.replace('falcon', '{id}')}{path}"
            invoke = call("GET", f"{KB}{path}", resource)
            cold: list[float] = []
            cached: list[float] = []
            forget_walks()
            start = time.perf_counter()
            invoke()  # the walk: every head of the base read from the emulator
            cold.append((time.perf_counter() - start) * 1000)
            for _ in range(5):  # within ten seconds and no write between: the kept walk
                start = time.perf_counter()
                invoke()
                cached.append((time.perf_counter() - start) * 1000)
            rows.append(_row(f"{name} ({BASE_PAGES} pages, cold walk)", cold, {}, 1))
            rows.append(_row(f"{name} ({BASE_PAGES} pages, cached walk)", cached, {}, 1))
    return rows


if __name__ == "__main__":
    for row in measure():
        print(row)
