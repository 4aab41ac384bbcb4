"""The engine's store: one SQLite database (WAL, FTS5) under its data folder.

Every record the pipeline makes lives here — sources with their extracted text, chunks,
statements, evidence, the jobs and their stage rows — written in transactions as work
happens, so a restart (or a ``kill -9``) finds what was acknowledged and a job resumes at
its last completed stage. Nothing is rewritten whole.

Full text is indexed per knowledge base: two FTS5 tables each (``fts_<ref>_s`` over
statements, ``fts_<ref>_c`` over chunks), whose rowids are the records' rowids, so a base's
words never rank another's and BM25's statistics are the base's own. The ``indexing`` stage
fills them (they are not triggers: indexing is a stage a job reports). Ordering is ``bm25()``
(title weighted 2, statement 1); ``snippet()`` cuts what a person reads. A statement's row also
holds its heading path and its source's title and file name (``heading``, ``source``), so a word
said only there finds it.

Each base's vectors (``search/vectors.py``) are two tables of its own beside them, ``vec_<ref>_s``
and ``vec_<ref>_c`` (a statement's or chunk's rowid, 256 float16s), written by ``indexing`` and
dropped with the full-text tables.

One connection behind the engine's lock: the engine serves one request at a time against it
(a local engine; readers beside a writer would want a connection each).
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 5
IDS_GROUPED = "grouped"
"""The ``meta`` row ``ids`` of a store whose record ids are grouped by source (``pipeline.Ids``)."""
REF = re.compile(r"[a-z0-9_]{1,64}")
AUTOMERGE = 16
"""FTS5's ``automerge`` for a base's full-text tables (see :meth:`Store.ensure_index`)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources (
    source_id TEXT PRIMARY KEY,
    ref TEXT NOT NULL,
    job_id TEXT,
    name TEXT NOT NULL,
    relative_path TEXT NOT NULL,
    origin TEXT NOT NULL,
    blob TEXT,
    type TEXT,
    mime_type TEXT,
    parser TEXT,
    size_bytes INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    logical_content_hash TEXT,
    status TEXT NOT NULL,
    error TEXT,
    warnings TEXT,
    document_date TEXT,
    duplicate_of TEXT,
    superseded_by TEXT,
    raw_text TEXT,
    page_starts TEXT,
    line_map TEXT,
    structure TEXT,
    text TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (ref, relative_path)
);
CREATE INDEX IF NOT EXISTS sources_by_job ON sources (job_id);
CREATE INDEX IF NOT EXISTS sources_by_hash ON sources (ref, content_hash);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL,
    ref TEXT NOT NULL,
    idx INTEGER NOT NULL,
    heading TEXT NOT NULL,
    line INTEGER NOT NULL,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    text TEXT NOT NULL,
    indexed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_by_source ON chunks (source_id, idx);
