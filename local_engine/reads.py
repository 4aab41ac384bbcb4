"""The read routes of the contract (docs/upstream-contract.md, "Reads").

Search, retrieval, statements and their evidence, people and organizations, possible
duplicates, sources and disagreements, served from ``corpus.DEMO_RECORDS`` and the live
sources in :class:`EngineState`. Project-scoped routes answer one knowledge base; the
record routes (``/api/knowledge/{id}``, ``/api/entities/{id}``, ``/api/sources/{id}``) are
not project-scoped, as FORAGER's are not: they answer any id and carry its ``project_ref``.

Everything here is deterministic: the same corpus answers the same bytes.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from . import curation
from .corpus import (
    CHUNK_PAGE,
    CHUNK_TEXT_MAX,
    ConflictSpec,
    CorpusSpec,
    DuplicateSpec,
    EntitySpec,
    ItemSpec,
    Source,
    chunk_at,
    chunks_of,
    content_hash,
    record_id,
    wire_word,
)
from .knowledge import Knowledge
from .routing import ApiError, Handler, Request, Response, json_response
from .state import SEARCH_BACKEND, EngineState

REF = r"(?P<ref>[a-z0-9_]{1,64})"
ID = r"(?P<id>[a-z]+_[0-9a-f]{16})"
WORDS = re.compile(r"[a-z0-9_]+")
HISTORICAL = {"Superseded", "Archived"}
PEOPLE_SORTS = ("name", "mentions", "confidence")
CONFLICT_STATUSES = ("open", "resolved", "dismissed", "decided", "all")


@dataclass(frozen=True)
class Records:
    """One knowledge base's records, with their minted ids."""

    ref: str
    spec: CorpusSpec

    def item_id(self, key: str) -> str:
        return record_id("ki", self.ref, key)

    def entity_id(self, key: str) -> str:
        return record_id("ent", self.ref, key)

    def item(self, key: str) -> ItemSpec:
        return next(i for i in self.spec.items if i.key == key)

    def entity(self, key: str) -> EntitySpec:
        return next(e for e in self.spec.entities if e.key == key)


def _query(request: Request) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(request.query, keep_blank_values=True).items()}


def _int(query: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, "bad_request", f"{name} must be a whole number.") from None
    if not low <= value <= high:
        raise ApiError(400, "bad_request", f"{name} must be {low} to {high}.")
    return value


def _words(query: dict[str, str], name: str) -> set[str]:
    raw = query.get(name) or ""
    words = {w.strip() for w in raw.split(",") if w.strip()}
    if any(not WORDS.fullmatch(w) for w in words):
        raise ApiError(400, "bad_request", f"{name} takes lower-case words.")
    return words


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


