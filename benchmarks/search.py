"""Page search: what a write costs the index (requests and time) on a 100-page and on a
10,000-page base, a query's p50/p99 at 10,000 pages, and the time from a write's answer to
the page being found.

In-process: moto for AWS (tables and buckets from template.yaml), the pages function's own
handler with an admin principal. moto backs up each table a transaction touches with a deep copy
of the whole table, once per item of the transaction (``DynamoDBBackend.transact_write_items``):
an emulator cost that grows with the base (a page write on a 10,000-page table spends seconds
copying it) and that DynamoDB does not have, so this benchmark keeps moto from copying tables
(:func:`_no_table_backups`; the writes measured here never fail, so the backup is never used).
The 100-page base is written through the handler; the 10,000-page base's search rows are
seeded straight into the table and folded into a snapshot by the compactor (what a long-lived
base looks like), so a query reads a snapshot of 10,000 pages from S3 once (its first, cold,
call) and the overlay of the rows written since.
"""

from __future__ import annotations

import copy
import json
import random
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any
from unittest import mock

import boto3

from benchmarks.emulator import BEARER, emulated
from devstack.events import rest_event
from devstack.lambdas import FakeLambdaContext, load_handler
from devstack.metering import aws_calls
from devstack.template import Template
from knowledge_service.domain.pages import page_search
from knowledge_service.domain.pages.describe import describe
from knowledge_service.domain.pages.page_search import PageSearch
from knowledge_service.domain.pages.search import parse_query, search_row
from knowledge_service.runtime import Runtime
from knowledge_service.storage.page_store import version_of

SMALL = 100
LARGE = 10_000
WRITES = 30
QUERIES = 200
KB = "/api/v1/projects/falcon/kb"
_RANDOM = random.Random(7)  # noqa: S311 - a fixed corpus, nothing secret
VOCABULARY = [f"w{n:04d}" for n in range(3000)] + ["caddy", "deploy", "harbour", "lighthouse", "runbook"]


def _text(n: int, words: int = 150) -> str:
    body = " ".join(_RANDOM.choice(VOCABULARY) for _ in range(words))
    tags = ", ".join(_RANDOM.sample(["ops", "web", "docs", "infra", "team"], 2))
    return (
        f"---\ntype: Concept\ntitle: Page {n} {_RANDOM.choice(VOCABULARY)}\ntags: [{tags}]\n---\n# Page {n}\n\n{body}\n"
    )


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _row(name: str, samples: list[float], calls: dict[str, int], n: int) -> dict[str, Any]:
    return {
        "case": name,
        "iterations": len(samples),
        "p50_ms": round(statistics.median(samples), 2),
        "p99_ms": round(_percentile(samples, 0.99), 2),
        "dynamodb_per_call": round(sum(v for k, v in calls.items() if k.startswith("dynamodb:")) / n, 2),
        "s3_per_call": round(sum(v for k, v in calls.items() if k.startswith("s3:")) / n, 2),
        "requests": {k: round(v / n, 2) for k, v in sorted(calls.items())},
    }


def _seed_rows(rt: Runtime, first: int, last: int) -> None:
    """Pages ``first``..``last - 1``: their heads and search rows, straight into the table."""
    with rt.pages.table.batch_writer() as batch:
        for n in range(first, last):
            path = f"/fs/d{n % 100:02d}/p{n:05d}.md"
            text = _text(n)
            version = version_of(text.encode())
            meta = describe(path, text)
            batch.put_item(
                Item={
                    "pk": "PAGE#falcon",
                    "sk": path,
                    "version": version,
                    "size_bytes": len(text),
                    "last_write_by": "human",
                    "last_write_at": "2026-11-30T00:00:00Z",
                    "meta": json.dumps(meta, separators=(",", ":")),
                }
            )
            batch.put_item(Item={"pk": "SROW#falcon", "sk": path, **search_row(path, text, meta, version).item()})
            batch.put_item(Item={"pk": "SCHG#falcon", "sk": f"{n:017d}-seed", "path": path})


@contextmanager
def _no_table_backups() -> Iterator[None]:
    """moto's transaction backup without the whole-table copies (every other copy kept)."""
    from moto.dynamodb import models
    from moto.dynamodb.models.table import Table

    real = copy.deepcopy

    def deepcopy(value: Any, memo: Any = None) -> Any:
        return value if isinstance(value, Table) else real(value, memo)

    with mock.patch.object(models, "copy", SimpleNamespace(deepcopy=deepcopy)):
        yield


