"""The eleven ingestion stages, each doing its named work on a job's sources.

A stage is a function ``(Store, Work) -> Counts`` over the sources the job registered, run in
one transaction with the job's checkpoint (the caller saves the job's stage row in the same
lock), so a cancel, a retry or a crash resumes at a stage boundary and a stage run twice does
the same work once (each stage takes only the sources in the state the stage before left).

Source states: ``registered`` → ``extracted`` → ``normalized`` → ``chunked`` → ``stated``
→ ``evidenced`` → ``completed``; ``failed`` (with FORAGER's ``{code, message, stage}``) and
``duplicate`` (a byte-for-byte copy of a source already held, ``duplicate_of`` naming it)
leave the line. A source that failed does not fail the job: the job publishes a ``partial``
revision naming how many failed. A path that does not exist, or cannot be read, fails the job.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import json
import logging
import multiprocessing
import os
import signal
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from local_engine.ingestion import converters, extraction
from local_engine.ingestion.workers import Call, Workers
from local_engine.knowledge import disagreements, people
from local_engine.store.database import Store

T = TypeVar("T")
logger = logging.getLogger("local_engine")
EXTRACTOR = extraction.EXTRACTOR
MAX_FILE_BYTES = 100 * 1024 * 1024
MAX_FILES = 10_000
"""A job registers at most this many files (the rest are a warning)."""
SKIPPED_DIRECTORIES = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox"}


class Stopping(Exception):
    """The engine is stopping: the stage ends between two sources and runs again at the next start."""


class StageFailure(Exception):
    """The job cannot go on: FORAGER's ``{code, message}`` for the stage it failed in."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Counts:
    processed: int = 0
    skipped: int = 0
    failed: int = 0
    warnings: int = 0

    def to_json(self) -> dict[str, int]:
        return {"processed": self.processed, "skipped": self.skipped, "failed": self.failed, "warnings": self.warnings}


@dataclass
class Work:
    """What a stage needs of its job."""

    job_id: str
    ref: str
    kind: str  # paths | upload
    inputs: list[str]
    force: bool
    upload_dir: Path | None = None
    allowed_roots: list[Path] = field(default_factory=list)
    publish: Callable[[str, int], dict[str, Any]] | None = None  # (status, failed sources) -> revision
    stopping: threading.Event | None = None  # set when the engine stops: a stage ends between sources
    workers: Workers = field(default_factory=Workers)  # where a source's pure work runs (none: in place)
    vectors: bool = True  # indexing computes the statements' vectors (the engine's switch, read at its start)


def now_text() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def short_id(prefix: str, *parts: object) -> str:
    return f"{prefix}_" + hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:16]


def _hex(*parts: object) -> str:
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()


@dataclass(frozen=True)
class Ids:
    """How a source's chunk, statement and evidence ids are made: ``prefix_`` and 16 hex digits,
    a function of what the row is, either way.

    ``grouped`` (a store this engine made): the first 4 digits are the source's and the other 12
    the row's, so a source's rows stand together in the indexes of these ids, and a stage's
    transaction for a source writes a few of their pages instead of a page a row
    (docs/history/benchmarks.md, "A seventh pass"). Not grouped (a store an older engine made, see
    :meth:`Store.ids_grouped`): each id a hash of the whole row, as that engine made them, so a
    source read again keeps the ids its decided disagreements name."""

    grouped: bool = True

    def _made(self, prefix: str, source_id: str, *parts: object) -> str:
        if not self.grouped:
            return short_id(prefix, source_id, *parts)
        return f"{prefix}_{_source_digits(source_id)}{_hex(source_id, *parts)[:12]}"

    def chunk(self, source_id: str, index: int) -> str:
        return self._made("ch", source_id, index)

    def statement(self, source_id: str, start: int, statement: str) -> str:
        return self._made("ki", source_id, start, statement)

    def evidence(self, knowledge_id: str, source_id: str, start: int) -> str:
        if not self.grouped:
            return short_id("ev", knowledge_id, source_id, start)
        return self._made("ev", source_id, knowledge_id, start)


@functools.lru_cache(maxsize=64)
def _source_digits(source_id: str) -> str:
    """A source's 4 digits of its rows' grouped ids: hashed once a source, not once a row (a
    function of the id alone, so remembering it is the same as hashing again)."""
    return _hex(source_id)[:4]


