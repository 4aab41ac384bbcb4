"""Page search: the search row every write lands, and the SQLite FTS5 index over those rows.

The **search row** is what the one write path (``Pages._write`` and ``Pages.delete``) lands in
the same DynamoDB transaction as the page's head (``storage/page_store.py``): the canonical
path, the frontmatter's title, type, status and tags, the body after the frontmatter block
(its first :data:`MAX_INDEXED_BODY_BYTES` bytes) and the version. A delete removes it.

The **index** is an SQLite FTS5 table (Python's own ``sqlite3``) over those rows: ``doc`` holds
the rows, ``fts`` indexes them (external content, so the text is stored once), ``tag`` the
tags for the exact tag filter. A project's index is a snapshot file (``storage/search_store.py``
keeps it in S3) plus the rows written since, which a query applies inside a transaction it
rolls back (:meth:`Index.search` with ``overlay``): the answer is the one a fresh index of the
current rows gives, ranking included, and the snapshot stays as it was.
"""

from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowledge_service.errors import BadRequest

MAX_INDEXED_BODY_BYTES = 16 * 1024
"""How much of a page's body its search row holds (and the index reads): the first 16 KiB of
UTF-8, cut on a character boundary. Path, title, tags, type and status are always whole."""
MAX_QUERY_CHARS = 256
MAX_LIMIT = 50
DEFAULT_LIMIT = 20
MAX_OFFSET = 1000
SNIPPET_TOKENS = 16
_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use marks around a hit inside FTS5's snippet()
# bm25 weights per column (path, title, tags, type, status, body): a title hit outranks a body hit.
_WEIGHTS = (4.0, 10.0, 5.0, 2.0, 2.0, 1.0)

SCHEMA = """
CREATE TABLE IF NOT EXISTS doc (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    tags TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    body TEXT NOT NULL,
    tag_list TEXT NOT NULL,
    version TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tag (doc INTEGER NOT NULL, tag TEXT NOT NULL COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS tag_by_tag ON tag (tag, doc);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    path, title, tags, type, status, body,
    content='doc', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
"""


@dataclass(frozen=True)
class SearchRow:
    """One page's search row, as the write path lands it and the index reads it."""

    path: str
    title: str
    type: str
    status: str
    tags: tuple[str, ...]
    body: str
    version: str

    def item(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "title": self.title,
            "type": self.type,
            "status": self.status,
            "tags": list(self.tags),
            "body": self.body,
            "version": self.version,
        }

    @classmethod
    def of(cls, item: dict[str, Any]) -> SearchRow:
        return cls(
            path=str(item["path"]),
            title=str(item.get("title") or ""),
            type=str(item.get("type") or ""),
            status=str(item.get("status") or ""),
            tags=tuple(str(t) for t in (item.get("tags") or [])),
            body=str(item.get("body") or ""),
            version=str(item.get("version") or ""),
        )


def _clean(text: str) -> str:
    return text.replace(_OPEN, "").replace(_CLOSE, "")