def measure() -> list[dict[str, Any]]:
    template = Template()
    rows: list[dict[str, Any]] = []
    with emulated("PagesFunction", with_forager=False) as (rt, _), _no_table_backups():
        rt.projects.create("falcon", "colony")
        page_search._OPEN.clear()
        route = next(r for r in template.routes() if r.function == "PagesFunction")
        handler = load_handler(route.handler_dir, route.handler, "lambda_PagesFunction")
        greedy = f"{KB.replace('falcon', '{id}')}/pages/{{path+}}"
        searched = f"{KB.replace('falcon', '{id}')}/search"

        def put(path: str, text: str) -> Callable[[], Any]:
            event = rest_event(
                "PUT",
                f"{KB}/pages/{path}",
                resource=greedy,
                headers={**BEARER, "Content-Type": "application/json"},
                body=json.dumps({"content": text}),
            )
            return lambda: handler(event, FakeLambdaContext("PagesFunction"))

        def search(q: str) -> Callable[[], dict[str, Any]]:
            event = rest_event("GET", f"{KB}/search", resource=searched, headers=BEARER, query={"q": q})

            def call() -> dict[str, Any]:
                response = handler(event, FakeLambdaContext("PagesFunction"))
                assert response["statusCode"] == 200, response["body"]
                return json.loads(response["body"])  # type: ignore[no-any-return]

            return call

        def writes(label: str) -> None:
            samples: list[float] = []
            with aws_calls() as calls:
                for i in range(WRITES):
                    invoke = put(f"bench/w{i % 10}.md", _text(900_000 + i))
                    start = time.perf_counter()
                    answer = invoke()
                    samples.append((time.perf_counter() - start) * 1000)
                    assert answer["statusCode"] == 200, answer["body"]
            rows.append(_row(f"PUT kb/pages/{{path}} ({label})", samples, dict(calls), WRITES))

        for n in range(SMALL):
            assert put(f"d{n % 100:02d}/p{n:05d}.md", _text(n))()["statusCode"] == 200
        writes(f"{SMALL}-page base")

        _seed_rows(rt, SMALL, LARGE)
        start = time.perf_counter()
        done = PageSearch(rt.search, "falcon").compact(force=True, now=time.time() + 120)
        compaction_ms = (time.perf_counter() - start) * 1000
        pointer = rt.search.pointer("falcon")
        assert pointer is not None
        size = boto3.client("s3").head_object(Bucket=rt.env.archive_bucket, Key=pointer.key)["ContentLength"]
        rows.append(
            {
                **_row(f"compaction ({LARGE:,} rows, force)", [compaction_ms], {}, 1),
                "rows": done.get("rows"),
                "snapshot_bytes": size,
            }
        )
        writes(f"{LARGE:,}-page base")

        rows += _queries(search)
        rows.append(_engine(rt))
        rows.append(_found_after(put, search))
    return rows


Call = Callable[[], Any]
Search = Callable[[str], Callable[[], dict[str, Any]]]


def _queries(search: Search) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    queries = [_RANDOM.choice(VOCABULARY) for _ in range(QUERIES)]
    page_search._OPEN.clear()
    cold_start = time.perf_counter()
    search("caddy")()
    cold_ms = (time.perf_counter() - cold_start) * 1000
    rows.append(_row(f"GET kb/search ({LARGE:,} pages, cold: snapshot downloaded)", [cold_ms], {}, 1))
    samples = []
    with aws_calls() as calls:
        for q in queries:
            invoke = search(q)
            start = time.perf_counter()
            invoke()
            samples.append((time.perf_counter() - start) * 1000)
    rows.append(_row(f"GET kb/search ({LARGE:,} pages, warm, one word)", samples, dict(calls), QUERIES))
    return rows


def _engine(rt: Runtime) -> dict[str, Any]:
    """The index alone: the snapshot and the overlay in SQLite, no request (what a query spends
    beyond its four store requests)."""
    finder = PageSearch(rt.search, "falcon")
    snapshot = rt.search.pointer("falcon")
    index = finder._index(snapshot)
    assert index is not None
    overlay, _ = finder.overlay(snapshot.watermark if snapshot else "")
    samples = []
    for _ in range(QUERIES):
        query = parse_query(_RANDOM.choice(VOCABULARY))
        start = time.perf_counter()
        index.search(query, overlay)
        samples.append((time.perf_counter() - start) * 1000)
    return {**_row(f"the index alone ({LARGE:,} pages, {len(overlay)}-row overlay)", samples, {}, 1)}


def _found_after(put: Callable[[str, str], Call], search: Search) -> dict[str, Any]:
    found_after: list[float] = []
    queries = 0
    for i in range(20):
        marker = f"fresh{i:03d}"
        put(f"bench/new{i}.md", _text(950_000 + i, 50) + f"\n{marker}\n")()
        answered = time.perf_counter()
        queries += 1
        while not search(marker)()["hits"]:
            queries += 1
        found_after.append((time.perf_counter() - answered) * 1000)
    return {**_row(f"write answered -> found ({LARGE:,} pages)", found_after, {}, 1), "queries": queries}


def report(rows: list[dict[str, Any]]) -> None:
    print("\nPage search (warm pages handler, moto in-process; FTS5 snapshot + overlay)")
    print(f"{'case':<58}{'n':>5}{'p50 ms':>10}{'p99 ms':>10}{'DynamoDB':>10}{'S3':>6}")
    for row in rows:
        print(
            f"{row['case']:<58}{row['iterations']:>5}{row['p50_ms']:>10}{row['p99_ms']:>10}"
            f"{row['dynamodb_per_call']:>10}{row['s3_per_call']:>6}"
        )


if __name__ == "__main__":
    measured = measure()
    report(measured)
    print(json.dumps(measured, indent=1))