def ids_of(store: Store) -> Ids:
    return Ids(grouped=store.ids_grouped())


def _error(code: str, message: str, stage: str) -> str:
    return json.dumps({"code": code, "message": message, "stage": stage})


def _each(work: Work, items: Iterable[T]) -> Iterator[T]:
    """``items`` one by one, until the engine stops (then :class:`Stopping`, between two)."""
    for item in items:
        if work.stopping is not None and work.stopping.is_set():
            raise Stopping
        yield item


def _mine(store: Store, work: Work, status: str) -> Iterator[sqlite3.Row]:
    """The job's sources in ``status`` (what the stage before left for this one), read one at a
    time: a source's text is in memory only while its turn lasts, never the batch's."""
    for (source_id,) in store.rows(
        "SELECT source_id FROM sources WHERE job_id = ? AND status = ? ORDER BY name", work.job_id, status
    ):
        row = store.row("SELECT * FROM sources WHERE source_id = ? AND status = ?", source_id, status)
        if row is not None:
            yield row


GROUP_TEXT = 64 * 1024
"""Sources written in one transaction: small ones together up to this many characters of text
(a larger one alone), so a folder of small notes is not a commit a note a stage, while a
transaction holds the engine's lock no longer than for one mid-sized source."""


def _together(pairs: Iterable[tuple[sqlite3.Row, T]]) -> Iterator[list[tuple[sqlite3.Row, T]]]:
    """``(source, answer)`` pairs in groups to write in one transaction (:data:`GROUP_TEXT`), in
    their order. When the engine stops, the sources already answered are written before the
    stage ends (:class:`Stopping` comes after their group)."""
    group: list[tuple[sqlite3.Row, T]] = []
    held = 0
    try:
        for source, answer in pairs:
            size = len(source["text"] or source["raw_text"] or "") or int(source["size_bytes"] or 0)
            if group and held + size > GROUP_TEXT:
                yield group
                group, held = [], 0
            group.append((source, answer))
            held += size
    except Stopping:
        if group:
            yield group
        raise
    if group:
        yield group


def _alone(sources: Iterable[sqlite3.Row]) -> Iterator[tuple[sqlite3.Row, None]]:
    """Sources as :func:`_together` takes them, for a stage that computes in place."""
    return ((source, None) for source in sources)


def _advance(db: sqlite3.Connection, source_id: str, status: str, **columns: Any) -> None:
    sets = ", ".join(f"{name} = ?" for name in ("status", *columns))
    db.execute(f"UPDATE sources SET {sets} WHERE source_id = ?", (status, *columns.values(), source_id))  # noqa: S608 - names are ours


def forget_derived(db: sqlite3.Connection, store: Store, ref: str, source_id: str) -> None:
    """A source read again: its chunks, statements, evidence and index rows go first."""
    if store.has_index(ref):
        for rowid in db.execute("SELECT rowid FROM statements WHERE source_id = ? AND indexed = 1", (source_id,)):
            db.execute(f"DELETE FROM {store.fts(ref, 's')} WHERE rowid = ?", (rowid[0],))  # noqa: S608
        for rowid in db.execute("SELECT rowid FROM chunks WHERE source_id = ? AND indexed = 1", (source_id,)):
            db.execute(f"DELETE FROM {store.fts(ref, 'c')} WHERE rowid = ?", (rowid[0],))  # noqa: S608
    db.execute("DELETE FROM evidence WHERE source_id = ?", (source_id,))
    db.execute(
        "DELETE FROM evidence WHERE knowledge_id IN (SELECT knowledge_id FROM statements WHERE source_id = ?)",
        (source_id,),
    )
    for table in ("mentions", "relationships", "claims"):
        db.execute(f"DELETE FROM {table} WHERE source_id = ?", (source_id,))  # noqa: S608 - our own names
    db.execute("DELETE FROM statements WHERE source_id = ?", (source_id,))
    db.execute("DELETE FROM chunks WHERE source_id = ?", (source_id,))


# -- 1. source_registration --------------------------------------------------------------


def allowed(path: Path, roots: list[Path]) -> bool:
    return not roots or any(path == root or root in path.parents for root in roots)