def bounded(text: str, limit: int = MAX_INDEXED_BODY_BYTES) -> str:
    """``text``'s first ``limit`` bytes of UTF-8, never cutting a character."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore")


def search_row(path: str, content: str, meta: dict[str, Any], version: str) -> SearchRow:
    """The row a write of ``content`` at ``path`` lands: ``meta`` is what ``describe`` read."""
    fm = meta.get("fm") or {}
    body = content
    if meta.get("fm_state") == "read":
        lines = content.splitlines(keepends=True)
        close = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") == "---"), None)
        body = "".join(lines[close + 1 :]) if close is not None else content
    return SearchRow(
        path=path,
        title=_clean(str(fm.get("title") or meta.get("heading") or "")),
        type=_clean(str(fm.get("type") or "")),
        status=_clean(str(fm.get("status") or "")),
        tags=tuple(_clean(str(t)) for t in (fm.get("tags") or [])),
        body=bounded(_clean(body)),
        version=version,
    )


# ---------------------------------------------------------------------- the query
@dataclass(frozen=True)
class Query:
    """A parsed search: the FTS5 expression, the filters and the page."""

    text: str
    match: str
    tag: str | None = None
    type: str | None = None
    status: str | None = None
    offset: int = 0
    limit: int = DEFAULT_LIMIT


_TOKEN = re.compile(r'"([^"]*)"|(\S+)')


def parse_query(
    q: str,
    *,
    tag: str | None = None,
    type: str | None = None,
    status: str | None = None,
    offset: int = 0,
    limit: int = DEFAULT_LIMIT,
) -> Query:
    """``q`` as an FTS5 expression that cannot be a syntax error: every word and every
    ``"quoted phrase"`` becomes a quoted FTS5 phrase (all must match); a word ending in ``*``
    matches as a prefix. FTS5's own operators are not offered, so any text is a query: a
    control character reads as a space, and a query holding no word finds nothing."""
    if len(q) > MAX_QUERY_CHARS:
        raise BadRequest(
            "q", f"is {len(q)} characters; a search holds at most {MAX_QUERY_CHARS}.", code="invalid_argument"
        )
    if not 0 <= offset <= MAX_OFFSET:
        raise BadRequest("offset", f"must be between 0 and {MAX_OFFSET}.", code="invalid_argument")
    if not 1 <= limit <= MAX_LIMIT:
        raise BadRequest("limit", f"must be between 1 and {MAX_LIMIT}.", code="invalid_argument")
    text = "".join(" " if unicodedata.category(c) == "Cc" else c for c in _clean(q))
    terms: list[str] = []
    for phrase, word in _TOKEN.findall(text):
        prefix = bool(word) and word.endswith("*")
        core = (phrase or word.rstrip("*").replace('"', " ")).strip()
        if core:
            terms.append('"' + core.replace('"', '""') + '"' + ("*" if prefix else ""))
    return Query(q, " ".join(terms), tag or None, type or None, status or None, offset, limit)


@dataclass
class Hits:
    """A page of hits, best first, and how many pages matched in all."""

    hits: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0


def _fragments(snippet: str) -> list[dict[str, Any]]:
    """FTS5's snippet with our marks, as ``[{text, hit}]``: text a renderer shows as text."""
    out: list[dict[str, Any]] = []
    rest = snippet
    while rest:
        start = rest.find(_OPEN)
        if start < 0:
            out.append({"text": rest, "hit": False})
            break
        if start:
            out.append({"text": rest[:start], "hit": False})
        end = rest.find(_CLOSE, start)
        end = len(rest) if end < 0 else end
        out.append({"text": rest[start + 1 : end], "hit": True})
        rest = rest[end + 1 :]
    return [f for f in out if f["text"]]