class ReadsApi:
    """The read handlers over one :class:`EngineState`."""

    def __init__(self, state: EngineState) -> None:
        self.state = state
        self.index = Knowledge(state.store)

    @property
    def records(self) -> dict[str, Records]:
        """Each knowledge base's current records: the demo corpus as curation left it."""
        book = curation.ledger(self.state)
        with self.state.lock:
            return {ref: Records(ref, spec) for ref, spec in book.specs.items()}

    def routes(self) -> list[tuple[str, str, Handler]]:
        return [
            ("GET", rf"/api/projects/{REF}/search", self.search),
            ("POST", rf"/api/projects/{REF}/retrieve", self.retrieve),
            ("GET", rf"/api/knowledge/{ID}", self.knowledge_item),
            ("GET", rf"/api/knowledge/{ID}/evidence", self.evidence),
            ("GET", rf"/api/projects/{REF}/entities", self.entities_named),
            ("GET", rf"/api/projects/{REF}/people", self.people),
            ("GET", rf"/api/entities/{ID}", self.entity),
            ("GET", rf"/api/projects/{REF}/statements", self.statements),
            ("GET", rf"/api/projects/{REF}/duplicates", self.duplicates),
            ("GET", rf"/api/projects/{REF}/sources", self.sources),
            ("GET", rf"/api/sources/{ID}", self.source),
            ("GET", rf"/api/projects/{REF}/conflicts", self.conflicts),
        ]

    # -- lookups ---------------------------------------------------------------------

    def _project(self, request: Request) -> Records:
        ref = request.params["ref"]
        if self.state.get_project(ref) is None:
            raise ApiError(404, "not_found", f"No project {ref}.")
        return self.records.get(ref) or Records(ref, CorpusSpec())

    def _sources(self, ref: str) -> dict[str, Source]:
        with self.state.lock:
            return dict(self.state.sources.get(ref, {}))

    def _source_named(self, ref: str, name: str) -> Source | None:
        return next((s for s in self._sources(ref).values() if s.name == name), None)

    def _find(self, prefix: str, record_id_: str) -> tuple[Records, str]:
        for records in self.records.values():
            keys: list[str] = []
            if prefix == "ki":
                keys = [i.key for i in records.spec.items]
            elif prefix == "ent":
                keys = [e.key for e in records.spec.entities]
            for key in keys:
                if record_id(prefix, records.ref, key) == record_id_:
                    return records, key
        raise ApiError(404, "not_found", f"No record {record_id_}.")

    # -- rows ------------------------------------------------------------------------

    def _evidence(self, records: Records, item: ItemSpec) -> list[dict[str, Any]]:
        links = []
        for number, (name, excerpt) in enumerate(item.evidence):
            source = self._source_named(records.ref, name)
            chunk = chunk_at(source, excerpt) if source is not None else None
            found = chunk is not None
            links.append(
                {
                    "evidence_id": record_id("ev", records.ref, f"{item.key}/{number}"),
                    "knowledge_id": records.item_id(item.key),
                    "source_id": None if source is None else source.source_id,
                    "source_name": name,
                    "chunk_id": None if chunk is None else chunk.chunk_id,
                    "location": None if chunk is None else chunk.location,
                    "excerpt": excerpt if found else None,
                    "excerpt_hash": content_hash(excerpt),
                    "extractor": "deterministic-sentence",
                    "missing_excerpt": not found,
                }
            )
        return links

    def _conflicts_of(self, records: Records, key: str) -> list[ConflictSpec]:
        return [c for c in records.spec.conflicts if key in c.sides]

    def _entity_ref(self, records: Records, key: str) -> dict[str, Any]:
        entity = records.entity(key)
        return {"entity_id": records.entity_id(key), "name": entity.name, "type": entity.type}

    def _item_row(self, records: Records, item: ItemSpec) -> dict[str, Any]:
        conflicts = self._conflicts_of(records, item.key)
        return {
            "knowledge_id": records.item_id(item.key),
            "project_ref": records.ref,
            "title": item.title,
            "statement": item.statement,
            "type": item.type,
            "subject": item.subject,
            "support": item.support,
            "status": item.status,
            "confidence": item.confidence,
            "confidentiality": item.confidentiality,
            "review_status": item.review[0],
            "evidence_count": len(item.evidence),
            "conflict_ids": [record_id("cf", records.ref, c.key) for c in conflicts],
            "contested": any(c.status == "open" for c in conflicts),
            "effective_date": item.effective_date,
            "extraction_method": item.extraction_method,
            "entities": [self._entity_ref(records, k) for k in item.entities],
        }

    def _item_detail(self, records: Records, item: ItemSpec) -> dict[str, Any]:
        row = self._item_row(records, item)
        evidence = self._evidence(records, item)
        status, notes, by, at = item.review
        return {
            **row,
            "evidence_ids": [e["evidence_id"] for e in evidence],
            "has_provenance": any(not e["missing_excerpt"] for e in evidence),
            "review_status": status,
            "review_notes": notes,
            "reviewed_by": by,
            "reviewed_at": at,
            "created_at": item.created_at,
        }

    def _mentions(self, records: Records, entity: EntitySpec) -> list[dict[str, Any]]:
        mentions = []
        for source in self._sources(records.ref).values():
            for chunk in chunks_of(source):
                for term in entity.terms:
                    if term.lower() in chunk.text.lower():
                        mentions.append(
                            {
                                "source_id": source.source_id,
                                "source_name": source.name,
                                "chunk_id": chunk.chunk_id,
                                "text": chunk.text[:CHUNK_TEXT_MAX],
                                "confidence": entity.confidence,
                            }
                        )
        return mentions

    def _people_row(self, records: Records, entity: EntitySpec) -> dict[str, Any]:
        mentions = self._mentions(records, entity)
        return {
            "entity_id": records.entity_id(entity.key),
            "name": entity.name,
            "type": entity.type,
            "aliases": [alias for alias, _, _ in entity.aliases],
            "mention_count": len(mentions),
            "knowledge_count": sum(1 for i in records.spec.items if entity.key in i.entities),
            "source_count": len({m["source_id"] for m in mentions}),
            "confidence": entity.confidence,
            "merged_count": sum(1 for e in records.spec.entities if e.merged_into == entity.key),
            "status": "merged" if entity.merged_into else "active",
        }

    def _duplicate_row(self, records: Records, dup: DuplicateSpec) -> dict[str, Any]:
        def side(key: str) -> dict[str, Any]:
            entity = records.entity(key)
            return {**self._entity_ref(records, key), "aliases": [a for a, _, _ in entity.aliases]}

        return {
            "candidate_id": record_id("mc", records.ref, dup.key),
            "entity_a": side(dup.entity_a),
            "entity_b": side(dup.entity_b),
            "confidence": dup.confidence,
            "reason": dup.reason,
            "status": dup.status,
            "decided_by": dup.decided_by,
            "decided_at": dup.decided_at,
            "notes": dup.notes,
            "created_at": dup.created_at,
        }

    def _conflict_row(self, records: Records, conflict: ConflictSpec) -> dict[str, Any]:
        sides = [self._item_row(records, records.item(k)) for k in conflict.sides]
        names = {name for k in conflict.sides for name, _ in records.item(k).evidence}
        sources = [s for s in self._sources(records.ref).values() if s.name in names]
        decision = None if conflict.decision is None else dict(conflict.decision)
        if decision and decision.get("winner_id"):
            decision["winner_id"] = records.item_id(decision["winner_id"])
        return {
            "conflict_id": record_id("cf", records.ref, conflict.key),
            "project_ref": records.ref,
            "title": conflict.title,
            "type": conflict.type,
            "status": conflict.status,
            "sides": sides,
            "suggested_resolution": conflict.suggested_resolution,
            "suggested_winner_id": None
            if conflict.suggested_winner is None
            else records.item_id(conflict.suggested_winner),
            "sources": [
                {"source_id": s.source_id, "name": s.name, "type": s.type, "document_date": s.document_date}
                for s in sorted(sources, key=lambda s: s.name)
            ],
            "detected_at": conflict.detected_at,
            "decision": decision,
        }

    def _ranked(self, records: Records, query: str, include_historical: bool) -> list[tuple[float, ItemSpec]]:
        tokens = set(_tokens(query))
        ranked = []
        for item in records.spec.items:
            if item.status in HISTORICAL and not include_historical:
                continue
            words = Counter(_tokens(f"{item.title} {item.statement}"))
            score = sum(words[t] for t in tokens) * 1.0
            if score:
                ranked.append((round(score + item.confidence, 3), item))
        ranked.sort(key=lambda pair: (-pair[0], records.item_id(pair[1].key)))
        return ranked

    # -- handlers --------------------------------------------------------------------

    def search(self, request: Request) -> Response:
        started = time.perf_counter()
        records = self._project(request)
        query = _query(request)
        q = (query.get("q") or "").strip()
        if not q:
            raise ApiError(400, "bad_request", "q is required.")
        limit = _int(query, "limit", 20, 1, 50)
        historical = query.get("include_historical") == "true"
        ranked: list[tuple[float, dict[str, Any], str]] = []
        entity_keys: list[str] = []
        for score, item in self._ranked(records, q, historical)[:limit]:
            row = self._item_row(records, item)
            ranked.append((score, row, f"Full-text match in title and statement of this {item.type}"))
            entity_keys.extend(k for k in item.entities if k not in entity_keys)
        for score, found in self.index.search(records.ref, q, limit, historical):
            ranked.append((score, self.index.item_row(found["row"]), found["why"]))
        ranked.sort(key=lambda hit: (-hit[0], hit[1]["knowledge_id"]))
        hits = [
            {
                "knowledge_id": row["knowledge_id"],
                "statement": row["statement"],
                "type": row["type"],
                "support": row["support"],
                "status": row["status"],
                "confidence": row["confidence"],
                "score": score,
                "why": why,
                "evidence_count": row["evidence_count"],
                "contested": row["contested"],
            }
            for score, row, why in ranked[:limit]
        ]
        return json_response(
            200,
            {
                "query": q,
                "backend": SEARCH_BACKEND,
                "took_ms": round((time.perf_counter() - started) * 1000),
                "hits": hits,
                "entities": [self._entity_ref(records, k) for k in entity_keys],
            },
        )

    def retrieve(self, request: Request) -> Response:
        records = self._project(request)
        body = request.json_object()
        unknown = sorted(set(body) - {"query", "top_k", "include_historical"})
        if unknown:
            raise ApiError(400, "bad_request", f"Unknown field(s): {', '.join(unknown)}.")
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ApiError(400, "bad_request", "query is required.")
        top_k = body.get("top_k", 8)
        if not isinstance(top_k, int) or not 1 <= top_k <= 50:
            raise ApiError(400, "bad_request", "top_k must be 1 to 50.")
        historical = bool(body.get("include_historical"))
        scored: list[tuple[float, dict[str, Any]]] = []
        chosen = []
        for score, item in self._ranked(records, query, historical)[:top_k]:
            chosen.append(item)
            scored.append((score, {**self._item_row(records, item), "evidence": self._evidence(records, item)}))
        for score, found in self.index.search(records.ref, query, top_k, historical):
            row = found["row"]
            scored.append((score, {**self.index.item_row(row), "evidence": self.index.evidence(row["knowledge_id"])}))
        scored.sort(key=lambda pair: (-pair[0], pair[1]["knowledge_id"]))
        items = [item for _, item in scored[:top_k]]
        kept = {item["knowledge_id"] for item in items}
        chosen = [item for item in chosen if records.item_id(item.key) in kept]
        entity_keys: list[str] = []
        for item in chosen:
            entity_keys.extend(k for k in item.entities if k not in entity_keys)
        entities = [self._people_row(records, records.entity(k)) for k in entity_keys]
        conflict_specs = [c for c in records.spec.conflicts if any(i.key in c.sides for i in chosen)]
        conflicts = [self._conflict_row(records, c) for c in conflict_specs]
        payload = {
            "query": query.strip(),
            "items": items,
            "entities": entities,
            "conflicts": conflicts,
            "rendered": _render(query.strip(), items, entities, conflicts),
        }
        return json_response(200, payload)

    def knowledge_item(self, request: Request) -> Response:
        stored = self.index.item(request.params["id"])
        if stored is not None:
            return json_response(200, self.index.item_detail(stored))
        records, key = self._find("ki", request.params["id"])
        return json_response(200, self._item_detail(records, records.item(key)))

    def evidence(self, request: Request) -> Response:
        stored = self.index.item(request.params["id"])
        if stored is not None:
            payload = {"knowledge_id": stored["knowledge_id"], "project_ref": stored["ref"]}
            return json_response(200, {**payload, "evidence": self.index.evidence(stored["knowledge_id"])})
        records, key = self._find("ki", request.params["id"])
        return json_response(
            200,
            {
                "knowledge_id": request.params["id"],
                "project_ref": records.ref,
                "evidence": self._evidence(records, records.item(key)),
            },
        )

    def entities_named(self, request: Request) -> Response:
        records = self._project(request)
        name = (_query(request).get("name") or "").strip().lower()
        if not name:
            raise ApiError(400, "bad_request", "An entity name is required.")
        found = []
        for entity in records.spec.entities:
            if entity.merged_into:
                continue
            names = [entity.name, *(alias for alias, _, _ in entity.aliases)]
            matched = next((n for n in names if name in n.lower()), None)
            if matched is not None:
                found.append({**self._people_row(records, entity), "matched": matched})
        return json_response(200, {"entities": found})

    def people(self, request: Request) -> Response:
        records = self._project(request)
        query = _query(request)
        q = (query.get("q") or "").strip().lower()
        types = _words(query, "type")
        sort = query.get("sort") or "name"
        if sort not in PEOPLE_SORTS:
            raise ApiError(400, "bad_request", "sort must be name, mentions or confidence.")
        page = _int(query, "page", 1, 1, 1_000_000)
        page_size = _int(query, "page_size", 50, 1, 100)
        rows = []
        for entity in records.spec.entities:
            if entity.merged_into or (types and entity.type not in types):
                continue
            names = [entity.name, *(alias for alias, _, _ in entity.aliases)]
            if q and not any(q in n.lower() for n in names):
                continue
            rows.append(self._people_row(records, entity))
        if sort == "mentions":
            rows.sort(key=lambda r: (-r["mention_count"], r["name"]))
        elif sort == "confidence":
            rows.sort(key=lambda r: (r["confidence"], r["name"]))
        else:
            rows.sort(key=lambda r: r["name"].lower())
        start = (page - 1) * page_size
        return json_response(
            200, {"entities": rows[start : start + page_size], "page": page, "page_size": page_size, "total": len(rows)}
        )

    def entity(self, request: Request) -> Response:
        records, key = self._find("ent", request.params["id"])
        entity = records.entity(key)
        merged = [e for e in records.spec.entities if e.merged_into == key]
        payload = {
            "project_ref": records.ref,
            "entity": self._people_row(records, entity),
            "normalized_name": " ".join(_tokens(entity.name)),
            "merged_into": None if entity.merged_into is None else records.entity_id(entity.merged_into),
            "aliases": [
                {
                    "alias": alias,
                    "kind": kind,
                    "confidence": confidence,
                    "source_count": sum(1 for s in self._sources(records.ref).values() if alias in s.text),
                }
                for alias, kind, confidence in entity.aliases
            ],
            "merge_history": [
                {
                    "merged_entity_id": records.entity_id(m.key),
                    "merged_name": m.name,
                    "merged_by": "admin",
                    "reason": m.merge_reason,
                    "merged_at": "2026-09-01T11:00:00Z",
                }
                for m in merged
            ],
            "possible_duplicates": [
                self._duplicate_row(records, d)
                for d in records.spec.duplicates
                if d.status == "pending" and key in (d.entity_a, d.entity_b)
            ],
            "relationships": [
                {
                    "from_label": entity.name,
                    "type": r.type,
                    "to_label": r.to_label,
                    "statement": r.statement,
                    "support": r.support,
                    "confidence": r.confidence,
                }
                for r in records.spec.relations
                if r.from_key == key
            ],
            "statements": [self._item_row(records, i) for i in records.spec.items if key in i.entities],
            "mentions": self._mentions(records, entity),
            "attributes": dict(entity.attributes),
            "created_at": entity.created_at,
        }
        return json_response(200, payload)

    def statements(self, request: Request) -> Response:
        records = self._project(request)
        query = _query(request)
        filters = {name: _words(query, name) for name in ("type", "status", "support", "review_status")}
        source_id = query.get("source_id") or None
        entity_id = query.get("entity_id") or None
        q = (query.get("q") or "").strip().lower()
        page = _int(query, "page", 1, 1, 1_000_000)
        page_size = _int(query, "page_size", 25, 1, 100)
        candidates: list[tuple[dict[str, Any], Any]] = [(self._item_row(records, i), i) for i in records.spec.items]
        candidates += [(self.index.item_row(stored), None) for stored in self.index.statements(records.ref)]
        rows = []
        for row, item in candidates:
            words = {
                "type": row["type"],
                "status": wire_word(row["status"]),
                "support": wire_word(row["support"]),
                "review_status": row["review_status"],
            }
            if any(wanted and words[name] not in wanted for name, wanted in filters.items()):
                continue
            if q and q not in f"{row['title']} {row['statement']}".lower():
                continue
            if entity_id and entity_id not in {e["entity_id"] for e in row["entities"]}:
                continue
            if source_id and source_id not in self._sources_of(records, row, item):
                continue
            rows.append((row, words))
        facets: dict[str, dict[str, int]] = {name: {} for name in filters}
        for _, words in rows:
            for name in filters:
                facets[name][words[name]] = facets[name].get(words[name], 0) + 1
        start = (page - 1) * page_size
        return json_response(
            200,
            {
                "items": [row for row, _ in rows[start : start + page_size]],
                "page": page,
                "page_size": page_size,
                "total": len(rows),
                "facets": facets,
            },
        )

    def _sources_of(self, records: Records, row: dict[str, Any], item: ItemSpec | None) -> set[str]:
        """The sources a statement stands on: the fixture's evidence, or the store's."""
        if item is None:
            return self.index.statement_sources(row["knowledge_id"])
        return {str(e["source_id"]) for e in self._evidence(records, item) if e["source_id"]}

    def duplicates(self, request: Request) -> Response:
        records = self._project(request)
        status = _query(request).get("status") or "pending"
        if status not in ("pending", "all"):
            raise ApiError(400, "bad_request", "status must be pending or all.")
        rows = [
            self._duplicate_row(records, d) for d in records.spec.duplicates if status == "all" or d.status == "pending"
        ]
        pending = sum(1 for d in records.spec.duplicates if d.status == "pending")
        return json_response(200, {"duplicates": rows, "pending": pending})

    def sources(self, request: Request) -> Response:
        records = self._project(request)
        rows = [s.to_json() for s in self._sources(records.ref).values()] + self.index.sources(records.ref)
        return json_response(200, {"sources": sorted(rows, key=lambda s: (s["name"], s["source_id"]))})

    def source(self, request: Request) -> Response:
        wanted = request.params["id"]
        with self.state.lock:
            source = next(
                (s for per in self.state.sources.values() for s in per.values() if s.source_id == wanted), None
            )
        if source is None:
            page = self.index.source_page(wanted)
            if page is None:
                raise ApiError(404, "not_found", f"No source {wanted}.")
            return json_response(200, page)
        records = self.records.get(source.project_ref) or Records(source.project_ref, CorpusSpec())
        chunks = chunks_of(source)
        copies = [s for s in self._sources(source.project_ref).values() if s.duplicate_of == source.source_id]
        is_markdown = source.type == "markdown"
        payload = {
            "source": source.to_json(),
            "relative_path": source.name,
            "mime_type": "text/markdown" if is_markdown else "text/plain",
            "origin": "upload",
            "ingestion_status": source.processing_status,
            "error": None,
            "parser": "markdown" if is_markdown else "text",
            "char_count": len(source.text),
            "created_at": source.created_at,
            "knowledge_count": sum(
                1 for item in records.spec.items if any(name == source.name for name, _ in item.evidence)
            ),
            "duplicates": [c.to_json() for c in copies],
            "text": source.text,
            "chunks": [c.to_json(cut=CHUNK_TEXT_MAX) for c in chunks[:CHUNK_PAGE]],
            "chunk_total": len(chunks),
        }
        return json_response(200, payload)

    def conflicts(self, request: Request) -> Response:
        records = self._project(request)
        status = _query(request).get("status") or "open"
        if status not in CONFLICT_STATUSES:
            raise ApiError(400, "bad_request", f"status must be one of {', '.join(CONFLICT_STATUSES)}.")
        chosen = [
            c
            for c in records.spec.conflicts
            if status in ("all", c.status) or (status == "decided" and c.status in ("resolved", "dismissed"))
        ]
        if status == "decided":
            chosen.sort(key=lambda c: str((c.decision or {}).get("decided_at") or ""), reverse=True)
        return json_response(200, {"conflicts": [self._conflict_row(records, c) for c in chosen[:500]]})