def fenced(real: Path, fence: list[Path]) -> bool:
    """Whether a walked file's real path lies inside the fence, and is nothing the walk itself
    passes over (a dotfile, or a file in a dot-folder such as the local stack's ``.devstack`` state
    or ``.git``): where a link may lead."""
    for root in fence:
        if real == root or root in real.parents:
            parts = real.relative_to(root).parts
            return not any(part.startswith(".") or part in SKIPPED_DIRECTORIES for part in parts)
    return False


def _walk(work: Work) -> Iterator[tuple[str, Path, list[Path]]]:
    """(relative name, file, fence) for every file the job names: a folder's files, walked in
    order. The fence is where the file's real path must lie when it is opened: the real paths of
    the input roots, or, with none, of the path the job named (so a link inside a folder never
    leads out of it)."""
    if work.kind == "upload":
        assert work.upload_dir is not None
        fence = [work.upload_dir.resolve()]
        for number, name in enumerate(work.inputs):
            yield name, work.upload_dir / str(number), fence
        return
    roots = [root.resolve() for root in work.allowed_roots]
    for given in work.inputs:
        path = Path(os.path.abspath(given))
        if not allowed(path, work.allowed_roots) or not allowed(path.resolve(), roots):
            raise StageFailure("path_not_allowed", f"The path {given} is under no allowed input root.")
        fence = roots or [path.resolve()]
        if not path.exists():
            raise StageFailure("path_not_found", f"The path {given} does not exist.")
        if not os.access(path, os.R_OK):
            raise StageFailure("path_not_readable", f"The path {given} cannot be read.")
        if path.is_file():
            yield path.name, path, fence
            continue
        if not path.is_dir():
            raise StageFailure("path_not_readable", f"The path {given} is neither a file nor a folder.")
        for folder, directories, files in os.walk(path):
            directories[:] = sorted(d for d in directories if d not in SKIPPED_DIRECTORIES and not d.startswith("."))
            for name in sorted(files):
                if name.startswith("."):
                    continue
                file = Path(folder) / name
                yield f"{path.name}/{file.relative_to(path).as_posix()}", file, fence


