"""The local engine alone: ingestion throughput beside its floor, search and retrieve latency by
size, and memory while a 100 MB batch is ingested.

- **Throughput.** A 1–2 MB folder of markdown and a ≥ 50 MB mixed folder (markdown, text, HTML,
  PDF, DOCX) that this benchmark writes, each imported by path through the API of the engine in a
  process of its own (``python -m local_engine``, as ``make run`` runs it); beside
  it, the **floor** on the same files: the converters alone (the format libraries) plus SQLite
  inserts alone of the same chunk and statement rows and their FTS5 rows. Goal: within 1.5× of it.
  Beside each job, the CPU it took (``/proc``: the engine process, and its worker processes) and
  the two least wall times that CPU allows, each against the floor: all of it spread over the
  machine's cores (when that is over 1.5×, no scheduling of the same work meets the goal), and the
  engine process's alone (the store's one writer, with the work it keeps from its workers today).
- **Latency.** Text and queries draw their words from a 20,000-word lexicon by Zipf's law (as
  text does: a few words everywhere, most rare). Search (`GET …/search`) and retrieve
  (`POST …/retrieve`) over HTTP to the same engine process, p50 and p99 of 200 queries each, at 1k, 10k and
  100k statements. Goal: p50 ≤ 20 ms at 100k with vectors (issue 55; ≤ 10 ms before them).
- **Stages.** The eleven stages run in process on the mixed folder, each timed: entity
  resolution and conflict detection beside extraction and indexing (the generated text names
  people, organizations and projects' dated claims now and then, as documents do).
- **Memory.** The engine in a process of its own ingests a 100 MB folder (100 files of 1 MB),
  by path and POSTed as one upload (streamed from disk by the client), and a quarter of it by
  path; its resident memory is sampled every 50 ms: the peak over the start says what a batch
  costs (files are read one at a time, an upload's body written to disk as it arrives, and a
  source's comparisons hold a bounded few of the base's claims), and flat is the whole batch's
  peak no higher than the quarter's.

The engine runs with ``--workers`` worker processes (default: one per core up to two, what ``make run``
gives it; ``0`` computes in place), and its memory is counted with theirs. ``--no-vectors`` runs it
with ``LOCAL_ENGINE_VECTORS=0`` (no vectors at ``indexing``, search by words alone): the same job
without them, for the side by side (goal: ingestion with vectors within 1.3× of it, and search
and retrieve p50 ≤ 20 ms at 100k with them; docs/ranking.md).

Every text is generated from a fixed seed, so each run measures the same work.
``uv run python -m benchmarks.engine [--quick]`` prints the table; ``make bench`` runs it.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import functools
import io
import itertools
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from knowledge_service.upstream.multipart import FilePart, MultipartBody
from local_engine import default_workers
from local_engine.ingestion import converters, extraction, pipeline
from local_engine.ingestion.workers import Workers
from local_engine.search import vectors as vectors_module
from local_engine.store.database import Store
from tests.localstack import free_port

TOKEN = "bench-engine-token"  # noqa: S105 - a benchmark's own credential
VOCABULARY = (
    "harbour ferry pier tide mooring keeper lighthouse tanker foghorn kayak paddler buoyancy drill capsize "
    "warehouse forklift bay shift supplier parts launch checklist memo steering board desk region churn "
    "quarter review budget invoice contract renewal schedule audit release version engine index chunk"
)
WORDS = VOCABULARY.split()
MB = 1024 * 1024
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
"""The cores this process may run on (and the engine it starts): what the CPU bound spreads over."""


def seeded(seed: int) -> random.Random:
    """The same text every run: a benchmark's generator, not a secret's."""
    return random.Random(seed)  # noqa: S311


SYLLABLES = [consonant + vowel for consonant in "bdklmnrst" for vowel in "aeiou"]


def _vocabulary(size: int = 20_000) -> list[str]:
    """Words as text has them: many, most of them rare (drawn below by Zipf's law, rank r at 1/r)."""
    rng = seeded(11)
    words = dict.fromkeys(WORDS)
    while len(words) < size:
        words["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


LEXICON = _vocabulary()
ZIPF = list(itertools.accumulate(1 / rank for rank in range(1, len(LEXICON) + 1)))


def words(rng: random.Random, count: int) -> list[str]:
    return rng.choices(LEXICON, cum_weights=ZIPF, k=count)


GIVEN = ("Robert", "Bob", "William", "Bill", "Anna", "Maria", "James", "Jim", "Ingrid", "Olga", "Tomas", "Kate")
SURNAMES = [("".join(seeded(n).choice(SYLLABLES) for _ in range(3))).title() for n in range(400)]
ORGANIZATIONS = [f"{name} {kind}" for name in SURNAMES[:60] for kind in ("Robotics", "Logistics")]
PROJECTS = [f"Project {name}" for name in SURNAMES[100:140]]
MONTH_NAMES = ("January", "March", "April", "June", "September", "November")


def sentence(rng: random.Random) -> str:
    """Zipf's words, and as documents have them, now and then a person, an organization, or a
    project's dated claim (the names and dates entity resolution and conflict detection read)."""
    said = " ".join(words(rng, rng.randint(6, 16))).capitalize() + f" {rng.randint(1, 9999)}."
    roll = rng.random()
    if roll < 0.10:
        person = f"{rng.choice(GIVEN)} {rng.choice(SURNAMES)}"
        return f"{person} {said[0].lower()}{said[1:]}"
    if roll < 0.15:
        return f"{rng.choice(ORGANIZATIONS)} confirmed {said[0].lower()}{said[1:]}"
    if roll < 0.18:
        when = f"{rng.choice(MONTH_NAMES)} {rng.randint(1, 28)}, {rng.randint(2025, 2027)}"
        return f"The {rng.choice(WORDS)} date for {rng.choice(PROJECTS)} is {when}."
    return said


def markdown(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    length = 0
    while length < size:
        block = f"## {rng.choice(WORDS).title()} {rng.randint(1, 99)}\n\n" + " ".join(sentence(rng) for _ in range(5))
        parts.append(block)
        length += len(block) + 2
    return "# Notes\n\n" + "\n\n".join(parts) + "\n"


def html(rng: random.Random, size: int) -> str:
    body = "".join(
        f"<h2>{rng.choice(WORDS)}</h2><p>{' '.join(sentence(rng) for _ in range(5))}</p>" for _ in range(size // 600)
    )
    return f"<html><body><h1>Page</h1>{body}</body></html>"


def pdf(rng: random.Random, pages: int) -> bytes:
    from reportlab.lib.pagesizes import A4  # type: ignore[import-untyped]
    from reportlab.pdfgen import canvas  # type: ignore[import-untyped]

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    for _ in range(pages):
        y = 800
        for _ in range(40):
            page.drawString(40, y, sentence(rng)[:95])
            y -= 18
        page.showPage()
    page.save()
    return buffer.getvalue()


def docx_bytes(rng: random.Random, paragraphs: int) -> bytes:
    import docx

    document = docx.Document()
    for n in range(paragraphs):
        if n % 10 == 0:
            document.add_heading(rng.choice(WORDS).title(), level=2)
        document.add_paragraph(" ".join(sentence(rng) for _ in range(4)))
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def markdown_folder(root: Path, total: int, seed: int = 1) -> Path:
    rng = seeded(seed)
    root.mkdir(parents=True, exist_ok=True)
    written, n = 0, 0
    while written < total:
        text = markdown(rng, 8 * 1024)
        (root / f"note-{n:05d}.md").write_text(text)
        written += len(text)
        n += 1
    return root


def mixed_folder(root: Path, total: int, seed: int = 2) -> Path:
    """≥ ``total`` bytes: mostly markdown, text and HTML, with PDFs and DOCX files among them."""
    rng = seeded(seed)
    root.mkdir(parents=True, exist_ok=True)
    written, n = 0, 0
    while written < total:
        kind = n % 10
        if kind < 4:
            data = markdown(rng, 256 * 1024).encode()
            name = f"doc-{n:05d}.md"
        elif kind < 6:
            data = markdown(rng, 256 * 1024).replace("#", "").encode()
            name = f"doc-{n:05d}.txt"
        elif kind < 8:
            data = html(rng, 256 * 1024).encode()
            name = f"doc-{n:05d}.html"
        elif kind == 8:
            data = pdf(rng, 20)
            name = f"doc-{n:05d}.pdf"
        else:
            data = docx_bytes(rng, 200)
            name = f"doc-{n:05d}.docx"
        (root / name).write_bytes(data)
        written += len(data)
        n += 1
    return root


def folder_size(root: Path) -> tuple[int, int]:
    files = [p for p in root.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


class Client:
    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=600)

    def post(self, path: str, body: Any) -> Any:
        answer = self.http.post(path, json=body, headers={"Idempotency-Key": os.urandom(8).hex()})
        answer.raise_for_status()
        return answer.json()

    def base(self, name: str) -> str:
        return str(self.post("/api/projects", {"name": name})["project_ref"])

    def ingest(self, ref: str, folder: Path) -> dict[str, Any]:
        job = self.post(f"/api/projects/{ref}/jobs", {"paths": [str(folder)]})
        while True:
            read: dict[str, Any] = self.http.get(f"/api/projects/{ref}/jobs/{job['job_id']}").json()
            if read["terminal"]:
                return read
            time.sleep(0.05)


def floor_parts(folder: Path) -> dict[str, float]:
    """The issue's floor on the same files, in its parts, each timed alone: ``libraries``, the
    format libraries (the converters, and markdown-it's parse) with the text's normalization;
    ``split``, the engine's own chunks and sentences (its code, not a library: timed apart so the
    floor the issue names, libraries plus SQLite, is not raised by it); ``sqlite``, SQLite alone
    inserting the same chunk and statement rows and their FTS5 rows."""
    parts = {"libraries": 0.0, "split": 0.0, "sqlite": 0.0}
    rows: list[tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]] = []
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        started = time.perf_counter()
        text = extraction.normalize(converters.extract(file.name, file.read_bytes()).text)
        structure = extraction.blocks(text)
        read = time.perf_counter()
        spans = extraction.chunk(text, structure)
        said = extraction.sentences(text, structure, spans)
        parts["libraries"] += read - started
        parts["split"] += time.perf_counter() - read
        rows.append(
            ([(c.start, c.end, text[c.start : c.end]) for c in spans], [(s.start, s.end, s.statement) for s in said])
        )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        db = sqlite3.connect(Path(scratch) / "floor.sqlite3", isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE s (id INTEGER PRIMARY KEY, text TEXT, a INT, b INT)")
        db.execute("CREATE TABLE c (id INTEGER PRIMARY KEY, text TEXT, a INT, b INT)")
        db.execute("CREATE VIRTUAL TABLE fs USING fts5(text, tokenize='porter unicode61')")
        db.execute("CREATE VIRTUAL TABLE fc USING fts5(text, tokenize='porter unicode61')")
        for chunks, statements in rows:
            db.execute("BEGIN")
            db.executemany("INSERT INTO c (a, b, text) VALUES (?, ?, ?)", chunks)
            db.executemany("INSERT INTO s (a, b, text) VALUES (?, ?, ?)", statements)
            db.executemany("INSERT INTO fc (text) VALUES (?)", [(t,) for _, _, t in chunks])
            db.executemany("INSERT INTO fs (text) VALUES (?)", [(t,) for _, _, t in statements])
            db.execute("COMMIT")
        db.close()
    parts["sqlite"] = time.perf_counter() - started
    return parts


TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str]:
    """``/proc/<pid>/stat``'s fields after the command's name (the first is the state)."""
    return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()


def processes_under(pid: int) -> set[int]:
    """Every live process ``pid`` started, and those they started (the engine's workers)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):  # it ended meanwhile
                parents[int(entry.name)] = int(_stat(int(entry.name))[1])
    below, found = [pid], set()
    while below:
        parent = below.pop()
        for child, its_parent in parents.items():
            if its_parent == parent and child not in found:
                found.add(child)
                below.append(child)
    return found


def cpu_seconds(pid: int) -> tuple[float, float]:
    """CPU seconds (user and system) ``pid`` has taken, and those of every process under it: the
    live ones read from ``/proc``, the ended ones from what the kernel added to their parent's
    children's time when it waited for them (a worker pool shut down)."""
    fields = _stat(pid)
    own = (int(fields[11]) + int(fields[12])) / TICKS
    under = (int(fields[13]) + int(fields[14])) / TICKS
    for child in processes_under(pid):  # its own time, and that of the processes it waited for (theirs, once)
        with contextlib.suppress(OSError, IndexError):  # it ended meanwhile: in ``under`` once waited for
            under += sum(int(field) for field in _stat(child)[11:15]) / TICKS
    return own, under


def throughput(client: Client, name: str, folder: Path, pid: int) -> dict[str, Any]:
    """A job of the folder by path, timed, with the CPU the engine (process ``pid``) took for it."""
    size, files = folder_size(folder)
    ref = client.base(name)
    own_before, workers_before = cpu_seconds(pid)
    started = time.perf_counter()
    job = client.ingest(ref, folder)
    seconds = time.perf_counter() - started
    own_after, workers_after = cpu_seconds(pid)
    engine_cpu, workers_cpu = own_after - own_before, workers_after - workers_before
    assert job["status"] == "completed", job
    parts = floor_parts(folder)
    floor = parts["libraries"] + parts["sqlite"]
    with_split = floor + parts["split"]
    return {
        "corpus": name,
        "megabytes": round(size / MB, 1),
        "files": files,
        "statements": job["stages"][7]["processed"],
        "seconds": round(seconds, 2),
        "mb_per_second": round(size / MB / seconds, 2),
        "files_per_second": round(files / seconds, 1),
        "floor_seconds": round(floor, 2),  # the issue's: the libraries alone plus SQLite alone
        "over_floor": round(seconds / floor, 2),
        "floor_parts": {name: round(value, 2) for name, value in parts.items()},
        # the floor every pass before 2026-12-06 reported: the engine's own split timed in it too
        "floor_with_split_seconds": round(with_split, 2),
        "over_floor_with_split": round(seconds / with_split, 2),
        # the CPU the job took, and the least wall time it allows: over every core, and the engine
        # process's (the store's one writer) alone; each against the floor
        "engine_cpu_seconds": round(engine_cpu, 2),
        "workers_cpu_seconds": round(workers_cpu, 2),
        "cores": CORES,
        "cpu_bound_over_floor": round((engine_cpu + workers_cpu) / CORES / floor, 2),
        "writer_bound_over_floor": round(engine_cpu / floor, 2),
    }


def stage_seconds(folder: Path, scratch: Path, workers: int) -> dict[str, Any]:
    """The pipeline's stages in process on the folder, each timed: what entity resolution and
    conflict detection cost beside the rest, on a store of their own."""
    store = Store(scratch / "stages.sqlite3", threading.RLock())
    work = pipeline.Work(
        job_id="job_bench",
        ref="stages",
        kind="paths",
        inputs=[str(folder)],
        force=True,
        workers=Workers(workers),
        vectors=vectors_module.enabled(),  # --no-vectors: as the engines this run starts
    )
    timed: dict[str, float] = {}
    for name, stage in pipeline.STAGE_WORK.items():
        started = time.perf_counter()
        stage(store, work)
        timed[name] = round(time.perf_counter() - started, 2)
    work.workers.close()
    size, files = folder_size(folder)
    counts = {
        table: int(store.value(f"SELECT COUNT(*) FROM {table}") or 0)  # noqa: S608 - our own names
        for table in ("statements", "entities", "mentions", "candidates", "conflicts")
    }
    store.close()
    return {"megabytes": round(size / MB, 1), "files": files, "seconds": timed, **counts}


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return round(statistics.median(ordered), 2), round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2)


def latency(client: Client, statements: int, scratch: Path) -> dict[str, Any]:
    ref = client.base(f"latency-{statements}")
    folder = scratch / f"latency-{statements}"
    rng = seeded(statements)
    folder.mkdir()
    per_file = 500
    for n in range(max(1, statements // per_file)):
        text = "# Notes\n\n" + "\n\n".join(sentence(rng) for _ in range(per_file)) + "\n"
        (folder / f"n-{n:05d}.md").write_text(text)
    job = client.ingest(ref, folder)
    held = job["stages"][7]["processed"]
    searches, retrieves = [], []
    for _ in range(200):
        asked = " ".join(words(rng, 3))  # a person's three words, from the same law as the text's
        started = time.perf_counter()
        client.http.get(f"/api/projects/{ref}/search", params={"q": asked, "limit": 10}).raise_for_status()
        searches.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        client.post(f"/api/projects/{ref}/retrieve", {"query": asked, "top_k": 8})
        retrieves.append((time.perf_counter() - started) * 1000)
    search_p50, search_p99 = percentiles(searches)
    retrieve_p50, retrieve_p99 = percentiles(retrieves)
    return {
        "statements": held,
        "search_p50_ms": search_p50,
        "search_p99_ms": search_p99,
        "retrieve_p50_ms": retrieve_p50,
        "retrieve_p99_ms": retrieve_p99,
    }


def _rss_kib(pid: int) -> int:
    """The resident memory of ``pid`` and of every process under it (the engine's workers), in
    KiB: what the machine gives the engine."""
    total = 0
    for process in {pid, *processes_under(pid)}:
        with contextlib.suppress(OSError):  # it ended meanwhile
            for line in (Path("/proc") / str(process) / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total


def memory(scratch: Path, megabytes: int, workers: int) -> list[dict[str, Any]]:
    """A quarter of the batch by path, then the whole batch by path and as one upload, each into
    an engine process of its own: flat is the whole batch's peak no higher than the quarter's."""
    quarter, whole = scratch / "quarter", scratch / "whole"
    rng = seeded(7)
    quarter.mkdir()
    whole.mkdir()
    for n in range(megabytes):  # a MiB each, exactly: one upload holds 100 MiB of files at most
        text = markdown(rng, MB)[:MB]
        (whole / f"big-{n:04d}.md").write_text(text)
        if n < megabytes // 4:
            (quarter / f"big-{n:04d}.md").write_text(text)
    return [
        _memory_row(
            "by path", scratch / "memory-quarter", megabytes // 4, workers, lambda c, r: _by_path(c, r, quarter)
        ),
        _memory_row("by path", scratch / "memory-paths", megabytes, workers, lambda c, r: _by_path(c, r, whole)),
        _memory_row("one upload", scratch / "memory-upload", megabytes, workers, lambda c, r: _uploaded(c, r, whole)),
    ]


def _by_path(client: Client, ref: str, folder: Path) -> str:
    return str(client.post(f"/api/projects/{ref}/jobs", {"paths": [str(folder)]})["job_id"])


def _uploaded(client: Client, ref: str, folder: Path) -> str:
    """The folder as one ``multipart/form-data`` upload, written by the product's own streamed
    writer: each file read from disk a chunk at a time, so the client holds no batch either."""

    def chunks(path: Path) -> Iterator[bytes]:
        with path.open("rb") as handle:
            while chunk := handle.read(MB):
                yield chunk

    files = sorted(folder.iterdir())
    body = MultipartBody(
        [("force", "false")],
        [FilePart(p.name, p.stat().st_size, functools.partial(chunks, p)) for p in files],
    )
    answer = client.http.post(
        f"/api/projects/{ref}/uploads",
        content=iter(body),
        headers={
            "Content-Type": body.content_type,
            "Content-Length": str(len(body)),
            "Idempotency-Key": os.urandom(8).hex(),
        },
    )
    answer.raise_for_status()
    return str(answer.json()["job_id"])


@contextlib.contextmanager
def engine_process(data: Path, workers: int) -> Iterator[tuple[Client, subprocess.Popen[bytes]]]:
    """``python -m local_engine`` in a process of its own, as ``make run`` runs it (the client's
    requests and polling do not share its interpreter), and a client of it once it answers."""
    port, control = free_port(), free_port()
    command = [sys.executable, "-m", "local_engine", "--port", str(port), "--control-port", str(control)]
    command += ["--data", str(data), "--token", TOKEN, "--quiet", "--workers", str(workers)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = Client(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 30
        while True:
            try:
                client.http.get("/api/status").raise_for_status()
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield client, process
    finally:
        process.terminate()
        process.wait(timeout=120)


def _memory_row(
    route: str, data: Path, megabytes: int, workers: int, submit: Callable[[Client, str], str]
) -> dict[str, Any]:
    """``python -m local_engine`` of its own takes the batch (``submit`` answers the job's id) and
    works it; its resident memory, with its workers', is sampled every 50 ms, while the request
    is in flight and until the job is done (the workers start with the job, so the peak counts
    them whole)."""
    with engine_process(data, workers) as (client, process):
        ref = client.base("memory")
        before = _rss_kib(process.pid)
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            submitted = pool.submit(submit, client, ref)
            request_peak = before
            while not submitted.done():
                request_peak = max(request_peak, _rss_kib(process.pid))
                time.sleep(0.05)
            job_id = submitted.result()
        request_seconds = time.perf_counter() - started
        peak = request_peak
        while not client.http.get(f"/api/projects/{ref}/jobs/{job_id}").json()["terminal"]:
            peak = max(peak, _rss_kib(process.pid))
            time.sleep(0.05)
        return {
            "route": route,
            "batch_megabytes": megabytes,
            "rss_before_mib": round(before / 1024, 1),
            "request_peak_over_start_mib": round((request_peak - before) / 1024, 1),
            "request_seconds": round(request_seconds, 1),
            "rss_peak_mib": round(peak / 1024, 1),
            "peak_over_start_mib": round((peak - before) / 1024, 1),
            "seconds": round(time.perf_counter() - started, 1),
        }


PARTS = ("throughput", "latency", "stages", "memory")


def measure(quick: bool = False, parts: tuple[str, ...] = PARTS, workers: int | None = None) -> dict[str, Any]:
    """Every part, or those named (``--parts throughput,stages``), with ``workers`` worker
    processes (default: what ``make run`` gives the engine, one per core up to two)."""
    workers = default_workers() if workers is None else workers
    result: dict[str, Any] = {"throughput": [], "latency": [], "stages": None, "memory": None}
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as scratch_name:
        scratch = Path(scratch_name)
        mixed = mixed_folder(scratch / "mixed", (5 if quick else 50) * MB)
        with engine_process(scratch / "data", workers) as (client, process):
            if "throughput" in parts:
                markdown = markdown_folder(scratch / "md", int(1.5 * MB))
                result["throughput"].append(throughput(client, "markdown (1.5 MB)", markdown, process.pid))
                if not quick:
                    result["throughput"].append(throughput(client, "mixed (50 MB)", mixed, process.pid))
            if "latency" in parts:
                sizes = (1_000, 10_000) if quick else (1_000, 10_000, 100_000)
                result["latency"] = [latency(client, n, scratch) for n in sizes]
        if "stages" in parts:
            result["stages"] = stage_seconds(mixed, scratch, workers)
        if "memory" in parts:
            result["memory"] = memory(scratch, 20 if quick else 100, workers)
    return {**result, "workers": workers, "vectors": vectors_module.enabled(), "load": os.getloadavg()[0]}


PEOPLE_AND_DISAGREEMENTS = ("entity_resolution", "dedup_conflict")
"""The stages whose work the floor has no counterpart of: finding people, and disagreements."""


def report(result: dict[str, Any]) -> None:
    vectors = "on" if result.get("vectors", True) else "off"
    print(
        f"\nLocal engine, {result['workers']} worker processes, vectors {vectors}"
        f" (load average {result['load']:.1f} at the end)"
    )
    _report_throughput(result["throughput"])
    _report_latency(result["latency"])
    _report_stages(result["stages"], result["throughput"])
    _report_memory(result["memory"])


def _report_throughput(rows: list[dict[str, Any]]) -> None:
    print("  corpus                MB   files  statements   s      MB/s  files/s  floor s  × floor   (+ split s  × it)")
    for row in rows:
        print(
            f"  {row['corpus']:<20} {row['megabytes']:>5} {row['files']:>6} {row['statements']:>10} "
            f"{row['seconds']:>7} {row['mb_per_second']:>7} {row['files_per_second']:>8} "
            f"{row['floor_seconds']:>8} {row['over_floor']:>7}"
            f"   {row['floor_with_split_seconds']:>9} {row['over_floor_with_split']:>5}"
        )
    if rows:
        print(
            "  floor: the format libraries alone plus SQLite alone on the same rows; + split: with the"
            " engine's own chunks and sentences timed in it too (the floor of the passes before 2026-12-06)"
        )
        print("  corpus                engine CPU s  workers CPU s   (all CPU / cores) × floor   engine's CPU × floor")
    for row in rows:
        print(
            f"  {row['corpus']:<20} {row['engine_cpu_seconds']:>12} {row['workers_cpu_seconds']:>14}"
            f"   {row['cpu_bound_over_floor']:>25}   {row['writer_bound_over_floor']:>20}"
        )
    if rows:
        print(
            "  the least wall time the job's CPU allows, against the floor: all of it spread over the"
            f" {CORES} cores (over 1.5×, no scheduling of the same work meets the goal), and the engine"
            " process's alone (the store's one writer, with what it computes itself today)"
        )


def _report_latency(rows: list[dict[str, Any]]) -> None:
    if rows:
        print("  statements   search p50/p99 ms   retrieve p50/p99 ms")
    for row in rows:
        print(
            f"  {row['statements']:>10}   {row['search_p50_ms']:>7} / {row['search_p99_ms']:<7}"
            f"   {row['retrieve_p50_ms']:>7} / {row['retrieve_p99_ms']}"
        )


def _report_stages(measured: dict[str, Any] | None, throughput: list[dict[str, Any]]) -> None:
    stages = measured or {"seconds": {}}
    if measured:
        print(
            f"  stages on the mixed corpus ({stages['megabytes']} MB, {stages['files']} files, "
            f"{stages['statements']} statements, {stages['entities']} entities, {stages['mentions']} mentions, "
            f"{stages['candidates']} candidates, {stages['conflicts']} disagreements):"
        )
    for name, seconds in stages["seconds"].items():
        print(f"    {name:<22} {seconds:>7} s   {stages['megabytes'] / max(seconds, 0.01):>8.1f} MB/s")
    beside = [row for row in throughput if measured and row["megabytes"] == stages["megabytes"]]
    if beside:  # the floor has no people or disagreements in it: the stages that have a counterpart there, apart
        floor, with_split = beside[-1]["floor_seconds"], beside[-1]["floor_with_split_seconds"]
        found = sum(seconds for name, seconds in stages["seconds"].items() if name in PEOPLE_AND_DISAGREEMENTS)
        rest = sum(stages["seconds"].values()) - found
        print(
            f"    without people and disagreements: {rest:.2f} s, {rest / floor:.2f}× the floor ({floor} s;"
            f" {rest / with_split:.2f}× it with the split, {with_split} s); {' and '.join(PEOPLE_AND_DISAGREEMENTS)}:"
            f" {found:.2f} s"
        )


def _report_memory(rows: list[dict[str, Any]] | None) -> None:
    for held in rows or ():
        print(
            f"  memory, {held['route']}: {held['batch_megabytes']} MB batch, RSS {held['rss_before_mib']} → peak "
            f"{held['rss_peak_mib']} MiB (+{held['peak_over_start_mib']} MiB; "
            f"+{held['request_peak_over_start_mib']} MiB while the request ran, {held['request_seconds']} s) "
            f"in {held['seconds']} s"
        )
    by_path = [held for held in rows or () if held["route"] == "by path"]
    if len(by_path) == 2:
        quarter, whole = by_path
        print(
            f"  memory, flat?: {whole['batch_megabytes']} MB by path peaks "
            f"{whole['peak_over_start_mib'] - quarter['peak_over_start_mib']:+.1f} MiB over "
            f"{quarter['batch_megabytes']} MB's"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.engine", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small sizes only (1.5 MB, 1k and 10k, 5 and 20 MB)")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"some of {', '.join(PARTS)} (default: all)")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="the engine's worker processes (default: one per core up to two, as make run)",
    )
    parser.add_argument("--no-vectors", action="store_true", help="LOCAL_ENGINE_VECTORS=0: rank by words alone")
    args = parser.parse_args(argv)
    if args.no_vectors:  # read by the engines this run starts, and by the stages it runs in process
        os.environ["LOCAL_ENGINE_VECTORS"] = "0"
    parts = tuple(p.strip() for p in args.parts.split(",") if p.strip())
    if unknown := sorted(set(parts) - set(PARTS)):
        parser.error(f"unknown part(s): {', '.join(unknown)}")
    result = measure(args.quick, parts, args.workers)
    report(result)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
