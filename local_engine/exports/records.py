"""An export's read step (``archives.py``, step 1): the rows of a knowledge base that an archive
holds, fetched in one hold of the engine's lock, then made into plain records sorted by id."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from local_engine.store.database import Store

FLAGS = (
    "include_sources",
    "include_chunks",
    "include_superseded",
    "include_general_learning",
    "include_mission_fixtures",
)
HISTORICAL = ("Superseded", "Archived")
RECORD_KINDS = ("source", "chunk", "statement", "evidence", "entity", "conflict")
STAT_NAMES = {
    "source": "sources",
    "chunk": "chunks",
    "statement": "statements",
    "evidence": "evidence",
    "entity": "entities",
    "conflict": "conflicts",
}


def flags(options: dict[str, Any]) -> dict[str, bool]:
    """The options that change what an archive holds, each true or false."""
    return {name: bool(options.get(name, False)) for name in FLAGS}


@dataclass
class Base:
    """A knowledge base as an export holds it: records by kind, each sorted by its id."""

    ref: str
    name: str
    records: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {k: [] for k in RECORD_KINDS})
    names: dict[str, str] = field(default_factory=dict)
    """Every entity's name, exported or not (a relationship may name one merged away)."""

    def stats(self) -> dict[str, int]:
        return {STAT_NAMES[kind]: len(self.records[kind]) for kind in RECORD_KINDS}


def _json(text: str | None, default: Any) -> Any:
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return text


def _hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_base(store: Store, ref: str, name: str, options: dict[str, Any]) -> Base:
    """The base's records as ``options`` ask (see the module's docstring)."""
    return assemble(ref, name, fetch(store, ref, options), options)


def fetch(store: Store, ref: str, options: dict[str, Any]) -> dict[str, list[sqlite3.Row]]:
    """Every row an archive of ``ref`` needs, table by table, in one hold of the engine's lock (the
    caller may hold it longer, to read the revision the rows are of in the same cut)."""
    wanted = flags(options)
    historical = wanted["include_superseded"]
    with store.lock:
        sources = store.rows(
            "SELECT * FROM sources WHERE ref = ? AND status = 'completed' ORDER BY source_id",
            ref,
        )
        chunks = (
            store.rows(
                "SELECT c.* FROM chunks c JOIN sources s USING (source_id)"
                " WHERE c.ref = ? AND s.status = 'completed' ORDER BY c.chunk_id",
                ref,
            )
            if wanted["include_chunks"]
            else []
        )
        served = "k.ref = ? AND k.indexed = 1" + (
            "" if historical else " AND k.status NOT IN ('Superseded', 'Archived')"
        )
        statements = store.rows(f"SELECT k.* FROM statements k WHERE {served} ORDER BY k.knowledge_id", ref)  # noqa: S608
        evidence = store.rows(
            "SELECT e.*, substr(s.text, e.char_start + 1, e.char_end - e.char_start) AS excerpt"  # noqa: S608 - our clause
            " FROM evidence e JOIN statements k USING (knowledge_id) JOIN sources s ON s.source_id = e.source_id"
            f" WHERE {served} ORDER BY e.evidence_id",
            ref,
        )
        entities = store.rows("SELECT * FROM entities WHERE ref = ? ORDER BY entity_id", ref)
        aliases = store.rows(
            "SELECT a.* FROM aliases a JOIN entities e USING (entity_id) WHERE e.ref = ? ORDER BY a.entity_id, a.alias",
            ref,
        )
        mentions = store.rows(
            "SELECT entity_id, source_id, knowledge_id FROM mentions WHERE ref = ?"
            " ORDER BY entity_id, source_id, char_start",
            ref,
        )
        relationships = store.rows(
            "SELECT r.* FROM relationships r JOIN entities e ON e.entity_id = r.from_entity"
            " WHERE e.ref = ? ORDER BY r.from_entity, r.type, r.to_entity, r.knowledge_id",
            ref,
        )
        conflicts = store.rows("SELECT * FROM conflicts WHERE ref = ? ORDER BY conflict_id", ref)
        sides = store.rows(
            "SELECT cs.conflict_id, cs.knowledge_id, cs.position, k.title, k.statement, k.status"
            " FROM conflict_sides cs JOIN conflicts c USING (conflict_id)"
            " LEFT JOIN statements k ON k.knowledge_id = cs.knowledge_id"
            " WHERE c.ref = ? ORDER BY cs.conflict_id, cs.position, cs.knowledge_id",
            ref,
        )
    return {
        "sources": sources,
        "chunks": chunks,
        "statements": statements,
        "evidence": evidence,
        "entities": entities,
        "aliases": aliases,
        "mentions": mentions,
        "relationships": relationships,
        "conflicts": conflicts,
        "sides": sides,
    }