def _hash_file(file: Path) -> tuple[str, int]:
    """The file's digest and size, read through a descriptor that refuses a link (the caller
    resolved it: a link put in its place since is not followed)."""
    digest = hashlib.sha256()
    size = 0
    with os.fdopen(os.open(file, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
            size += len(block)
    return "sha256:" + digest.hexdigest(), size


def source_registration(store: Store, work: Work) -> Counts:
    counts = Counts()
    for number, (name, walked, fence) in enumerate(_each(work, _walk(work))):
        if number >= MAX_FILES:
            counts.warnings += 1
            break
        try:
            file = walked.resolve(strict=True)  # a link is read where it leads, and only inside the fence
            if not fenced(file, fence):
                logger.warning("skipped %s: a link that leads out of the input roots", name)
                counts.skipped += 1
                counts.warnings += 1
                continue
            if not stat.S_ISREG(file.stat().st_mode):
                counts.skipped += 1
                continue
            content_hash, size = _hash_file(file)  # read outside the lock: the engine answers meanwhile
        except OSError:
            counts.failed += 1
            continue
        with store.transaction() as db:
            source_id = short_id("src", work.ref, name)
            held = db.execute("SELECT * FROM sources WHERE source_id = ?", (source_id,)).fetchone()
            if (
                held is not None
                and held["content_hash"] == content_hash
                and not work.force
                and held["status"] != "failed"
            ):
                counts.skipped += 1
                continue
            if held is not None:
                forget_derived(db, store, work.ref, source_id)
                db.execute("DELETE FROM sources WHERE source_id = ?", (source_id,))
            original = db.execute(
                "SELECT source_id FROM sources WHERE ref = ? AND content_hash = ? AND duplicate_of IS NULL"
                " AND status != 'failed' ORDER BY created_at, source_id LIMIT 1",
                (work.ref, content_hash),
            ).fetchone()
            duplicate_of = original["source_id"] if original is not None else None
            db.execute(
                "INSERT INTO sources (source_id, ref, job_id, name, relative_path, origin, blob, size_bytes,"
                " content_hash, status, duplicate_of, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    source_id,
                    work.ref,
                    work.job_id,
                    name,
                    name,
                    "upload" if work.kind == "upload" else "path",
                    str(file),
                    size,
                    content_hash,
                    "duplicate" if duplicate_of else "registered",
                    duplicate_of,
                    now_text(),
                ),
            )
            counts.processed += 1
    return counts


# -- 2. parsing_extraction ------------------------------------------------------------------


def converted(name: str, blob: str, size: int) -> converters.Extracted:
    """A file read and converted (in a worker when there are any): :class:`converters.Unreadable`
    when it cannot be."""
    if size > MAX_FILE_BYTES:
        raise converters.Unreadable("too_large", f"{name} is over 100 MB.")
    try:
        data = Path(blob).read_bytes()
    except OSError as exc:
        raise converters.Unreadable("source_missing", f"{name} cannot be read: {exc.strerror}.") from None
    return converters.extract(name, data)


def parsing_extraction(store: Store, work: Work) -> Counts:
    counts = Counts()
    sources = _each(work, _mine(store, work, "registered"))
    answered = work.workers.ahead(  # converted outside the lock: the engine answers meanwhile
        sources,
        lambda source: (_attempt, (converted, source["name"], source["blob"], source["size_bytes"])),
        broken=lambda source: converters.Unreadable(
            "unreadable_file", f"{source['name']} stopped the process reading it (out of memory, or killed)."
        ),
    )
    for group in _together(answered):
        with store.transaction() as db:
            for source, answer in group:
                if isinstance(answer, converters.Unreadable):
                    error = _error(answer.code, answer.message, "parsing_extraction")
                    _advance(db, source["source_id"], "failed", error=error)
                    counts.failed += 1
                    continue
                extracted: converters.Extracted = answer
                counts.warnings += len(extracted.warnings)
                _advance(
                    db,
                    source["source_id"],
                    "extracted",
                    raw_text=extracted.text,
                    parser=extracted.parser,
                    mime_type=extracted.mime_type,
                    type=extracted.type,
                    document_date=extracted.document_date,
                    page_starts=json.dumps(extracted.page_starts),
                    line_map=extraction.LineMap.of(extracted.line_map).dumps(),
                    warnings=json.dumps(extracted.warnings),
                )
                counts.processed += 1
    return counts


CONVERT_SECONDS = 120
"""The most one file's conversion may take in a worker process before it fails as the source's."""


def _attempt(function: Callable[..., T], name: str, *arguments: Any) -> T | converters.Unreadable:
    """``function(name, *arguments)``, or what stopped it as the source's :class:`converters.Unreadable`,
    an answer that crosses a process boundary: whatever a library raises (lxml's syntax errors
    cannot even be pickled back, pypdf's limits, a memory error under the worker's cap), and, in a
    worker process, a conversion past :data:`CONVERT_SECONDS`."""
    timed = threading.current_thread() is threading.main_thread() and multiprocessing.parent_process() is not None
    if timed:
        signal.signal(signal.SIGALRM, _too_slow)
        signal.setitimer(signal.ITIMER_REAL, CONVERT_SECONDS)
    try:
        return function(name, *arguments)
    except converters.Unreadable as exc:
        return exc
    except _TooSlow:
        return converters.Unreadable("too_slow", f"{name} took over {CONVERT_SECONDS} s to read.")
    except MemoryError:
        return converters.Unreadable("too_large", f"{name} needs more memory to read than a worker may use.")
    except Exception as exc:  # a library's own failure on a hostile or broken file: the source's, never the job's
        words = " ".join(str(exc).split())[:200]
        return converters.Unreadable("unreadable_file", f"{name} cannot be read ({type(exc).__name__}: {words}).")
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)


class _TooSlow(Exception):
    pass


def _too_slow(signum: int, frame: object) -> None:
    raise _TooSlow


# -- 3. normalization -------------------------------------------------------------------------


def normalization(store: Store, work: Work) -> Counts:
    counts = Counts()
    for group in _together(_alone(_each(work, _mine(store, work, "extracted")))):
        with store.transaction() as db:
            for source, _ in group:
                text = extraction.normalize(source["raw_text"] or "")
                logical = sha256(" ".join(text.split()).encode("utf-8"))
                if not text.strip():
                    counts.warnings += 1
                _advance(db, source["source_id"], "normalized", text=text, raw_text=None, logical_content_hash=logical)
                counts.processed += 1
    return counts


# -- 4. chunking ----------------------------------------------------------------------------------


