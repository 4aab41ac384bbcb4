"""Reads over what the pipeline stored: search, statements, evidence, sources, a source's page.

Every answer is a query of the store (``store.py``); nothing here is written into the code.
Search is FTS5 over the knowledge base's own statement index, ordered by ``bm25()`` (title
weighted 2, statement 1); a query's words are each quoted, so FTS5's operators (``AND``,
``NEAR``, ``*``, ``"``, ``:``) are read as words; the statements holding all of them are the
candidates first, then (while too few do) those holding any, all ranked by BM25. Evidence is the
source's stored text at the evidence's offsets, so the excerpt is exactly what the text says;
an excerpt whose hash no longer matches is ``missing_excerpt``.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from typing import Any

from .store import Store

HISTORICAL = ("Superseded", "Archived")
CHUNK_PAGE = 200
CHUNK_TEXT_MAX = 400
QUERY_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
MAX_QUERY_WORDS = 32
COMMON_SHARE = 0.05
"""A word in more of a base's statements than this share is common: it joins an ``AND``, not an ``OR``."""
COMMON_FLOOR = 200


def _hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def match_expression(query: str, joined: str = "OR") -> str | None:
    """The FTS5 MATCH text for a person's words: each word quoted (FTS5's operators are words),
    all of them (``AND``) or any (``OR``)."""
    words = [w.lower() for w in QUERY_WORDS.findall(query)][:MAX_QUERY_WORDS]
    return f" {joined} ".join(f'"{w}"' for w in dict.fromkeys(words)) or None


def source_json(row: sqlite3.Row) -> dict[str, Any]:
    status = row["status"]
    return {
        "source_id": row["source_id"],
        "project_ref": row["ref"],
        "name": row["name"],
        "type": row["type"] or "unknown",
        "size_bytes": row["size_bytes"],
        "content_hash": row["content_hash"],
        "logical_content_hash": row["logical_content_hash"],
        "processing_status": status if status in ("completed", "failed", "duplicate") else "processing",
        "document_date": row["document_date"],
        "duplicate_of": row["duplicate_of"],
        "superseded_by": row["superseded_by"],
        "created_at": row["created_at"],
        "error": json.loads(row["error"]) if row["error"] else None,
    }