def assemble(ref: str, name: str, rows: dict[str, list[sqlite3.Row]], options: dict[str, Any]) -> Base:
    """The records of what :func:`fetch` read (no lock held: the rows are the cut)."""
    wanted = flags(options)
    historical = wanted["include_superseded"]
    base = Base(ref=ref, name=name)
    sources, chunks, statements, evidence = rows["sources"], rows["chunks"], rows["statements"], rows["evidence"]
    entities, aliases, mentions, relationships = (
        rows["entities"],
        rows["aliases"],
        rows["mentions"],
        rows["relationships"],
    )
    conflicts, sides = rows["conflicts"], rows["sides"]
    kept = {str(r["knowledge_id"]) for r in statements}
    _sources(base, sources, wanted["include_sources"])
    base.records["chunk"] = [_chunk(r) for r in chunks]
    by_item: dict[str, list[str]] = defaultdict(list)
    base.records["evidence"] = [_evidence(r) for r in evidence]
    for link in base.records["evidence"]:
        by_item[link["knowledge_id"]].append(link["evidence_id"])
    items_of, sources_of, mention_count, entities_of = _mentions(mentions, kept)
    conflict_sides: dict[str, list[dict[str, Any]]] = defaultdict(list)
    conflicts_of: dict[str, list[str]] = defaultdict(list)
    for side in sides:
        conflict_sides[side["conflict_id"]].append(
            {
                "knowledge_id": side["knowledge_id"],
                "position": side["position"],
                "title": side["title"],
                "statement": side["statement"],
                "status": side["status"],
                "exported": side["knowledge_id"] in kept,
            }
        )
        conflicts_of[side["knowledge_id"]].append(side["conflict_id"])
    base.records["statement"] = [
        _statement(r, sorted(entities_of[r["knowledge_id"]]), sorted(set(conflicts_of[r["knowledge_id"]])),
                   by_item[r["knowledge_id"]])
        for r in statements
    ]  # fmt: skip
    base.names = {str(r["entity_id"]): str(r["name"]) for r in entities}
    alias_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in aliases:
        alias_rows[row["entity_id"]].append(
            {"alias": row["alias"], "kind": row["kind"], "confidence": row["confidence"]}
        )
    outgoing: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in relationships:
        if row["knowledge_id"] in kept:
            outgoing[row["from_entity"]].append(
                {"type": row["type"], "to_entity": row["to_entity"], "knowledge_id": row["knowledge_id"],
                 "source_id": row["source_id"], "confidence": row["confidence"]}
            )  # fmt: skip
    base.records["entity"] = [
        {
            "record_type": "entity",
            "entity_id": r["entity_id"],
            "name": r["name"],
            "normalized_name": r["normalized"],
            "type": r["type"],
            "confidence": r["confidence"],
            "attributes": _json(r["attributes"], {}),
            "aliases": alias_rows[r["entity_id"]],
            "merged_into": r["merged_into"],
            "mention_count": mention_count[r["entity_id"]],
            "knowledge_ids": sorted(items_of[r["entity_id"]]),
            "source_ids": sorted(sources_of[r["entity_id"]]),
            "relationships": outgoing[r["entity_id"]],
            "created_at": r["created_at"],
        }
        for r in entities
        if r["merged_into"] is None or historical
    ]
    base.records["conflict"] = [
        {
            "record_type": "conflict",
            "conflict_id": r["conflict_id"],
            "title": r["title"],
            "type": r["type"],
            "status": r["status"],
            "suggested_resolution": r["suggested_resolution"],
            "suggested_winner": r["suggested_winner"],
            "decision": _json(r["decision"], None),
            "detected_at": r["detected_at"],
            "sides": conflict_sides[r["conflict_id"]],
        }
        for r in conflicts
    ]
    return base


