"""The read routes of the contract (docs/upstream-contract.md, "Reads").

Search, retrieval, statements and their evidence, people and organizations, possible
duplicates, sources and disagreements: every answer a query of the store the pipeline wrote
(``knowledge.py``), the demo bases included (they are documents the pipeline read at the first
start, ``demo.py``). Project-scoped routes answer one knowledge base; the record routes
(``/api/knowledge/{id}``, ``/api/entities/{id}``, ``/api/sources/{id}``) are not project-scoped,
as FORAGER's are not: they answer any id and carry its ``project_ref``.
"""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import parse_qs

from local_engine.search.queries import Knowledge
from local_engine.serving.routing import ApiError, Handler, Request, Response, json_response
from local_engine.serving.state import EngineState

REF = r"(?P<ref>[a-z0-9_]{1,64})"
ID = r"(?P<id>[a-z]+_[0-9a-f]{16})"
WORDS = re.compile(r"[a-z0-9_]+")
MARKUP = (
    (re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*\)"), r"\1"),  # a link or an image: its words
    (re.compile(r":[\w:.+-]+:`([^`<]*?)\s*(?:<[^>`]*>)?`"), r"\1"),  # a reST role: its words
    (re.compile(r"`{1,2}([^`]+?)`{1,2}_?"), r"\1"),  # code and literals: their words
    (re.compile(r"(\*{1,3}|(?<!\w)_{1,3})(\S(?:.*?\S)?)\1(?!\w)"), r"\2"),  # emphasis
    (re.compile(r"</?[A-Za-z][^<>\n]*>"), ""),  # an HTML tag
)
LINE_MARKS = re.compile(r"^[ \t]*(?:>[ \t]?)*(?:#{1,6}[ \t]+|[-*+][ \t]+|\d+[.)][ \t]+)?")
PEOPLE_SORTS = ("name", "mentions", "confidence")
CONFLICT_STATUSES = ("open", "resolved", "dismissed", "decided", "all")


def wire_word(enum_name: str) -> str:
    """``DirectFact`` -> ``direct_fact``: the filter word for an enum name."""
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(enum_name))


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


