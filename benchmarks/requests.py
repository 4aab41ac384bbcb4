"""Per route: p50/p99 handler latency, and the DynamoDB, S3, other AWS and FORAGER calls
one request makes, counted exactly: every ``/knowledge`` route, and the pages and verbs
routes a caller makes most (a page's GET, PUT and DELETE, the listing; a read verb and a
write verb), each through its own function's handler (``measure_doors``).

AWS is moto in-process (tables from template.yaml) and FORAGER is the simulator on
loopback; every botocore API call is counted at ``BaseClient._make_api_call`` and every
FORAGER call by the simulator's request log. The counts are deterministic: they are what
a reviewer can hold the code to.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from benchmarks.emulator import ADMIN, BEARER, emulated
from devstack.events import rest_event
from devstack.lambdas import FakeLambdaContext, load_handler
from devstack.metering import aws_calls
from devstack.samples import request_for
from devstack.template import ROOT, Template
from knowledge_service.edge.catalog import knowledge_routes
from knowledge_service.identity.principal import ProjectRole

PAGE_ROUTE = "/api/v1/projects/{id}/kb/pages/{path+}"
PAGE = "/api/v1/projects/falcon/kb/pages/bench/page.md"

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
    return rows + measure_doors(iterations)


EventFor = Callable[[int], dict[str, Any]]
"""A route's request for call ``n`` (a write writes new bytes each call, as writers do)."""


def _page_put(n: int, page: str = PAGE) -> dict[str, Any]:
    body = json.dumps({"content": f"---\ntype: Runbook\n---\n# Deploy {page}, edition {n}\n"})
    return rest_event(
        "PUT", page, resource=PAGE_ROUTE, headers={"Content-Type": "application/json", **BEARER}, body=body
    )


def _page_get(_: int) -> dict[str, Any]:
    return rest_event("GET", PAGE, resource=PAGE_ROUTE, headers=BEARER)


def _page_delete(n: int) -> dict[str, Any]:
    return rest_event("DELETE", f"{PAGE.removesuffix('.md')}-{n}.md", resource=PAGE_ROUTE, headers=BEARER)


def _listing(_: int) -> dict[str, Any]:
    return rest_event(
        "GET", "/api/v1/projects/falcon/kb/pages", resource="/api/v1/projects/{id}/kb/pages", headers=BEARER
    )


def _verb(name: str, body: dict[str, Any]) -> EventFor:
    def event(_: int) -> dict[str, Any]:
        return rest_event(
            "POST",
            f"/v/{name}",
            resource=f"/v/{name}",
            query={"workspace": "falcon"},
            headers={"Content-Type": "application/json", **BEARER},
            body=json.dumps(body),
        )

    return event


PAGES_ROUTES: list[tuple[str, EventFor]] = [
    ("GET /api/v1/projects/{id}/kb/pages/{path} (a page)", _page_get),
    ("PUT /api/v1/projects/{id}/kb/pages/{path} (new bytes)", _page_put),
    ("DELETE /api/v1/projects/{id}/kb/pages/{path}", _page_delete),
    ("GET /api/v1/projects/{id}/kb/pages (listing)", _listing),
]
VERBS_ROUTES: list[tuple[str, EventFor]] = [
    ("POST /v/knowledge.list", _verb("knowledge.list", {})),
    ("POST /v/capture.create", _verb("capture.create", {"body": "Field notes.", "title": "notes"})),
]


def measure_doors(iterations: int = ITERATIONS) -> list[dict[str, object]]:
    """The pages and verbs routes: each through its own function's handler (its environment,
    tables from template.yaml), counted on one warm call, timed over ``iterations``."""
    rows = []
    for function, routes in (("PagesFunction", PAGES_ROUTES), ("VerbsFunction", VERBS_ROUTES)):
        route = next(r for r in Template().routes() if r.function == function)
        with emulated(function, with_forager=False) as (rt, _):
            rt.projects.create("falcon", "colony")
            assert ADMIN.project_roles["falcon"] is ProjectRole.ADMIN  # the admin token of the project
            handler = load_handler(route.handler_dir, route.handler, f"lambda_{function}")
            context = FakeLambdaContext(function)
            if function == "PagesFunction":
                handler(_page_put(-1), context)  # the page the GET reads
                for n in range(iterations + 2):  # the pages the DELETEs remove, one a call
                    handler(_page_put(n, f"{PAGE.removesuffix('.md')}-{n}.md"), context)
            for name, event_for in routes:
                handler(event_for(0), context)  # warm: clients, the first write of the page
                with aws_calls() as counts:
                    response = handler(event_for(1), context)
                row = _row(name, response["statusCode"], counts, 0)
                row["round_trips"] = sum(counts.values())
                rows.append(row)
                if not iterations:  # the counts alone
                    continue
                timings = []
                for n in range(2, iterations + 2):
                    started = time.perf_counter()
                    handler(event_for(n), context)
                    timings.append((time.perf_counter() - started) * 1000)
                row["p50_ms"] = round(statistics.median(timings), 2)
                row["p99_ms"] = round(statistics.quantiles(timings, n=100)[98], 2)
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


def report_doors(rows: list[dict[str, object]]) -> None:
    """The pages and verbs rows as the markdown table docs/benchmarks.md holds."""
    print("| route | status | round trips | AWS calls | p50 ms | p99 ms |")
    print("| --- | ---: | ---: | --- | ---: | ---: |")
    for row in rows:
        calls = row["calls"]
        assert isinstance(calls, dict)
        named = ", ".join(f"{n} {k.split(':', 1)[1]}" for k, n in calls.items())
        print(
            f"| {row['route']} | {row['status']} | {row['round_trips']} | {named} | {row['p50_ms']} | {row['p99_ms']} |"
        )


if __name__ == "__main__":  # python -m benchmarks.requests [--write]: the counts alone, fast
    import sys

    table = counts_table(measure(iterations=0))
    print(table, end="")
    if "--write" in sys.argv[1:]:
        write_documented(table)
