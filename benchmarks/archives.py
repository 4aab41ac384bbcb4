"""The local engine's export archives (issue 40): build time and MB/s for each format against
the archive library alone writing the same members.

A base of real size: the markdown corpus ``benchmarks/engine.py`` writes (1.5 MB, about 18,000
statements, from a fixed seed), ingested by path through the engine's API. Then, for each format,
twice (default options, and ``include_sources`` + ``include_chunks``), each time the best of three:

- **export**: ``POST /api/projects/{ref}/exports`` read until ``completed`` over HTTP every 20 ms
  (``build_seconds`` 0): the whole build as a client waits for it — the read under the lock, the render, the write with
  its SHA-256, the completion on the feed;
- its parts, timed in-process on the same store: **read** (``records.fetch`` under the engine's
  lock — **lock**, how long other requests wait — then ``records.assemble``), **render**
  (``archives.render``) and **write** (``archives.write``: deterministic headers, hashing every byte);
- **library**: the same rendered members written by the library with its defaults and nothing else
  (``zipfile.ZipFile.writestr``, ``gzip.open(...).write``, ``tarfile.open("w:gz").addfile``), no hash:
  the floor of the write.

And the padding (the control port's ``padding_bytes``, 256 MiB by default, ``BENCH_PADDING_BYTES``):
an export of an empty base carrying it, against the same number of bytes written to a file with
``open().write`` (no hash, no framing).

``uv run python -m benchmarks.archives`` prints the table; ``make bench`` runs it.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from benchmarks.engine import MB, TOKEN, Client, markdown_folder
from local_engine.double import start_double
from local_engine.exports import archives, jobs as sim_exports, records, streams
from local_engine.exports.members import Member

FORMATS = ("obsidian", "jsonl", "anthill")
OPTION_SETS: dict[str, dict[str, Any]] = {
    "default": {},
    "sources+chunks": {"include_sources": True, "include_chunks": True},
}
PADDING_BYTES = 256 * MB
ROUNDS = 3
POLL_SECONDS = 0.02


def _library(fmt: str, members: list[Member], path: Path) -> float:
    """The same members written by the library alone, with its defaults (no hash, no fixed times)."""
    started = time.perf_counter()
    if fmt == "obsidian":
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=streams.LEVEL) as vault:
            for member in members:
                vault.writestr(member.name, member.data)
    elif fmt == "jsonl":
        with gzip.open(path, "wb", compresslevel=streams.LEVEL) as stream:
            for member in members:
                stream.write(member.data)
    else:
        with tarfile.open(path, "w:gz", compresslevel=streams.LEVEL) as package:
            for member in members:
                info = tarfile.TarInfo(member.name)
                info.size = len(member.data)
                package.addfile(info, io.BytesIO(member.data))
    return time.perf_counter() - started


def _over_http(client: Client, ref: str, fmt: str, options: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    row: dict[str, Any] = client.post(f"/api/projects/{ref}/exports", {"format": fmt, "options": options})
    while row["status"] == "running":
        time.sleep(POLL_SECONDS)
        row = client.http.get(f"/api/exports/{row['export_id']}").json()
    seconds = time.perf_counter() - started
    assert row["status"] == "completed", row
    return seconds, row


def _row(client: Client, engine: Any, ref: str, fmt: str, label: str, scratch: Path) -> dict[str, Any]:
    """One format and option set; each time the best of ``ROUNDS`` (the machine is shared)."""
    options = OPTION_SETS[label]
    times: dict[str, list[float]] = {"export": [], "fetch": [], "read": [], "render": [], "write": [], "library": []}
    for _ in range(ROUNDS):
        seconds, exported = _over_http(client, ref, fmt, options)
        times["export"].append(seconds)
        started = time.perf_counter()
        rows = records.fetch(engine.state.store, ref, options)
        times["fetch"].append(time.perf_counter() - started)
        base = records.assemble(ref, "bench", rows, options)
        times["read"].append(time.perf_counter() - started)
        revision = {"id": "krev_bench"} if fmt == "anthill" else None
        started = time.perf_counter()
        members = archives.render(fmt, base, options, revision)
        times["render"].append(time.perf_counter() - started)
        started = time.perf_counter()
        written = archives.write(fmt, members, scratch / f"ours-{fmt}-{label}")
        times["write"].append(time.perf_counter() - started)
        times["library"].append(_library(fmt, members, scratch / f"library-{fmt}-{label}"))
    seconds, fetch, read, render, write, library = (min(times[k]) for k in times)
    library_bytes = (scratch / f"library-{fmt}-{label}").stat().st_size
    size = int(exported["size_bytes"])
    return {
        "format": fmt,
        "options": label,
        "members": len(members),
        "statements": exported["stats"]["statements"],
        "archive_bytes": size,
        "export_seconds": round(seconds, 3),
        "export_mb_per_second": round(size / MB / seconds, 1),
        "read_seconds": round(read, 3),
        "lock_seconds": round(fetch, 3),
        "render_seconds": round(render, 3),
        "write_seconds": round(write, 3),
        "write_mb_per_second": round(written.size / MB / write, 1),
        "library_seconds": round(library, 3),
        "library_bytes": library_bytes,
        "library_mb_per_second": round(library_bytes / MB / library, 1),
        "write_over_library": round(write / library, 2),
        "export_over_library": round(seconds / library, 2),
    }


def _padding(client: Client, engine: Any, ref: str, fmt: str, size: int, scratch: Path) -> dict[str, Any]:
    book = sim_exports.book(engine.state)
    book.padding_bytes = size
    try:
        seconds, row = _over_http(client, ref, fmt, {})
    finally:
        book.padding_bytes = 0
    book.get(row["export_id"]).path.unlink()  # type: ignore[union-attr]
    plain = scratch / f"plain-{fmt}"
    started = time.perf_counter()
    with plain.open("wb") as handle:
        for piece in streams.fill(int(row["size_bytes"])):
            handle.write(piece)
    floor = time.perf_counter() - started
    plain.unlink()
    return {
        "format": fmt,
        "padding_bytes": size,
        "archive_bytes": row["size_bytes"],
        "export_seconds": round(seconds, 2),
        "export_mb_per_second": round(row["size_bytes"] / MB / seconds, 1),
        "plain_write_seconds": round(floor, 2),
        "over_plain_write": round(seconds / floor, 2),
    }


def measure() -> dict[str, Any]:
    padding = int(os.environ.get("BENCH_PADDING_BYTES", str(PADDING_BYTES)))
    with tempfile.TemporaryDirectory(prefix="bench-archives-") as scratch_name:
        scratch = Path(scratch_name)
        with start_double(port=0, control_port=0, token=TOKEN, data_dir=scratch / "data") as engine:
            sim_exports.book(engine.state).build_seconds = 0.0
            client = Client(engine.url)
            ref = client.base("archives")
            job = client.ingest(ref, markdown_folder(scratch / "md", int(1.5 * MB)))
            assert job["status"] == "completed", job
            rows = [_row(client, engine, ref, fmt, label, scratch) for label in OPTION_SETS for fmt in FORMATS]
            empty = client.base("padding only")
            padded = [_padding(client, engine, empty, fmt, padding, scratch) for fmt in FORMATS]
    return {"rows": rows, "padding": padded, "load": [round(x, 2) for x in os.getloadavg()]}


def report(result: dict[str, Any]) -> None:
    load = " ".join(str(x) for x in result["load"])
    print(f"\nExport archives: a 1.5 MB markdown base through each format (load average {load} at the end)")
    print(
        f"{'format':<10}{'options':<16}{'statements':>11}{'members':>8}{'MB':>7}{'export s':>10}{'MB/s':>7}"
        f"{'read':>7}{'lock':>7}{'render':>8}{'write':>7}{'library':>9}{'write×':>8}{'export×':>9}"
    )
    for row in result["rows"]:
        print(
            f"{row['format']:<10}{row['options']:<16}{row['statements']:>11}{row['members']:>8}"
            f"{row['archive_bytes'] / MB:>7.2f}{row['export_seconds']:>10}{row['export_mb_per_second']:>7}"
            f"{row['read_seconds']:>7}{row['lock_seconds']:>7}{row['render_seconds']:>8}{row['write_seconds']:>7}{row['library_seconds']:>9}"
            f"{row['write_over_library']:>8}{row['export_over_library']:>9}"
        )
    print(f"{'format':<10}{'padding MiB':>12}{'export s':>10}{'MB/s':>8}{'open().write s':>16}{'×':>6}")
    for row in result["padding"]:
        print(
            f"{row['format']:<10}{row['padding_bytes'] // MB:>12}{row['export_seconds']:>10}"
            f"{row['export_mb_per_second']:>8}{row['plain_write_seconds']:>16}{row['over_plain_write']:>6}"
        )


if __name__ == "__main__":
    outcome = measure()
    report(outcome)
    print(json.dumps(outcome))