# ---------------------------------------------------------------------- the index
class Index:
    """An FTS5 index of search rows in one SQLite database (a file, or memory)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.db = connection
        self.db.executescript(SCHEMA)

    @classmethod
    def memory(cls) -> Index:
        return cls(sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False))

    @classmethod
    def open(cls, file: Path) -> Index:
        return cls(sqlite3.connect(str(file), isolation_level=None, check_same_thread=False))

    def close(self) -> None:
        self.db.close()

    def __len__(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM doc").fetchone()[0])

    def _remove(self, path: str) -> None:
        old = self.db.execute(
            "SELECT id, path, title, tags, type, status, body FROM doc WHERE path = ?", (path,)
        ).fetchone()
        if old is None:
            return
        self.db.execute(
            "INSERT INTO fts(fts, rowid, path, title, tags, type, status, body) VALUES('delete', ?, ?, ?, ?, ?, ?, ?)",
            old,
        )
        self.db.execute("DELETE FROM tag WHERE doc = ?", (old[0],))
        self.db.execute("DELETE FROM doc WHERE id = ?", (old[0],))

    def _put(self, row: SearchRow) -> None:
        self._remove(row.path)
        values = (row.path, row.title, " ".join(row.tags), row.type, row.status, row.body)
        cursor = self.db.execute(
            "INSERT INTO doc (path, title, tags, type, status, body, tag_list, version)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (*values, json.dumps(list(row.tags)), row.version),
        )
        rowid = cursor.lastrowid
        self.db.execute(
            "INSERT INTO fts(rowid, path, title, tags, type, status, body) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (rowid, *values),
        )
        self.db.executemany("INSERT INTO tag (doc, tag) VALUES (?, ?)", [(rowid, t) for t in set(row.tags)])

    def apply(self, changes: Iterable[tuple[str, SearchRow | None]]) -> None:
        """Each ``(path, row)``: the row replaces the path's, or ``None`` removes it."""
        for path, row in changes:
            if row is None:
                self._remove(path)
            else:
                self._put(row)

    def commit(self, changes: Iterable[tuple[str, SearchRow | None]]) -> None:
        self.db.execute("BEGIN")
        try:
            self.apply(changes)
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        self.db.execute("INSERT INTO fts(fts) VALUES('optimize')")

    def search(self, query: Query, overlay: Sequence[tuple[str, SearchRow | None]] = ()) -> Hits:
        """The query's page of hits over this index with ``overlay`` applied (and rolled back)."""
        self.db.execute("BEGIN")
        try:
            self.apply(overlay)
            return self._search(query)
        finally:
            self.db.execute("ROLLBACK")

    def _search(self, query: Query) -> Hits:
        if not query.match:  # no word to look for: nothing matches
            return Hits()
        where = ["fts MATCH ?"]
        args: list[Any] = [query.match]
        if query.type is not None:
            where.append("d.type = ? COLLATE NOCASE")
            args.append(query.type)
        if query.status is not None:
            where.append("d.status = ? COLLATE NOCASE")
            args.append(query.status)
        if query.tag is not None:
            where.append("EXISTS (SELECT 1 FROM tag t WHERE t.doc = d.id AND t.tag = ?)")
            args.append(query.tag)
        # Only this module's constant clauses are joined into the SQL; every value is a parameter.
        condition = " AND ".join(where)
        weights = ", ".join(str(w) for w in _WEIGHTS)
        count_sql = f"SELECT count(*) FROM fts JOIN doc d ON d.id = fts.rowid WHERE {condition}"  # noqa: S608
        total = int(self.db.execute(count_sql, args).fetchone()[0])
        rows = self.db.execute(
            f"SELECT d.path, d.title, d.type, d.status, d.tag_list, d.version, "  # noqa: S608
            f"snippet(fts, -1, ?, ?, '…', {SNIPPET_TOKENS}), bm25(fts, {weights}) AS score "
            f"FROM fts JOIN doc d ON d.id = fts.rowid WHERE {condition} "
            f"ORDER BY score, d.path LIMIT ? OFFSET ?",
            [_OPEN, _CLOSE, *args, query.limit, query.offset],
        ).fetchall()
        return Hits(
            [
                {
                    "path": path,
                    "title": title or None,
                    "type": type_ or None,
                    "status": status or None,
                    "tags": json.loads(tags),
                    "version": version,
                    "snippet": _fragments(snippet or ""),
                    "score": round(-float(score), 6),
                }
                for path, title, type_, status, tags, version, snippet, score in rows
            ],
            total,
        )

    def save(self, file: Path) -> None:
        """A compact copy of this index in ``file`` (a snapshot's bytes)."""
        target = sqlite3.connect(str(file))
        try:
            self.db.backup(target)
            target.execute("VACUUM")
        finally:
            target.close()


__all__ = [
    "DEFAULT_LIMIT",
    "MAX_INDEXED_BODY_BYTES",
    "MAX_LIMIT",
    "MAX_OFFSET",
    "Hits",
    "Index",
    "Query",
    "SearchRow",
    "parse_query",
    "search_row",
]