def _render(query: str, items: list[dict[str, Any]], entities: list[dict[str, Any]], conflicts: list[Any]) -> str:
    """The text a model is given: every statement with its evidence, and every disagreement."""
    lines = [f"Knowledge for: {query}", ""]
    for number, item in enumerate(items, start=1):
        dated = f"; effective {item['effective_date']}" if item["effective_date"] else ""
        lines.append(f"[{number}] {item['statement']} ({item['status']}, confidence {item['confidence']}{dated})")
        for link in item["evidence"]:
            where = f"{link['source_name']} {link['location'] or ''}".strip()
            said = f'"{link["excerpt"]}"' if link["excerpt"] else "(excerpt no longer found in the source)"
            lines.append(f"    evidence: {where}: {said}")
    if conflicts:
        lines.extend(["", "Disagreements (never hidden):"])
        for conflict in conflicts:
            sides = " vs ".join(f'"{side["statement"]}"' for side in conflict["sides"])
            lines.append(f"- {conflict['title']} ({conflict['status']}): {sides}")
    if entities:
        lines.extend(["", "Entities:"])
        for entity in entities:
            also = f"; also {', '.join(entity['aliases'])}" if entity["aliases"] else ""
            lines.append(f"- {entity['name']} ({entity['type']}{also})")
    return "\n".join(lines) + "\n"