class ReadsApi:
    """The read handlers over one :class:`EngineState`."""

    def __init__(self, state: EngineState) -> None:
        self.state = state
        self.index = Knowledge(state.store, state.vectors)

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

    def _project(self, request: Request) -> str:
        ref = request.params["ref"]
        if self.state.get_project(ref) is None:
            raise ApiError(404, "not_found", f"No project {ref}.")
        return ref

    def _entities(self, items: list[dict[str, Any]]) -> list[str]:
        seen: list[str] = []
        for item in items:
            seen.extend(e["entity_id"] for e in item["entities"] if e["entity_id"] not in seen)
        return seen

    # -- handlers --------------------------------------------------------------------

    def search(self, request: Request) -> Response:
        started = time.perf_counter()
        ref = self._project(request)
        query = _query(request)
        q = (query.get("q") or "").strip()
        if not q:
            raise ApiError(400, "bad_request", "q is required.")
        limit = _int(query, "limit", 20, 1, 50)
        historical = query.get("include_historical") == "true"
        ranked = self.index.search(ref, q, limit, historical)
        rows = [(score, self.index.item_row(found["row"]), found["why"]) for score, found in ranked.hits]
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
            for score, row, why in rows[:limit]
        ]
        entities = {e["entity_id"]: e for _, row, _ in rows[:limit] for e in row["entities"]}
        return json_response(
            200,
            {
                "query": q,
                "backend": ranked.backend,
                "took_ms": round((time.perf_counter() - started) * 1000),
                "hits": hits,
                "entities": [entities[k] for k in self._entities([row for _, row, _ in rows[:limit]])],
            },
        )

    def retrieve(self, request: Request) -> Response:
        ref = self._project(request)
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
        items = []
        for _, found in self.index.search(ref, query, top_k, historical).hits[:top_k]:
            row = found["row"]
            items.append({**self.index.item_row(row), "evidence": self.index.evidence(row["knowledge_id"])})
        entities = [self.index.people_row(e) for e in self._entities(items)]
        conflicts = self.index.conflicts_of([i["knowledge_id"] for i in items]) if items else []
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
        if stored is None:
            raise ApiError(404, "not_found", f"No record {request.params['id']}.")
        return json_response(200, self.index.item_detail(stored))

    def evidence(self, request: Request) -> Response:
        stored = self.index.item(request.params["id"])
        if stored is None:
            raise ApiError(404, "not_found", f"No record {request.params['id']}.")
        payload = {"knowledge_id": stored["knowledge_id"], "project_ref": stored["ref"]}
        return json_response(200, {**payload, "evidence": self.index.evidence(stored["knowledge_id"])})

    def entities_named(self, request: Request) -> Response:
        ref = self._project(request)
        name = (_query(request).get("name") or "").strip().lower()
        if not name:
            raise ApiError(400, "bad_request", "An entity name is required.")
        return json_response(200, {"entities": self.index.named(ref, name)})

    def people(self, request: Request) -> Response:
        ref = self._project(request)
        query = _query(request)
        q = (query.get("q") or "").strip().lower()
        types = _words(query, "type")
        sort = query.get("sort") or "name"
        if sort not in PEOPLE_SORTS:
            raise ApiError(400, "bad_request", "sort must be name, mentions or confidence.")
        page = _int(query, "page", 1, 1, 1_000_000)
        page_size = _int(query, "page_size", 50, 1, 100)
        rows, total = self.index.people(ref, q, types, sort, page, page_size)
        return json_response(200, {"entities": rows, "page": page, "page_size": page_size, "total": total})

    def entity(self, request: Request) -> Response:
        detail = self.index.entity_detail(request.params["id"])
        if detail is None:
            raise ApiError(404, "not_found", f"No record {request.params['id']}.")
        return json_response(200, detail)

    def statements(self, request: Request) -> Response:
        ref = self._project(request)
        query = _query(request)
        filters = {name: _words(query, name) for name in ("type", "status", "support", "review_status")}
        source_id = query.get("source_id") or None
        entity_id = query.get("entity_id") or None
        q = (query.get("q") or "").strip().lower()
        page = _int(query, "page", 1, 1, 1_000_000)
        page_size = _int(query, "page_size", 25, 1, 100)
        rows = []
        for stored in self.index.statements(ref):
            row = self.index.item_row(stored)
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
            if source_id and source_id not in self.index.statement_sources(row["knowledge_id"]):
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

    def duplicates(self, request: Request) -> Response:
        ref = self._project(request)
        status = _query(request).get("status") or "pending"
        if status not in ("pending", "all"):
            raise ApiError(400, "bad_request", "status must be pending or all.")
        rows, pending = self.index.duplicates(ref, every=status == "all")
        return json_response(200, {"duplicates": rows, "pending": pending})

    def sources(self, request: Request) -> Response:
        ref = self._project(request)
        rows = self.index.sources(ref)
        return json_response(200, {"sources": sorted(rows, key=lambda s: (s["name"], s["source_id"]))})

    def source(self, request: Request) -> Response:
        page = self.index.source_page(request.params["id"])
        if page is None:
            raise ApiError(404, "not_found", f"No source {request.params['id']}.")
        return json_response(200, page)

    def conflicts(self, request: Request) -> Response:
        ref = self._project(request)
        status = _query(request).get("status") or "open"
        if status not in CONFLICT_STATUSES:
            raise ApiError(400, "bad_request", f"status must be one of {', '.join(CONFLICT_STATUSES)}.")
        return json_response(200, {"conflicts": self.index.conflicts(ref, status)})


def plain(text: str) -> str:
    """Text as a reader reads it: links, roles, code marks, emphasis and tags down to their
    words, each line's quote, heading or list mark dropped, its line breaks kept."""
    for pattern, kept in MARKUP:
        text = pattern.sub(kept, text)
    return "\n".join(LINE_MARKS.sub("", line).rstrip() for line in text.split("\n"))


def _quoted(text: str, indent: str) -> str:
    """``text`` in quotes, each further line indented under the first."""
    return '"' + plain(text).replace("\n", "\n" + indent) + '"'


def _render(query: str, items: list[dict[str, Any]], entities: list[dict[str, Any]], conflicts: list[Any]) -> str:
    """The text a model is given: every statement with its evidence, and every disagreement, as
    plain text (no markup; an excerpt keeps its line breaks, indented under its first line)."""
    lines = [f"Knowledge for: {query}", ""]
    for number, item in enumerate(items, start=1):
        dated = f"; effective {item['effective_date']}" if item["effective_date"] else ""
        said = plain(item["statement"]).replace("\n", " ")
        lines.append(f"[{number}] {said} ({item['status']}, confidence {item['confidence']}{dated})")
        for link in item["evidence"]:
            where = f"{link['source_name']} {link['location'] or ''}".strip()
            quoted = _quoted(link["excerpt"], " " * 8) if link["excerpt"] else "(excerpt no longer found in the source)"
            lines.append(f"    evidence: {where}: {quoted}")
    if conflicts:
        lines.extend(["", "Disagreements (never hidden):"])
        for conflict in conflicts:
            sides = " vs ".join(f'"{plain(side["statement"])}"' for side in conflict["sides"])
            lines.append(f"- {conflict['title']} ({conflict['status']}): {sides}")
    if entities:
        lines.extend(["", "Entities:"])
        for entity in entities:
            also = f"; also {', '.join(entity['aliases'])}" if entity["aliases"] else ""
            lines.append(f"- {entity['name']} ({entity['type']}{also})")
    return "\n".join(lines) + "\n"
