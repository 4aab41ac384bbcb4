"""The API while the engine works (issue 56): a job's poll and ``GET /knowledge/status``, p50 and
p99 through the local stack, on an idle engine and during a large import by path.

The engine is a process of its own under the stack (``devstack/supervisor.py``), so an import
competes with the API for the machine's cores, never for one interpreter. ``python -m benchmarks
--only responsiveness`` runs it alone (``--megabytes`` for the import's size: 100 by default).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks import engine
from benchmarks.load import local_stack

MEGABYTES = 100
IDLE_SAMPLES = 60
MB = 1024 * 1024


def _timed(client: httpx.Client, path: str) -> float:
    started = time.perf_counter()
    answer = client.get(path, params={"project": "falcon"})
    answer.raise_for_status()
    return (time.perf_counter() - started) * 1000


def _job(client: httpx.Client, paths: list[str]) -> str:
    answer = client.post("/knowledge/jobs", params={"project": "falcon"}, json={"paths": paths})
    answer.raise_for_status()
    return str(answer.json()["data"]["job_id"])


def _terminal(client: httpx.Client, job_id: str) -> bool:
    data = client.get(f"/knowledge/jobs/{job_id}", params={"project": "falcon"}).json()["data"]
    return bool(data["terminal"])


def _sample(client: httpx.Client, job_id: str, until: Any) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"job poll": [], "status": []}
    while not until(samples):
        samples["job poll"].append(_timed(client, f"/knowledge/jobs/{job_id}"))
        samples["status"].append(_timed(client, "/knowledge/status"))
    return samples


def measure(megabytes: int = MEGABYTES) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="bench-responsive-"))
    workspace = scratch / "workspace"
    (workspace / "small").mkdir(parents=True)
    (workspace / "small" / "note.md").write_text("# Note\n\nThe tide turns at noon on Saturdays.\n")
    engine.mixed_folder(workspace / "large", megabytes * MB)
    rows: list[dict[str, Any]] = []
    with local_stack(workspace=workspace) as running:
        client = httpx.Client(
            base_url=running.url, headers={"Authorization": f"Bearer {running.admin_token}"}, timeout=60.0
        )
        small = _job(client, ["small"])
        while not _terminal(client, small):
            time.sleep(0.1)
        idle = _sample(client, small, lambda s: len(s["status"]) >= IDLE_SAMPLES)
        started = time.monotonic()
        large = _job(client, ["large"])
        busy = _sample(client, large, lambda s: _terminal(client, large))
        seconds = time.monotonic() - started
        for phase, samples in (("idle", idle), (f"during a {megabytes} MB import", busy)):
            for route, values in samples.items():
                p50, p99 = engine.percentiles(values)
                rows.append({"phase": phase, "route": route, "n": len(values), "p50_ms": p50, "p99_ms": p99})
    return {"megabytes": megabytes, "import_seconds": round(seconds, 1), "rows": rows}


def report(result: dict[str, Any]) -> None:
    print(f"\nThe API while the engine works (a {result['megabytes']} MB import took {result['import_seconds']} s)")
    print(f"{'phase':<28}{'route':<10}{'n':>6}{'p50 ms':>9}{'p99 ms':>9}")
    for row in result["rows"]:
        print(f"{row['phase']:<28}{row['route']:<10}{row['n']:>6}{row['p50_ms']:>9}{row['p99_ms']:>9}")