def _sources(base: Base, rows: list[sqlite3.Row], with_text: bool) -> None:
    for r in rows:
        text = r["text"] or ""
        record = {
            "record_type": "source",
            "source_id": r["source_id"],
            "name": r["name"],
            "relative_path": r["relative_path"],
            "type": r["type"] or "unknown",
            "mime_type": r["mime_type"] or "application/octet-stream",
            "parser": r["parser"],
            "size_bytes": r["size_bytes"],
            "content_hash": r["content_hash"],
            "logical_content_hash": r["logical_content_hash"],
            "document_date": r["document_date"],
            "superseded_by": r["superseded_by"],
            "char_count": len(text),
            "created_at": r["created_at"],
        }
        if with_text:
            record["text"] = text
        base.records["source"].append(record)


def _chunk(r: sqlite3.Row) -> dict[str, Any]:
    return {
        "record_type": "chunk",
        "chunk_id": r["chunk_id"],
        "source_id": r["source_id"],
        "index": r["idx"],
        "heading": r["heading"],
        "line": r["line"],
        "char_start": r["char_start"],
        "char_end": r["char_end"],
        "text": r["text"],
        "token_estimate": max(1, len(r["text"]) // 4),
        "content_hash": _hash(r["text"]),
    }


def _evidence(r: sqlite3.Row) -> dict[str, Any]:
    excerpt = r["excerpt"] or ""
    found = bool(excerpt) and _hash(excerpt) == r["excerpt_hash"]
    return {
        "record_type": "evidence",
        "evidence_id": r["evidence_id"],
        "knowledge_id": r["knowledge_id"],
        "source_id": r["source_id"],
        "chunk_id": r["chunk_id"],
        "char_start": r["char_start"],
        "char_end": r["char_end"],
        "line": r["line"],
        "location": r["location"],
        "excerpt": excerpt if found else None,
        "excerpt_hash": r["excerpt_hash"],
        "extractor": r["extractor"],
        "missing_excerpt": not found,
    }


def _mentions(
    rows: list[sqlite3.Row], kept: set[str]
) -> tuple[dict[str, set[str]], dict[str, set[str]], dict[str, int], dict[str, set[str]]]:
    """(entity → its exported statements, entity → its sources, entity → mentions, statement → entities)."""
    items_of: dict[str, set[str]] = defaultdict(set)
    sources_of: dict[str, set[str]] = defaultdict(set)
    count: dict[str, int] = defaultdict(int)
    entities_of: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        entity = str(row["entity_id"])
        count[entity] += 1
        sources_of[entity].add(str(row["source_id"]))
        item = row["knowledge_id"]
        if item is not None and item in kept:
            items_of[entity].add(str(item))
            entities_of[str(item)].add(entity)
    return items_of, sources_of, count, entities_of


def _statement(r: sqlite3.Row, entities: list[str], conflicts: list[str], evidence: list[str]) -> dict[str, Any]:
    return {
        "record_type": "statement",
        "knowledge_id": r["knowledge_id"],
        "title": r["title"],
        "statement": r["statement"],
        "type": r["type"],
        "subject": r["subject"],
        "support": r["support"],
        "status": r["status"],
        "confidence": r["confidence"],
        "effective_date": r["effective_date"],
        "review_status": r["review_status"],
        "review_notes": r["review_notes"],
        "reviewed_by": r["reviewed_by"],
        "reviewed_at": r["reviewed_at"],
        "source_id": r["source_id"],
        "chunk_id": r["chunk_id"],
        "char_start": r["char_start"],
        "char_end": r["char_end"],
        "created_at": r["created_at"],
        "entity_ids": entities,
        "conflict_ids": conflicts,
        "evidence_ids": evidence,
    }
