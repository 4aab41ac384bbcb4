"""Reads over what the pipeline stored: search, statements, evidence, sources, a source's page.

Every answer is a query of the store (``store.py``); nothing here is written into the code.
Search is ``ranking.py``'s: BM25 over the knowledge base's own statement index and over its
chunks, and the statements' meaning, fused by reciprocal rank (docs/ranking.md). Evidence is the
source's stored text at the evidence's offsets, so the excerpt is exactly what the text says;
an excerpt whose hash no longer matches is ``missing_excerpt``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from local_engine.search.ranking import Ranked, Ranker
from local_engine.store.database import Store

CHUNK_PAGE = 200
CHUNK_TEXT_MAX = 400


def _hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def source_json(row: sqlite3.Row) -> dict[str, Any]:
    status = row["status"]
    return {
        "source_id": row["source_id"],
        "project_ref": row["ref"],
        "name": row["name"],
        "type": row["type"] or "unknown",
        "size_bytes": row["size_bytes"],
        "content_hash": row["content_hash"],
        "logical_content_hash": row["logical_content_hash"] or row["content_hash"],  # not read yet: its bytes
        "processing_status": status if status in ("completed", "failed", "duplicate") else "processing",
        "document_date": row["document_date"],
        "duplicate_of": row["duplicate_of"],
        "superseded_by": row["superseded_by"],
        "created_at": row["created_at"],
        "error": json.loads(row["error"]) if row["error"] else None,
    }


class Knowledge:
    """The pipeline's records of every knowledge base, as the read routes answer them."""

    def __init__(self, store: Store, meaning: bool = True) -> None:
        self.store = store
        self.ranker = Ranker(store, meaning)

    # -- statements -------------------------------------------------------------------

    def item_row(self, row: sqlite3.Row) -> dict[str, Any]:
        knowledge_id = row["knowledge_id"]
        evidence = int(self.store.value("SELECT COUNT(*) FROM evidence WHERE knowledge_id = ?", knowledge_id))
        conflicts = self.store.rows(
            "SELECT c.conflict_id, c.status FROM conflict_sides s JOIN conflicts c USING (conflict_id)"
            " WHERE s.knowledge_id = ? ORDER BY c.detected_at, c.conflict_id",
            knowledge_id,
        )
        return {
            "knowledge_id": knowledge_id,
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
            "conflict_ids": [c["conflict_id"] for c in conflicts],
            "contested": any(c["status"] == "open" for c in conflicts),
            "effective_date": row["effective_date"],
            "extraction_method": "deterministic",
            "entities": [self.entity_ref(e) for e in self.entities_of(knowledge_id)],
        }

    def entities_of(self, knowledge_id: str) -> list[sqlite3.Row]:
        """The entities a statement names, merged ones as the entity they were merged into."""
        return self.store.rows(
            "SELECT e.* FROM (SELECT coalesce(n.merged_into, n.entity_id) AS canonical, MIN(m.char_start) AS first"
            " FROM mentions m JOIN entities n USING (entity_id) WHERE m.knowledge_id = ? GROUP BY canonical) f"
            " JOIN entities e ON e.entity_id = f.canonical ORDER BY f.first",
            knowledge_id,
        )

    @staticmethod
    def entity_ref(row: sqlite3.Row) -> dict[str, Any]:
        return {"entity_id": row["entity_id"], "name": row["name"], "type": row["type"]}

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

    def search(self, ref: str, query: str, limit: int, include_historical: bool) -> Ranked:
        """The base's statements that answer ``query``, best first (``ranking.py``; docs/ranking.md):
        BM25 over the statements and over their passages, and meaning, fused by reciprocal rank;
        only statements that match."""
        return self.ranker.search(ref, query, limit, include_historical)

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

    # -- people and organizations -------------------------------------------------------------

    def entity(self, entity_id: str) -> sqlite3.Row | None:
        return self.store.row("SELECT * FROM entities WHERE entity_id = ?", entity_id)

    def _family(self, entity_id: str) -> list[str]:
        """An entity and every entity merged into it."""
        return [entity_id] + [
            str(r[0]) for r in self.store.rows("SELECT entity_id FROM entities WHERE merged_into = ?", entity_id)
        ]

    def _in(self, ids: list[str]) -> str:
        return ",".join("?" * len(ids)) or "''"

    def people_row(self, entity_id: str) -> dict[str, Any]:
        row = self.entity(entity_id)
        assert row is not None
        family = self._family(entity_id)
        counted = self.store.row(
            "SELECT COUNT(*) AS mentions, COUNT(DISTINCT knowledge_id) AS items, COUNT(DISTINCT source_id) AS sources"
            f" FROM mentions WHERE entity_id IN ({self._in(family)})",
            *family,
        )
        assert counted is not None
        return {
            "entity_id": entity_id,
            "name": row["name"],
            "type": row["type"],
            "aliases": [
                str(r[0])
                for r in self.store.rows(
                    "SELECT alias FROM aliases WHERE entity_id = ? ORDER BY kind, alias", entity_id
                )
            ],
            "mention_count": int(counted["mentions"]),
            "knowledge_count": int(counted["items"]),
            "source_count": int(counted["sources"]),
            "confidence": row["confidence"],
            "merged_count": len(family) - 1,
            "status": "merged" if row["merged_into"] else "active",
        }

    def people(self, ref: str, q: str, types: set[str], sort: str, page: int, size: int) -> tuple[list[Any], int]:
        """A page of a base's entities (merged ones aside), filtered and sorted in SQL."""
        where = ["e.ref = ?", "e.merged_into IS NULL"]
        args: list[Any] = [ref]
        if types:
            where.append(f"e.type IN ({self._in(sorted(types))})")
            args.extend(sorted(types))
        if q:
            where.append(
                "(instr(lower(e.name), ?) > 0 OR EXISTS (SELECT 1 FROM aliases a WHERE a.entity_id = e.entity_id"
                " AND instr(lower(a.alias), ?) > 0))"
            )
            args.extend([q, q])
        order = {
            "name": "lower(e.name), e.entity_id",
            "mentions": "mentions DESC, lower(e.name), e.entity_id",
            "confidence": "e.confidence, lower(e.name), e.entity_id",
        }[sort]
        clause = " AND ".join(where)
        total = int(self.store.value(f"SELECT COUNT(*) FROM entities e WHERE {clause}", *args) or 0)
        rows = self.store.rows(
            "SELECT e.entity_id, (SELECT COUNT(*) FROM mentions m JOIN entities f USING (entity_id)"
            " WHERE f.entity_id = e.entity_id OR f.merged_into = e.entity_id) AS mentions"
            f" FROM entities e WHERE {clause} ORDER BY {order} LIMIT ? OFFSET ?",
            *args,
            size,
            (page - 1) * size,
        )
        return [self.people_row(r["entity_id"]) for r in rows], total

    def named(self, ref: str, name: str) -> list[dict[str, Any]]:
        """Entities whose name or an alias holds ``name`` (folded), merged ones as their keeper."""
        rows = self.store.rows(
            "SELECT e.entity_id, e.name, (SELECT a.alias FROM aliases a WHERE a.entity_id = e.entity_id"
            " AND instr(lower(a.alias), ?) > 0 ORDER BY a.alias LIMIT 1) AS alias"
            " FROM entities e WHERE e.ref = ? AND e.merged_into IS NULL ORDER BY lower(e.name), e.entity_id",
            name,
            ref,
        )
        found = []
        for row in rows:
            matched = row["name"] if name in row["name"].lower() else row["alias"]
            if matched is not None:
                found.append({**self.people_row(row["entity_id"]), "matched": matched})
        return found

    def duplicate_row(self, candidate_id: str) -> dict[str, Any]:
        row = self.store.row("SELECT * FROM candidates WHERE candidate_id = ?", candidate_id)
        assert row is not None

        def side(entity_id: str) -> dict[str, Any]:
            entity = self.entity(entity_id)
            assert entity is not None
            aliases = self.store.rows("SELECT alias FROM aliases WHERE entity_id = ? ORDER BY kind, alias", entity_id)
            return {**self.entity_ref(entity), "aliases": [str(a[0]) for a in aliases]}

        return {
            "candidate_id": candidate_id,
            "entity_a": side(row["entity_a"]),
            "entity_b": side(row["entity_b"]),
            "confidence": row["confidence"],
            "reason": row["reason"],
            "status": row["status"],
            "decided_by": row["decided_by"],
            "decided_at": row["decided_at"],
            "notes": row["notes"],
            "created_at": row["created_at"],
        }

    def duplicates(self, ref: str, every: bool) -> tuple[list[dict[str, Any]], int]:
        rows = self.store.rows(
            "SELECT candidate_id, status FROM candidates WHERE ref = ? ORDER BY created_at, candidate_id", ref
        )
        pending = sum(1 for r in rows if r["status"] == "pending")
        return [self.duplicate_row(r["candidate_id"]) for r in rows if every or r["status"] == "pending"], pending

    def entity_detail(self, entity_id: str) -> dict[str, Any] | None:
        row = self.entity(entity_id)
        if row is None:
            return None
        family = self._family(entity_id)
        marks = self._in(family)
        names = {
            r["entity_id"]: r["name"]
            for r in self.store.rows("SELECT entity_id, name, merged_into FROM entities WHERE ref = ?", row["ref"])
        }
        keeper = {
            r["entity_id"]: r["merged_into"] or r["entity_id"]
            for r in self.store.rows("SELECT entity_id, merged_into FROM entities WHERE ref = ?", row["ref"])
        }
        relationships = self.store.rows(
            "SELECT r.*, s.statement FROM relationships r JOIN statements s USING (knowledge_id)"
            f" WHERE r.from_entity IN ({marks}) OR r.to_entity IN ({marks}) ORDER BY s.rowid",
            *family,
            *family,
        )
        statements = self.store.rows(
            "SELECT s.* FROM statements s WHERE s.knowledge_id IN (SELECT knowledge_id FROM mentions"
            f" WHERE entity_id IN ({marks})) AND s.indexed = 1 ORDER BY s.created_at, s.source_id, s.char_start"
            " LIMIT 200",
            *family,
        )
        mentions = self.store.rows(
            "SELECT m.*, s.name AS source_name FROM mentions m JOIN sources s USING (source_id)"
            f" WHERE m.entity_id IN ({marks}) ORDER BY s.name, m.char_start LIMIT 200",
            *family,
        )
        merged = self.store.rows(
            "SELECT * FROM entities WHERE merged_into = ? ORDER BY merged_at, entity_id", entity_id
        )
        pending = self.store.rows(
            "SELECT candidate_id FROM candidates WHERE status = 'pending' AND (entity_a = ? OR entity_b = ?)"
            " ORDER BY created_at, candidate_id",
            entity_id,
            entity_id,
        )
        return {
            "project_ref": row["ref"],
            "entity": self.people_row(entity_id),
            "normalized_name": row["normalized"],
            "merged_into": row["merged_into"],
            "aliases": [
                {
                    "alias": a["alias"],
                    "kind": a["kind"],
                    "confidence": a["confidence"],
                    "source_count": int(
                        self.store.value(
                            "SELECT COUNT(DISTINCT source_id) FROM mentions m JOIN entities e USING (entity_id)"
                            " WHERE m.ref = ? AND (lower(m.text) = lower(?) OR (? = 'email' AND e.attributes LIKE ?))",
                            row["ref"],
                            a["alias"],
                            a["kind"],
                            f"%{a['alias']}%",
                        )
                        or 0
                    ),
                }
                for a in self.store.rows("SELECT * FROM aliases WHERE entity_id = ? ORDER BY kind, alias", entity_id)
            ],
            "merge_history": [
                {
                    "merged_entity_id": m["entity_id"],
                    "merged_name": m["name"],
                    "merged_by": m["merged_by"],
                    "reason": m["merge_reason"],
                    "merged_at": m["merged_at"],
                }
                for m in merged
            ],
            "possible_duplicates": [self.duplicate_row(p["candidate_id"]) for p in pending],
            "relationships": [
                {
                    "from_label": names[keeper[r["from_entity"]]],
                    "type": r["type"],
                    "to_label": names[keeper[r["to_entity"]]],
                    "statement": r["statement"],
                    "support": "DirectFact",
                    "confidence": r["confidence"],
                }
                for r in relationships
            ],
            "statements": [self.item_row(s) for s in statements],
            "mentions": [
                {
                    "source_id": m["source_id"],
                    "source_name": m["source_name"],
                    "chunk_id": m["chunk_id"],
                    "text": m["text"],
                    "char_start": m["char_start"],
                    "char_end": m["char_end"],
                    "confidence": row["confidence"],
                }
                for m in mentions
            ],
            "attributes": self._attributes(family),
            "created_at": row["created_at"],
        }

    def _attributes(self, family: list[str]) -> dict[str, Any]:
        """What was found beside the entity and every name merged into it."""
        merged: dict[str, Any] = {}
        for entity_id in family:
            held = json.loads(
                self.store.value("SELECT attributes FROM entities WHERE entity_id = ?", entity_id) or "{}"
            )
            for key, values in held.items():
                kept = merged.setdefault(key, [])
                kept.extend(v for v in values if v not in kept)
        return merged

    # -- disagreements ---------------------------------------------------------------------------

    def conflict_row(self, conflict_id: str) -> dict[str, Any]:
        row = self.store.row("SELECT * FROM conflicts WHERE conflict_id = ?", conflict_id)
        assert row is not None
        sides = self.store.rows(
            "SELECT s.* FROM conflict_sides c JOIN statements s USING (knowledge_id) WHERE c.conflict_id = ?"
            " ORDER BY c.position",
            conflict_id,
        )
        sources = self.store.rows(
            "SELECT s.source_id, s.name, s.type, s.document_date FROM conflict_sources c JOIN sources s"
            " USING (source_id) WHERE c.conflict_id = ? ORDER BY s.name, s.source_id",
            conflict_id,
        )
        return {
            "conflict_id": conflict_id,
            "project_ref": row["ref"],
            "title": row["title"],
            "type": row["type"],
            "status": row["status"],
            "sides": [self.item_row(s) for s in sides],
            "suggested_resolution": row["suggested_resolution"],
            "suggested_winner_id": row["suggested_winner"],
            "sources": [
                {
                    "source_id": s["source_id"],
                    "name": s["name"],
                    "type": s["type"] or "unknown",
                    "document_date": s["document_date"],
                }
                for s in sources
            ],
            "detected_at": row["detected_at"],
            "decision": json.loads(row["decision"]) if row["decision"] else None,
        }

    def conflicts(self, ref: str, status: str, limit: int = 500) -> list[dict[str, Any]]:
        where, args = "ref = ?", [ref]
        if status == "decided":
            where += " AND status IN ('resolved', 'dismissed')"
            order = "json_extract(decision, '$.decided_at') DESC, conflict_id"
        else:
            order = "detected_at, conflict_id"
            if status != "all":
                where += " AND status = ?"
                args.append(status)
        rows = self.store.rows(
            f"SELECT conflict_id FROM conflicts WHERE {where} ORDER BY {order} LIMIT ?",
            *args,
            limit,
        )
        return [self.conflict_row(r["conflict_id"]) for r in rows]

    def conflicts_of(self, knowledge_ids: list[str]) -> list[dict[str, Any]]:
        rows = self.store.rows(
            f"SELECT DISTINCT conflict_id FROM conflict_sides WHERE knowledge_id IN ({self._in(knowledge_ids)})"
            " ORDER BY conflict_id",
            *knowledge_ids,
        )
        return [self.conflict_row(r["conflict_id"]) for r in rows]

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
