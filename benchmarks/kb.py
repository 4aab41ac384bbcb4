"""The ``kb`` command against the local stack: export and import of a 200- and a 2,000-page base.

The stack is ``python -m devstack`` in its own process (as the e2e tier starts it); a
fresh project and the human admin's token. The 2,000-page base is seeded straight into the
page store (each page's bytes in the archive bucket and its head, as ``benchmarks/pages.py``
seeds heads): 2,000 PUTs through the hub were quadratic when each write walked every head
of the base, and seeding stays the quicker way to a 2,000-page base (see docs/benchmarks.md).
Measured, each with its seconds, the HTTP requests the command made to the hub (and how many
of them waited out the archive's build: ``409 not_ready``) and the peak of the memory Python
allocated while it ran (``tracemalloc``): the export of each base through its archive (the
200-page one also one read a page, ``--per-page``, for comparison), an import of the exported
folder that changes nothing, an import after 20 pages were edited and 20 added in the folder
(writes 8 at once), the same import of 40 new pages one write at a time and 8 at a time, and an
import with ``--prune`` after 20 were removed. The machine's load average is read beside each row.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3

from kb import sync
from kb.hub import Config, Hub
from knowledge_service.domain.pages.describe import describe
from knowledge_service.storage.page_store import version_of
from tests.localstack import LocalStack, launch_stack

PAGES = 2000
SMALL = 200
DIRECTORIES = 40


def _page(n: int) -> str:
    return (
        f"---\ntype: Concept\ntitle: Page {n}\n---\n# Page {n}\n\n"
        f"[next](p{(n + DIRECTORIES) % PAGES:05d}.md) [home](/fs/index.md)\n" + "x" * 1000 + "\n"
    )


def _base(size: int = PAGES) -> dict[str, str]:
    links = " ".join(f"[d{d:02d}](d{d:02d}/index.md)" for d in range(DIRECTORIES))
    pages = {
        "/fs/index.md": f"---\nokf_version: 1\ntitle: Home\n---\n# Home\n{links} [log](log.md)\n",
        "/fs/log.md": "---\ntype: Reference\n---\n# Log\n",
    }
    for n in range(size - 2):
        pages[f"/fs/d{n % DIRECTORIES:02d}/p{n:05d}.md"] = _page(n)
    return pages


def _seed(stack: LocalStack, project: str, size: int = PAGES) -> None:
    env = stack.env
    options: dict[str, Any] = {
        "endpoint_url": env["AWS_ENDPOINT_URL"],
        "region_name": "us-east-1",
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
    }
    dynamodb = boto3.resource("dynamodb", **options)
    s3 = boto3.client("s3", **options)
    with dynamodb.Table(env["PAGES_TABLE"]).batch_writer() as batch:
        for path, text in _base(size).items():
            data = text.encode("utf-8")
            version = version_of(data)
            s3.put_object(
                Bucket=env["ARCHIVE_BUCKET"], Key=f"pages/{project}/{version.removeprefix('sha256:')}", Body=data
            )
            batch.put_item(Item={"pk": f"VER#{project}", "sk": version, "size_bytes": len(data)})
            batch.put_item(
                Item={
                    "pk": f"PAGE#{project}",
                    "sk": path,
                    "version": version,
                    "size_bytes": len(data),
                    "last_write_by": "human",
                    "last_write_at": "2026-11-30T00:00:00Z",
                    "meta": json.dumps(describe(path, text), separators=(",", ":")),
                }
            )


def _timed(name: str, config: Config, run: Callable[[Hub], int], pages: int = PAGES) -> dict[str, Any]:
    with Hub(config) as hub:
        sink = io.StringIO()
        tracemalloc.start()
        started = time.perf_counter()
        try:
            errors = io.StringIO()
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(errors):
                code = run(hub)
            seconds = time.perf_counter() - started
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        return {
            "exit": code,
            "step": name,
            "pages": pages,
            "seconds": round(seconds, 2),
            "http_requests": hub.requests,
            "not_ready_polls": hub.polls,
            "peak_mib": round(peak / 2**20, 1),
            "load_1m": round(os.getloadavg()[0], 1),
            "summary": sink.getvalue().splitlines()[-1] if name.startswith("import") else "",
        }


def _in_flight(n: int, run: Callable[[Hub], int]) -> Callable[[Hub], int]:
    def limited(hub: Hub) -> int:
        kept, sync.IN_FLIGHT = sync.IN_FLIGHT, n
        try:
            return run(hub)
        finally:
            sync.IN_FLIGHT = kept

    return limited


def _new_pages(out: Path, first: int, count: int) -> None:
    for n in range(first, first + count):
        (out / f"d{n % DIRECTORIES:02d}" / f"new{n:04d}.md").write_text(_page(PAGES + n))


def measure() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "stack").mkdir()
        with launch_stack(root / "stack") as stack:
            rows = []
            for project, size in (("kbsmall", SMALL), ("kbbench", PAGES)):
                stack.admin("project", "create", project, "--organization", "colony")
                stack.admin("principal", "grant", "local-admin", f"--role={project}=admin")
                _seed(stack, project, size)
            small = Config(stack.url, stack.admin_token, "kbsmall")
            rows.append(
                _timed(
                    "export --per-page: 200",
                    small,
                    lambda hub: sync.export(hub, root / "small-pp", False, per_page=True),
                    SMALL,
                )
            )
            rows.append(_timed("export: 200 pages", small, lambda hub: sync.export(hub, root / "small", False), SMALL))
            config = Config(stack.url, stack.admin_token, "kbbench")
            out = root / "out"
            rows.append(_timed("export: 2,000 pages", config, lambda hub: sync.export(hub, out, False)))
            rows.append(_timed("import: nothing changed", config, lambda hub: sync.import_(hub, out, False, False)))
            for n in range(20):
                page = out / f"d{n % DIRECTORIES:02d}" / f"p{n:05d}.md"
                page.write_text(page.read_text() + "edited\n")
            _new_pages(out, 0, 20)
            rows.append(_timed("import: 20 upd., 20 new", config, lambda hub: sync.import_(hub, out, False, False)))
            _new_pages(out, 100, 40)
            one = _in_flight(1, lambda hub: sync.import_(hub, out, False, False))
            rows.append(_timed("import: 40 new, 1 at once", config, one))
            _new_pages(out, 200, 40)
            rows.append(_timed("import: 40 new, 8 at once", config, lambda hub: sync.import_(hub, out, False, False)))
            for n in range(20, 40):
                (out / f"d{n % DIRECTORIES:02d}" / f"p{n:05d}.md").unlink()
            rows.append(_timed("import --prune: 20 deletes", config, lambda hub: sync.import_(hub, out, True, False)))
    return rows


if __name__ == "__main__":
    for row in measure():
        print(row)