CREATE TABLE IF NOT EXISTS statements (
    knowledge_id TEXT PRIMARY KEY,
    ref TEXT NOT NULL,
    source_id TEXT NOT NULL,
    chunk_id TEXT,
    title TEXT NOT NULL,
    statement TEXT NOT NULL,
    type TEXT NOT NULL,
    subject TEXT,
    support TEXT NOT NULL,
    status TEXT NOT NULL,
    confidence REAL NOT NULL,
    effective_date TEXT,
    review_status TEXT NOT NULL DEFAULT 'unreviewed',
    review_notes TEXT,
    reviewed_by TEXT,
    reviewed_at TEXT,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    indexed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS statements_by_ref ON statements (ref, status);
CREATE INDEX IF NOT EXISTS statements_by_source ON statements (source_id);
CREATE TABLE IF NOT EXISTS evidence (
    evidence_id TEXT PRIMARY KEY,
    knowledge_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    chunk_id TEXT,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    line INTEGER NOT NULL,
    location TEXT NOT NULL,
    excerpt_hash TEXT NOT NULL,
    extractor TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS evidence_by_item ON evidence (knowledge_id);
CREATE INDEX IF NOT EXISTS evidence_by_source ON evidence (source_id);
CREATE TABLE IF NOT EXISTS entities (
    entity_id TEXT PRIMARY KEY,
    ref TEXT NOT NULL,
    name TEXT NOT NULL,
    normalized TEXT NOT NULL,
    type TEXT NOT NULL,
    confidence REAL NOT NULL,
    attributes TEXT NOT NULL DEFAULT '{}',
    merged_into TEXT,
    merge_reason TEXT,
    merged_by TEXT,
    merged_at TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (ref, normalized)
);
CREATE INDEX IF NOT EXISTS entities_by_ref ON entities (ref, merged_into, name);
CREATE TABLE IF NOT EXISTS aliases (
    entity_id TEXT NOT NULL,
    alias TEXT NOT NULL,
    kind TEXT NOT NULL,
    confidence REAL NOT NULL,
    PRIMARY KEY (entity_id, alias)
);
CREATE TABLE IF NOT EXISTS mentions (
    entity_id TEXT NOT NULL,
    ref TEXT NOT NULL,
    source_id TEXT NOT NULL,
    chunk_id TEXT,
    knowledge_id TEXT,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (source_id, char_start, entity_id)
);
CREATE INDEX IF NOT EXISTS mentions_by_entity ON mentions (entity_id);
CREATE INDEX IF NOT EXISTS mentions_by_item ON mentions (knowledge_id);
CREATE TABLE IF NOT EXISTS relationships (
    from_entity TEXT NOT NULL,
    type TEXT NOT NULL,
    to_entity TEXT NOT NULL,
    knowledge_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    confidence REAL NOT NULL,
    PRIMARY KEY (knowledge_id, from_entity, to_entity)
);
CREATE INDEX IF NOT EXISTS relationships_by_source ON relationships (source_id);
CREATE TABLE IF NOT EXISTS candidates (
    candidate_id TEXT PRIMARY KEY,
    ref TEXT NOT NULL,
    entity_a TEXT NOT NULL,
    entity_b TEXT NOT NULL,
    confidence REAL NOT NULL,
    reason TEXT NOT NULL,
    status TEXT NOT NULL,
    decided_by TEXT,
    decided_at TEXT,
    notes TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS candidates_by_ref ON candidates (ref, status);
CREATE TABLE IF NOT EXISTS claims (
    knowledge_id TEXT PRIMARY KEY,
    ref TEXT NOT NULL,
    source_id TEXT NOT NULL,
    subject TEXT NOT NULL,
    claim TEXT NOT NULL,
    words TEXT NOT NULL,
    value TEXT,
    live INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS claims_by_subject ON claims (ref, subject);
CREATE INDEX IF NOT EXISTS claims_by_source ON claims (source_id);
CREATE TABLE IF NOT EXISTS conflicts (
    conflict_id TEXT PRIMARY KEY,
    ref TEXT NOT NULL,
    title TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    suggested_resolution TEXT NOT NULL,
    suggested_winner TEXT,
    decision TEXT,
    detected_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS conflicts_by_ref ON conflicts (ref, status);
CREATE TABLE IF NOT EXISTS conflict_sides (
    conflict_id TEXT NOT NULL,
    knowledge_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (conflict_id, knowledge_id)
);
CREATE INDEX IF NOT EXISTS conflict_sides_by_item ON conflict_sides (knowledge_id);
CREATE TABLE IF NOT EXISTS conflict_sources (
    conflict_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    PRIMARY KEY (conflict_id, source_id)
);
CREATE TABLE IF NOT EXISTS curation (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    ref TEXT NOT NULL,
    act TEXT NOT NULL,
    record TEXT NOT NULL,
    actor TEXT,
    at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY,
    ref TEXT NOT NULL,
    created_at REAL NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS feeds (
    ref TEXT PRIMARY KEY,
    body TEXT NOT NULL
);
"""


WORDS = """
CREATE TABLE IF NOT EXISTS claim_words (
    ref TEXT NOT NULL,
    words TEXT NOT NULL,
    knowledge_id TEXT NOT NULL,
    PRIMARY KEY (ref, words, knowledge_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS claim_words_fresh (
    ref TEXT NOT NULL,
    words TEXT NOT NULL,
    knowledge_id TEXT NOT NULL,
    PRIMARY KEY (ref, words, knowledge_id)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS claim_words_on_delete AFTER DELETE ON claims BEGIN
    DELETE FROM claim_words WHERE ref = OLD.ref AND words = OLD.words AND knowledge_id = OLD.knowledge_id;
    DELETE FROM claim_words_fresh WHERE ref = OLD.ref AND words = OLD.words AND knowledge_id = OLD.knowledge_id;
END;
"""
"""Each claim's content-word key (``dedup_conflict``'s rules 2 and 3 look a source's keys up), in
one of two tables: ``claim_words_fresh`` takes a claim's key as it is kept
(``disagreements.keep_claims``), and :func:`file_words` moves the fresh keys into ``claim_words``
in one pass in key order once there are :data:`FRESH_WORDS` of them. The keys are hashes: as an
index on ``claims`` each source's keys went to pages of their own all over an index that grows
with the base, and each source's transaction wrote most of it again (2.2 of the 3.7 GiB the stage
wrote at 50 MB). The fresh table stays small, and the large one is written in key order a few
times a job (docs/history/benchmarks.md, "An eighth pass"). A claim kept again by the same statement (a
stage run again) keeps its key, and may then have it in both tables; a claim deleted takes its
key from both (the trigger)."""
FRESH_WORDS = 30_000
"""How many fresh keys :func:`file_words` lets gather before it files them."""


def file_words(db: sqlite3.Connection, at_least: int | None = None) -> bool:
    """The fresh claim keys filed in ``claim_words`` (in key order, a page written once) when
    there are at least ``at_least`` (:data:`FRESH_WORDS`) of them; True when they were. In the
    caller's transaction."""
    enough = FRESH_WORDS if at_least is None else at_least
    fresh = db.execute(f"SELECT COUNT(*) FROM (SELECT 1 FROM claim_words_fresh LIMIT {int(enough)})").fetchone()[0]  # noqa: S608
    if fresh == 0 or fresh < enough:
        return False
    db.execute("INSERT OR IGNORE INTO claim_words SELECT ref, words, knowledge_id FROM claim_words_fresh")
    db.execute("DELETE FROM claim_words_fresh")
    return True


IN_PLAY = "('Active', 'Disputed')"
"""The statuses of a statement still in play: what a claim's ``live`` flag says of its statement."""
LIVE = f"""
CREATE TRIGGER IF NOT EXISTS claims_live_on_insert AFTER INSERT ON statements BEGIN
    UPDATE claims SET live = NEW.status IN {IN_PLAY} WHERE knowledge_id = NEW.knowledge_id;
END;
CREATE TRIGGER IF NOT EXISTS claims_live_on_status AFTER UPDATE OF status ON statements BEGIN
    UPDATE claims SET live = NEW.status IN {IN_PLAY} WHERE knowledge_id = NEW.knowledge_id;
END;
CREATE TRIGGER IF NOT EXISTS claims_live_on_delete AFTER DELETE ON statements BEGIN
    UPDATE claims SET live = 0 WHERE knowledge_id = OLD.knowledge_id;
END;
"""  # noqa: S608 - our own constant
"""A claim is ``live`` while its statement is and is in play (:data:`IN_PLAY`): what
``dedup_conflict`` compares, read from the claims alone (a join to every statement's row was
most of the stage at 50 MB). The claim's insert sets it from its statement (:data:`CLAIM_LIVE`);
these keep it."""
CLAIM_LIVE = f"EXISTS (SELECT 1 FROM statements s WHERE s.knowledge_id = {{id}} AND s.status IN {IN_PLAY})"  # noqa: S608
"""A claim's ``live`` as its statement is now, the statement's id given as ``{id}``."""

TABLES = (
    "sources", "chunks", "statements", "evidence", "entities", "aliases", "mentions", "relationships",
    "candidates", "claim_words", "claim_words_fresh", "claims", "conflicts", "conflict_sides", "conflict_sources",
    "curation", "jobs", "feeds",
)  # fmt: skip
"""Every table of records (``meta`` aside): what a reset empties."""


class Emptied(Exception):
    """The store was emptied (the control port's reset) while work bound to it ran: that work's
    next transaction is refused, so nothing it read before the reset is written after it."""


class Store:
    """The engine's database. ``path`` None: an in-memory database (a test's engine)."""

    def __init__(self, path: Path | None, lock: threading.RLock) -> None:
        self.path = path
        self.lock = lock
        self._depth = 0  # transactions open on this connection (under the lock: one thread)
        self.generation = 0  # one more at every clear(): work bound to an older one writes nothing
        self.commits = 0  # transactions committed through transaction(): what was written since a count
        self._bound = threading.local()  # the generation the running thread's work was bound to
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(
            str(path) if path is not None else ":memory:", check_same_thread=False, isolation_level=None
        )
        self.db.row_factory = sqlite3.Row
        with self.lock:
            if path is not None:
                self.db.execute("PRAGMA journal_mode=WAL")
                # A checkpoint every 10,000 pages (40 MiB of log), not SQLite's 1,000: ingestion
                # rewrites the same index pages source after source, and each checkpoint is two
                # fsyncs (docs/history/benchmarks.md, "What a checkpoint costs"). The log is cut back to
                # 64 MiB after one, so a large transaction leaves no large file behind.
                self.db.execute("PRAGMA wal_autocheckpoint=10000")
                self.db.execute("PRAGMA journal_size_limit=67108864")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=OFF")
            self.db.executescript(SCHEMA)
            self.db.executescript(WORDS)
            self._migrate()
            self.db.executescript(LIVE)
            if self.meta("ids") is None:  # an older engine's records keep the ids it made them with
                held = self.db.execute("SELECT 1 FROM sources LIMIT 1").fetchone() is not None
                self.db.execute("INSERT INTO meta (key, value) VALUES ('ids', ?)", ("hashed" if held else IDS_GROUPED,))
            self.db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )

    def _migrate(self) -> None:
        """A store an older engine wrote, brought to this schema: version 3 marks each claim
        ``live`` (see :data:`LIVE`); version 4 keeps the claims' keys in ``claim_words`` (see
        :data:`WORDS`) instead of an index on ``claims``; version 5 gives each source a
        ``line_map`` (the file's line of each line of its text, ``extraction.LineMap``: none, as
        every source an older engine read, when the text's lines are the file's)."""
        if "line_map" not in {row[1] for row in self.db.execute("PRAGMA table_info(sources)")}:
            with self.transaction() as db:
                db.execute("ALTER TABLE sources ADD COLUMN line_map TEXT")
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(claims)")}
        if "live" not in columns:
            with self.transaction() as db:
                db.execute("ALTER TABLE claims ADD COLUMN live INTEGER NOT NULL DEFAULT 1")
                db.execute(f"UPDATE claims SET live = {CLAIM_LIVE.format(id='claims.knowledge_id')}")  # noqa: S608
        if self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'claims_by_words'").fetchone():
            with self.transaction() as db:
                db.execute(
                    "INSERT OR IGNORE INTO claim_words SELECT ref, words, knowledge_id FROM claims ORDER BY 1, 2, 3"
                )
                db.execute("DROP INDEX claims_by_words")

    def close(self) -> None:
        with self.lock:
            self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One transaction under the engine's lock: all of it lands, or none. Nested, it joins
        the one open (a stage's output and its job's checkpoint commit together)."""
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self.db
                finally:
                    self._depth -= 1
                return
            bound = getattr(self._bound, "generation", None)
            if bound is not None and bound != self.generation:
                raise Emptied
            self.db.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield self.db
                self.db.execute("COMMIT")
                self.commits += 1
            except BaseException:
                # SQLite may have rolled back already (a full disk does, SQLITE_FULL): the error
                # that stopped the work is the one to raise, never "no transaction is active"
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise
            finally:
                self._depth = 0

    @contextmanager
    def bound(self) -> Iterator[None]:
        """Run a piece of work (a job's stage) bound to the store as it is now: if a reset empties
        it meanwhile, the work's next transaction raises :class:`Emptied` instead of writing."""
        with self.lock:
            self._bound.generation = self.generation
        try:
            yield
        finally:
            self._bound.generation = None

    def rows(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        with self.lock:
            return list(self.db.execute(sql, args))

    def tuples(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        """:meth:`rows` as plain tuples: cheaper to make, and to send to a worker, by the thousand."""
        with self.lock:
            read = self.db.cursor()
            read.row_factory = None
            return read.execute(sql, args).fetchall()

    def row(self, sql: str, *args: Any) -> sqlite3.Row | None:
        with self.lock:
            result: sqlite3.Row | None = self.db.execute(sql, args).fetchone()
            return result

    def value(self, sql: str, *args: Any) -> Any:
        found = self.row(sql, *args)
        return None if found is None else found[0]

    def clear(self) -> None:
        """Every knowledge base's records and jobs gone (the control port's reset)."""
        with self.lock:
            self.generation += 1
        with self.transaction() as db:
            for (name,) in list(
                db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                    " AND (name LIKE 'fts\\_%' ESCAPE '\\' OR name LIKE 'vec\\_%' ESCAPE '\\')"
                )
            ):
                if name.endswith(("_s", "_c")):
                    db.execute(f"DROP TABLE IF EXISTS {name}")
            db.execute("DELETE FROM meta WHERE key LIKE 'vectors:%'")
            for table in TABLES:
                db.execute(f"DELETE FROM {table}")  # noqa: S608 - our own names
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('ids', ?)", (IDS_GROUPED,))

    # -- meta ---------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        value = self.value("SELECT value FROM meta WHERE key = ?", key)
        return None if value is None else str(value)

    def ids_grouped(self) -> bool:
        """Whether this store's chunk, statement and evidence ids begin with their source's digits
        (``pipeline.Ids``): every store made or emptied by this engine; one an older engine
        made keeps its hashed ids."""
        return self.meta("ids") == IDS_GROUPED

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # -- full text, per knowledge base ----------------------------------------------------

    @staticmethod
    def fts(ref: str, kind: str) -> str:
        if not REF.fullmatch(ref) or kind not in ("s", "c"):
            raise ValueError(f"not a knowledge base: {ref!r}")
        return f"fts_{ref}_{kind}"

    def ensure_index(self, db: sqlite3.Connection, ref: str) -> None:
        """The base's two FTS5 tables, made at its first indexing. Each merges its segments 16 at
        a time (``automerge``; 4 by default): a job adds a segment a source, and
        merging them 4 at a time rewrote each row about twice as often (docs/history/benchmarks.md, "An
        eighth pass"). What a query answers does not depend on how the index is cut in segments."""
        for kind, columns in (("s", "title, statement, heading, source"), ("c", "text")):
            table = self.fts(ref, kind)
            if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone():
                continue
            db.execute(f"CREATE VIRTUAL TABLE {table} USING fts5({columns}, tokenize='porter unicode61')")
            db.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('automerge', {AUTOMERGE})")  # noqa: S608

    def has_index(self, ref: str) -> bool:
        name = self.fts(ref, "s")
        return self.value("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name) is not None

    # -- vectors, per knowledge base --------------------------------------------------------

    @staticmethod
    def vectors(ref: str, kind: str) -> str:
        """The base's vector table of statements (``s``) or chunks (``c``): rowid -> 256 float16s."""
        if not REF.fullmatch(ref) or kind not in ("s", "c"):
            raise ValueError(f"not a knowledge base: {ref!r}")
        return f"vec_{ref}_{kind}"

    def ensure_vectors(self, db: sqlite3.Connection, ref: str) -> None:
        for kind in ("s", "c"):
            table = self.vectors(ref, kind)
            db.execute(f"CREATE TABLE IF NOT EXISTS {table} (rowid INTEGER PRIMARY KEY, vector BLOB NOT NULL)")

    def has_vectors(self, ref: str) -> bool:
        name = self.vectors(ref, "s")
        return self.value("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name) is not None

    # -- jobs -----------------------------------------------------------------------------

    def save_job(self, job_id: str, ref: str, created_at: float, body: dict[str, Any]) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO jobs (job_id, ref, created_at, body) VALUES (?, ?, ?, ?)",
                (job_id, ref, created_at, json.dumps(body, sort_keys=True)),
            )

    def jobs(self) -> list[dict[str, Any]]:
        return [json.loads(r["body"]) for r in self.rows("SELECT body FROM jobs ORDER BY created_at")]