def chunked(
    source_id: str, ref: str, text: str, ids: Ids, line_map: str | None = None
) -> tuple[str, list[tuple[Any, ...]]]:
    """A source's structure (kept for the next stage) and its chunk rows (each chunk's line the
    file's, through the source's line map)."""
    structure = extraction.blocks(text)
    kept = json.dumps([[b.kind, b.start, b.end, b.level, b.heading] for b in structure])
    lines = extraction.LineMap.loads(line_map)
    rows = [
        (
            ids.chunk(source_id, span.index),
            source_id,
            ref,
            span.index,
            span.heading,
            lines.file_line(span.line),
            span.start,
            span.end,
            text[span.start : span.end],
        )
        for span in extraction.chunk(text, structure)
    ]
    return kept, rows


def chunking(store: Store, work: Work) -> Counts:
    counts = Counts()
    ids = ids_of(store)
    sources = _each(work, _mine(store, work, "normalized"))
    answered = work.workers.ahead(
        sources, lambda source: (chunked, (source["source_id"], work.ref, source["text"], ids, source["line_map"]))
    )
    for group in _together(answered):
        with store.transaction() as db:
            for source, (kept, rows) in group:
                db.executemany(
                    "INSERT INTO chunks (chunk_id, source_id, ref, idx, heading, line, char_start, char_end, text)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                _advance(db, source["source_id"], "chunked", structure=kept)
                counts.processed += 1
    return counts


# -- 5. semantic_extraction -------------------------------------------------------------------------


def stated(source_id: str, ref: str, text: str, kept: str | None, created: str, ids: Ids) -> list[tuple[Any, ...]]:
    """A source's statement rows: its sentences, each with the statement rules' type, subject,
    confidence and date."""
    structure = [extraction.Block(*block) for block in json.loads(kept or "[]")]
    spans = extraction.chunk(text, structure)
    chunk_ids = [ids.chunk(source_id, span.index) for span in spans]  # once a chunk
    return [
        (
            ids.statement(source_id, sentence.start, sentence.statement),
            ref,
            source_id,
            chunk_ids[sentence.chunk_index],
            extraction.title(sentence.statement),
            sentence.statement,
            extraction.statement_type(sentence.statement),
            extraction.subject(sentence.statement, sentence.heading),
            extraction.confidence(sentence.statement),
            extraction.first_date(sentence.statement),
            sentence.start,
            sentence.end,
            created,
        )
        for sentence in extraction.sentences(text, structure, spans)
    ]


def semantic_extraction(store: Store, work: Work) -> Counts:
    counts = Counts()
    created = now_text()
    ids = ids_of(store)
    sources = _each(work, _mine(store, work, "chunked"))
    answered = work.workers.ahead(
        sources,
        lambda source: (stated, (source["source_id"], work.ref, source["text"], source["structure"], created, ids)),
    )
    for group in _together(answered):
        with store.transaction() as db:
            for source, rows in group:
                if not rows:
                    counts.skipped += 1
                db.executemany(
                    "INSERT OR IGNORE INTO statements (knowledge_id, ref, source_id, chunk_id, title, statement, type,"
                    " subject, support, status, confidence, effective_date, char_start, char_end, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'DirectFact', 'Active', ?, ?, ?, ?, ?)",
                    rows,
                )
                _advance(db, source["source_id"], "stated", structure=None)
                counts.processed += 1
    return counts


def entity_resolution(store: Store, work: Work) -> Counts:
    """The names each source's statements say (``people.py``), then, over the whole base, the
    same person named two ways: merged on its own, or a pending possible duplicate."""
    counts = Counts()
    created = now_text()

    def find(source: sqlite3.Row) -> Call:
        statements = store.tuples(
            "SELECT knowledge_id, chunk_id, char_start, char_end FROM statements WHERE source_id = ?"
            " ORDER BY char_start",
            source["source_id"],
        )
        return people.find, (source["text"] or "", statements, source["name"])

    for group in _together(work.workers.ahead(_each(work, _mine(store, work, "stated")), find)):
        with store.transaction() as db:
            for source, found in group:
                people.record(db, short_id, work.ref, source["source_id"], found, created)
                counts.processed += 1 if found else 0
                counts.skipped += 0 if found else 1
    with store.transaction() as db:
        people.prune(db, work.ref)
        _, suggested = people.resolve(db, short_id, work.ref, created)
        counts.warnings += suggested
    return counts


def dedup_conflict(store: Store, work: Work) -> Counts:
    """Supersession, the same statement twice, said twice in other words, contradictions and
    copies (``disagreements.py``), one source at a time in the job's order."""
    counts = Counts()
    created = now_text()
    ids = ids_of(store)

    read: dict[str, tuple[extraction.Lines, list[int], extraction.LineMap]] = {}

    def locate(source: sqlite3.Row, start: int) -> tuple[int, str]:
        if source["source_id"] not in read:  # a source's lines are counted once, and only one is kept
            read.clear()
            read[source["source_id"]] = (
                extraction.Lines(source["text"] or ""),
                json.loads(source["page_starts"] or "[]"),
                extraction.LineMap.loads(source["line_map"]),
            )
        lines, pages, line_map = read[source["source_id"]]
        return location(lines, pages, start, line_map)

    for group in _together(_alone(_each(work, _mine(store, work, "stated")))):
        with store.transaction() as db:
            for source, _ in group:
                detector = disagreements.Detector(db, short_id, work.ref, created, locate, ids.evidence)
                detector.supersede(source)
                counts.processed += 1

    def claims(source: sqlite3.Row) -> Call:  # the claims are made in a worker; the comparisons here
        if not work.workers.beside:
            return dict, ()  # none: the detector makes each claim as it reads the statement
        said = store.tuples(
            "SELECT s.knowledge_id, s.statement, s.effective_date, c.heading FROM statements s"
            " LEFT JOIN chunks c ON c.chunk_id = s.chunk_id WHERE s.source_id = ? AND s.status = 'Active'",
            source["source_id"],
        )
        return disagreements.claims_of, (said, source["name"])

    cache, seen = disagreements.HeldCache(), -1
    for group in _together(work.workers.ahead(_each(work, _mine(store, work, "stated")), claims)):
        with store.transaction() as db:
            if store.commits != seen:  # another transaction wrote since this loop's last group
                cache.clear()
            for source, computed in group:
                detector = disagreements.Detector(db, short_id, work.ref, created, locate, ids.evidence, cache)
                detector.statements(source, computed)
                counts.warnings += detector.found
            seen = store.commits + 1  # the count once this transaction commits (under the lock)
    for group in _together(_alone(_each(work, _mine(store, work, "duplicate")))):
        with store.transaction() as db:
            for source, _ in group:
                detector = disagreements.Detector(db, short_id, work.ref, created, locate, ids.evidence)
                detector.copy(source)
                counts.processed += 1
                counts.warnings += detector.found
    return counts


# -- 8. provenance ------------------------------------------------------------------------------------


def location(
    lines: extraction.Lines, page_starts: list[int], start: int, line_map: extraction.LineMap | None = None
) -> tuple[int, str]:
    """The file's line an offset stands on (``line 12``; through the source's line map when its
    text is not the file as written), and in a PDF its page (``page 2, line 3``)."""
    line = lines.line_of(start)
    if not page_starts:
        line = line_map.file_line(line) if line_map is not None else line
        return line, f"line {line}"
    page = bisect.bisect_right(page_starts, start)
    page_line = line - lines.line_of(page_starts[page - 1]) + 1
    return line, f"page {page}, line {page_line}"


def provenance(store: Store, work: Work) -> Counts:
    """One evidence row a statement. Computed here, not in a worker: its work is a bisection and a
    hash a statement, less than sending the statements there and the rows back would cost."""
    counts = Counts()
    ids = ids_of(store)
    for group in _together(_alone(_each(work, _mine(store, work, "stated")))):
        with store.transaction() as db:
            for source, _ in group:
                rows = _evidence_rows(store, source, ids)
                db.executemany(
                    "INSERT OR REPLACE INTO evidence (evidence_id, knowledge_id, source_id, chunk_id, char_start,"
                    " char_end, line, location, excerpt_hash, extractor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                counts.processed += len(rows)
                _advance(db, source["source_id"], "evidenced")
    return counts


def _evidence_rows(store: Store, source: sqlite3.Row, ids: Ids) -> list[tuple[Any, ...]]:
    """A source's evidence rows: each statement's excerpt located and hashed (read in the caller's
    transaction: the same connection)."""
    text = source["text"]
    lines = extraction.Lines(text)  # once a source: each statement's line is a bisection
    pages = json.loads(source["page_starts"] or "[]")
    line_map = extraction.LineMap.loads(source["line_map"])
    source_id = source["source_id"]
    rows = []
    for knowledge_id, chunk_id, start, end in store.tuples(
        "SELECT knowledge_id, chunk_id, char_start, char_end FROM statements WHERE source_id = ?", source_id
    ):
        line, where = location(lines, pages, start, line_map)
        rows.append(
            (
                ids.evidence(knowledge_id, source_id, start),
                knowledge_id,
                source_id,
                chunk_id,
                start,
                end,
                line,
                where,
                sha256(text[start:end].encode("utf-8")),
                EXTRACTOR,
            )
        )
    return rows


def validation(store: Store, work: Work) -> Counts:
    """Every excerpt must still be the text at its offsets, with the hash it was stored with."""
    counts = Counts()
    for source in _each(work, _mine(store, work, "evidenced")):
        text = source["text"] or ""
        for row in store.rows(
            "SELECT char_start, char_end, excerpt_hash FROM evidence WHERE source_id = ?", source["source_id"]
        ):
            excerpt = text[row["char_start"] : row["char_end"]]
            if excerpt and sha256(excerpt.encode("utf-8")) == row["excerpt_hash"]:
                counts.processed += 1
            else:
                counts.warnings += 1
    return counts


# -- 10. indexing ---------------------------------------------------------------------------------------


def indexing(store: Store, work: Work) -> Counts:
    """Each source's statements and chunks into the base's full-text index (with their heading
    path, and their source's title and file name: ``ranking.write_words``) and, unless
    ``LOCAL_ENGINE_VECTORS=0``, their vectors (``search/vectors.py``), computed while this process
    writes the source before: for a large job in the workers, for a smaller one on a thread of this
    process, where the model is loaded already (``vectors.worth_workers``)."""
    from local_engine.search import labels, ranking, vectors  # search's room: how a statement is found

    counts = Counts()
    ranking.upgrade(store, work.ref)
    vectors.prune(store, work.ref)
    sources = _each(work, _mine(store, work, "evidenced"))
    answered: Iterable[tuple[sqlite3.Row, Any]] = _alone(sources)
    if work.vectors:

        def texts(source: sqlite3.Row) -> Call:
            return vectors.source_vectors, labels.vector_parts(store, source["source_id"], "x.indexed = 0")

        if work.workers.beside and vectors.worth_workers(store, work.job_id):
            answered = work.workers.ahead(sources, texts)
        else:  # a smaller job: here, where the model is loaded already (each worker would load it first)
            answered = vectors.alongside(sources, lambda source: texts(source)[1])
    for group in _together(answered):
        with store.transaction() as db:
            store.ensure_index(db, work.ref)
            for source, found in group:
                label = labels.label_of(store, source["source_id"])
                ranking.write_words(db, store, work.ref, source["source_id"], label, "x.indexed = 0")
                if found is not None:
                    vectors.write(db, store, work.ref, found)
                db.execute("UPDATE statements SET indexed = 1 WHERE source_id = ?", (source["source_id"],))
                db.execute("UPDATE chunks SET indexed = 1 WHERE source_id = ?", (source["source_id"],))
                _advance(db, source["source_id"], "completed")
                counts.processed += 1
            vectors.touch(db, work.ref)
    return counts


def export_availability(store: Store, work: Work) -> Counts:
    """A revision of the knowledge base on the change feed: ``partial`` when a source failed."""
    failed = int(store.value("SELECT COUNT(*) FROM sources WHERE job_id = ? AND status = 'failed'", work.job_id) or 0)
    if work.publish is not None:
        work.publish("partial" if failed else "complete", failed)
    return Counts(processed=1, warnings=failed)


STAGE_WORK: dict[str, Callable[[Store, Work], Counts]] = {
    "source_registration": source_registration,
    "parsing_extraction": parsing_extraction,
    "normalization": normalization,
    "chunking": chunking,
    "semantic_extraction": semantic_extraction,
    "entity_resolution": entity_resolution,
    "dedup_conflict": dedup_conflict,
    "provenance": provenance,
    "validation": validation,
    "indexing": indexing,
    "export_availability": export_availability,
}