class Knowledge:
    """The pipeline's records of every knowledge base, as the read routes answer them."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- statements -------------------------------------------------------------------

    def item_row(self, row: sqlite3.Row) -> dict[str, Any]:
        evidence = int(self.store.value("SELECT COUNT(*) FROM evidence WHERE knowledge_id = ?", row["knowledge_id"]))
        return {
            "knowledge_id": row["knowledge_id"],
            "project_ref": row["ref"],
            "title": row["title"],
            "statement": row["statement"],
            "type": row["type"],
            "subject": row["subject"],
            "support": row["support"],
            "status": row["status"],
            "confidence": row["confidence"],
            "confidentiality": "Tenant",
            "review_status": row["review_status"],
            "evidence_count": evidence,
            "conflict_ids": [],
            "contested": False,
            "effective_date": row["effective_date"],
            "extraction_method": "deterministic",
            "entities": [],
        }

    def item(self, knowledge_id: str) -> sqlite3.Row | None:
        return self.store.row("SELECT * FROM statements WHERE knowledge_id = ? AND indexed = 1", knowledge_id)

    def item_detail(self, row: sqlite3.Row) -> dict[str, Any]:
        evidence = self.evidence(row["knowledge_id"])
        return {
            **self.item_row(row),
            "evidence_ids": [e["evidence_id"] for e in evidence],
            "has_provenance": any(not e["missing_excerpt"] for e in evidence),
            "review_status": row["review_status"],
            "review_notes": row["review_notes"],
            "reviewed_by": row["reviewed_by"],
            "reviewed_at": row["reviewed_at"],
            "created_at": row["created_at"],
        }

    def evidence(self, knowledge_id: str) -> list[dict[str, Any]]:
        links = []
        for row in self.store.rows(
            # only the excerpt is read of the text (SQLite's substr counts characters, as Python's offsets do)
            "SELECT e.*, s.name AS source_name, substr(s.text, e.char_start + 1, e.char_end - e.char_start) AS excerpt"
            " FROM evidence e JOIN sources s USING (source_id)"
            " WHERE e.knowledge_id = ? ORDER BY e.char_start",
            knowledge_id,
        ):
            excerpt = row["excerpt"] or ""
            found = bool(excerpt) and _hash(excerpt) == row["excerpt_hash"]
            links.append(
                {
                    "evidence_id": row["evidence_id"],
                    "knowledge_id": knowledge_id,
                    "source_id": row["source_id"],
                    "source_name": row["source_name"],
                    "chunk_id": row["chunk_id"],
                    "location": row["location"],
                    "excerpt": excerpt if found else None,
                    "excerpt_hash": row["excerpt_hash"],
                    "extractor": row["extractor"],
                    "missing_excerpt": not found,
                    "char_start": row["char_start"],
                    "char_end": row["char_end"],
                }
            )
        return links

    def search(self, ref: str, query: str, limit: int, include_historical: bool) -> list[tuple[float, dict[str, Any]]]:
        """(score, hit) best first: BM25 over the base's own statement index. The candidates are the
        statements holding every word of the query, then, while fewer than ``limit`` do, those
        holding any of its informative words (an ``OR`` over a word in most statements would score
        most of a large base; docs/benchmarks.md, "Local engine")."""
        every, either = match_expression(query, "AND"), match_expression(query, "OR")
        if every is None or either is None or not self.store.has_index(ref):
            return []
        rows = self._ranked(ref, every, limit, include_historical)
        if len(rows) < limit and every != either:
            either = self._informative(ref, query) or either
            seen = {row["knowledge_id"] for row in rows}
            more = [r for r in self._ranked(ref, either, limit, include_historical) if r["knowledge_id"] not in seen]
            rows = sorted([*rows, *more[: limit - len(rows)]], key=lambda r: (r["rank"], r["knowledge_id"]))
        words = {w.lower() for w in QUERY_WORDS.findall(query)}
        found = []
        for row in rows:
            score = round(-float(row["rank"]), 3)
            said = {w.lower() for w in QUERY_WORDS.findall(f"{row['title']} {row['statement']}")}
            matched = sorted(words & said) or sorted(words)[:3]
            found.append((score, {"row": row, "why": f"BM25 full-text match on {', '.join(matched)}"}))
        return found

    def _informative(self, ref: str, query: str) -> str | None:
        """``OR`` over the query's words that are not in most of the base: a word in more than
        :data:`COMMON_SHARE` of its statements ranks little and costs a pass over them all
        (its count is read with a cap, so asking costs at most that many index rows)."""
        table = self.store.fts(ref, "s")
        total = int(self.store.value(f"SELECT count(*) FROM {table}_docsize") or 0)  # noqa: S608 - our table
        cap = max(COMMON_FLOOR, int(total * COMMON_SHARE))
        kept = []
        for word in dict.fromkeys(w.lower() for w in QUERY_WORDS.findall(query)[:MAX_QUERY_WORDS]):
            seen = self.store.value(
                f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",  # noqa: S608
                f'"{word}"',
                cap,
            )
            if int(seen or 0) < cap:
                kept.append(word)
        return " OR ".join(f'"{w}"' for w in kept) or None

    def _ranked(self, ref: str, expression: str, limit: int, include_historical: bool) -> list[sqlite3.Row]:
        hidden = () if include_historical else HISTORICAL
        marks = ",".join("?" * len(hidden)) or "''"
        table = self.store.fts(ref, "s")
        return self.store.rows(
            f"SELECT s.*, bm25({table}, 2.0, 1.0) AS rank"  # noqa: S608 - the base's own table
            f" FROM {table} f JOIN statements s ON s.rowid = f.rowid"
            f" WHERE f.{table} MATCH ? AND s.status NOT IN ({marks})"
            " ORDER BY rank, s.knowledge_id LIMIT ?",
            expression,
            *hidden,
            limit,
        )

    def statements(self, ref: str) -> list[sqlite3.Row]:
        return self.store.rows(
            "SELECT * FROM statements WHERE ref = ? AND indexed = 1 ORDER BY created_at, source_id, char_start", ref
        )

    def statement_sources(self, knowledge_id: str) -> set[str]:
        return {
            str(r[0]) for r in self.store.rows("SELECT source_id FROM evidence WHERE knowledge_id = ?", knowledge_id)
        }

    def review(
        self, knowledge_id: str, status: str, review_status: str, notes: str | None, actor: str, at: str
    ) -> None:
        with self.store.transaction() as db:
            db.execute(
                "UPDATE statements SET status = ?, review_status = ?, review_notes = ?, reviewed_by = ?,"
                " reviewed_at = ? WHERE knowledge_id = ?",
                (status, review_status, notes, actor, at, knowledge_id),
            )

    # -- sources --------------------------------------------------------------------------

    def sources(self, ref: str) -> list[dict[str, Any]]:
        return [source_json(r) for r in self.store.rows("SELECT * FROM sources WHERE ref = ? ORDER BY name", ref)]

    def counts(self, ref: str) -> tuple[int, int, bool]:
        """(sources, statements served, a job at work on the base)."""
        sources = int(self.store.value("SELECT COUNT(*) FROM sources WHERE ref = ?", ref) or 0)
        statements = int(
            self.store.value(
                "SELECT COUNT(*) FROM statements WHERE ref = ? AND indexed = 1 AND status != 'Archived'", ref
            )
            or 0
        )
        busy = self.store.value(
            "SELECT 1 FROM sources WHERE ref = ? AND status NOT IN ('completed', 'failed', 'duplicate') LIMIT 1", ref
        )
        return sources, statements, busy is not None

    def source_page(self, source_id: str) -> dict[str, Any] | None:
        row = self.store.row("SELECT * FROM sources WHERE source_id = ?", source_id)
        if row is None:
            return None
        chunks = self.store.rows("SELECT * FROM chunks WHERE source_id = ? ORDER BY idx", source_id)
        copies = self.store.rows("SELECT * FROM sources WHERE duplicate_of = ? ORDER BY name", source_id)
        text = row["text"] or ""
        knowledge = self.store.value("SELECT COUNT(*) FROM statements WHERE source_id = ? AND indexed = 1", source_id)
        return {
            "source": source_json(row),
            "relative_path": row["relative_path"],
            "mime_type": row["mime_type"] or "application/octet-stream",
            "origin": row["origin"],
            "ingestion_status": source_json(row)["processing_status"],
            "error": json.loads(row["error"]) if row["error"] else None,
            "parser": row["parser"],
            "char_count": len(text),
            "created_at": row["created_at"],
            "knowledge_count": int(knowledge or 0),
            "duplicates": [source_json(c) for c in copies],
            "text": text,
            "chunks": [
                {
                    "chunk_id": c["chunk_id"],
                    "index": c["idx"],
                    "location": f"line {c['line']}",
                    "heading": c["heading"],
                    "text": c["text"][:CHUNK_TEXT_MAX],
                    "char_start": c["char_start"],
                    "char_end": c["char_end"],
                    "token_estimate": max(1, len(c["text"]) // 4),
                    "content_hash": _hash(c["text"]),
                }
                for c in chunks[:CHUNK_PAGE]
            ],
            "chunk_total": len(chunks),
        }
