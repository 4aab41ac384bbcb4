"""Knowledge reads: search, retrieval, statements, evidence, people, duplicates, sources,
disagreements — every one asked of FORAGER, with the scope held here.

Every read resolves its knowledge base from ``?project=`` through the binding map on every
call (the access hook's ``Call.reader``, at read standing). FORAGER's record routes
(``/api/knowledge/{id}``, ``/api/entities/{id}``, ``/api/sources/{id}``) are not
project-scoped upstream, so a record is answered only when its ``project_ref`` is the
resolved knowledge base; another knowledge base's record is ``not_found`` in exactly the
words an id that does not exist gets (telling a caller that an id exists somewhere they
cannot see is itself a disclosure).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from pydantic import ConfigDict, Field, StrictBool

from knowledge_service.base_model import Model
from knowledge_service.domain import identifiers
from knowledge_service.domain.scope import Scope, held
from knowledge_service.errors import BadRequest, NotFound, UpstreamRefused
from knowledge_service.models import JsonInteger
from knowledge_service.upstream import models as upstream_models
from knowledge_service.upstream.client import ForagerClient

T = TypeVar("T")

SEARCH_LIMIT_MIN, SEARCH_LIMIT_MAX, SEARCH_LIMIT_DEFAULT = 1, 50, 20
PAGE_SIZE_MAX = 100
PAGE_MAX = 10_000
"""The last page a list may ask for: a bound held here, not passed through to FORAGER."""
PEOPLE_PAGE_SIZE_DEFAULT = 50
STATEMENTS_PAGE_SIZE_DEFAULT = 25
PEOPLE_SORTS = ("name", "mentions", "confidence")
DUPLICATE_STATUSES = ("pending", "all")
CONFLICT_STATUSES = ("open", "resolved", "dismissed", "decided", "all")
CHUNK_PAGE = 200
CHUNK_TEXT_MAX = 400
QUERY_MAX = 2000


@dataclass(frozen=True)
class Reader:
    """One read's resolved scope and the FORAGER client to ask."""

    scope: Scope
    forager: ForagerClient

    @property
    def knowledge_base(self) -> str:
        return self.scope.knowledge_base


# ------------------------------------------------------------------------------ answers
class RetrieveRequest(Model):
    """``POST /knowledge/retrieve``. There is no ``include_conflicts``: conflicts are never hidden."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=QUERY_MAX, pattern=identifiers.NOT_BLANK_PATTERN)
    project: str | None = Field(default=None, max_length=63, pattern=identifiers.PROJECT_OR_DEFAULT_PATTERN)
    top_k: JsonInteger = Field(default=8, ge=1, le=50)
    include_historical: StrictBool = False


class RetrievalAnswer(Model):
    query: str
    project: str
    items: list[upstream_models.RetrievedItem]
    entities: list[upstream_models.PersonRow]
    conflicts: list[upstream_models.ConflictRecord]
    rendered: str


class EvidenceAnswer(Model):
    knowledge_id: str
    evidence: list[upstream_models.EvidenceLink]


class EntitiesAnswer(Model):
    """Canonical entities (``?name=``) or FORAGER's People and organizations page."""

    entities: list[upstream_models.NamedEntity]
    page: int
    page_size: int
    total: int


# ------------------------------------------------------------------------------ reads
def search(reader: Reader, q: str, limit: int, include_historical: bool) -> upstream_models.SearchResult:
    """Ranked candidates, no evidence expansion; ``limit`` clamps to 1–50."""
    clamped = max(SEARCH_LIMIT_MIN, min(SEARCH_LIMIT_MAX, limit))
    text = _text(q, "q")
    return held(
        lambda: reader.forager.search(reader.knowledge_base, text, limit=clamped, include_historical=include_historical)
    )


def retrieve(reader: Reader, request: RetrieveRequest) -> RetrievalAnswer:
    query = _text(request.query, "query")
    answer = held(
        lambda: reader.forager.retrieve(
            reader.knowledge_base, query, top_k=request.top_k, include_historical=request.include_historical
        )
    )
    return RetrievalAnswer(
        query=answer.query,
        project=reader.scope.project,
        items=answer.items,
        entities=answer.entities,
        conflicts=answer.conflicts,
        rendered=answer.rendered,
    )


def item(reader: Reader, knowledge_id: str) -> upstream_models.KnowledgeItem:
    record = fetched("statement", knowledge_id, lambda: reader.forager.knowledge_item(knowledge_id))
    return _held(reader, record.project_ref, "statement", knowledge_id, record)


def evidence(reader: Reader, knowledge_id: str) -> EvidenceAnswer:
    record = fetched("statement", knowledge_id, lambda: reader.forager.evidence(knowledge_id))
    _held(reader, record.project_ref, "statement", knowledge_id, record)
    return EvidenceAnswer(knowledge_id=knowledge_id, evidence=record.evidence)


def entities(
    reader: Reader,
    *,
    name: str | None,
    q: str | None,
    types: list[str],
    sort: str,
    page: int,
    page_size: int,
) -> EntitiesAnswer:
    if name is not None:
        named = held(lambda: reader.forager.entities_named(reader.knowledge_base, _text(name, "name"))).entities
        return EntitiesAnswer(entities=named, page=1, page_size=max(1, len(named)), total=len(named))
    if sort not in PEOPLE_SORTS:
        raise BadRequest("sort", f"must be one of {', '.join(PEOPLE_SORTS)}.")
    found = held(
        lambda: reader.forager.people(
            reader.knowledge_base, q=(q or "").strip() or None, types=types, sort=sort, page=page, page_size=page_size
        )
    )
    rows = [upstream_models.NamedEntity.model_validate(row.model_dump()) for row in found.entities]
    return EntitiesAnswer(entities=rows, page=found.page, page_size=found.page_size, total=found.total)


def entity(reader: Reader, entity_id: str) -> upstream_models.EntityDetail:
    record = fetched("entity", entity_id, lambda: reader.forager.entity(entity_id))
    _held(reader, record.project_ref, "entity", entity_id, record)
    return record.model_copy(update={"attributes": text_attributes(record.attributes)})


def text_attributes(attributes: dict[str, object]) -> dict[str, list[str]]:
    """What FORAGER gathered, as lists of text; a value that is not text is left out."""
    kept: dict[str, list[str]] = {}
    for name, value in attributes.items():
        values = value if isinstance(value, list) else [value]
        texts = [v for v in values if isinstance(v, str)]
        if texts:
            kept[name] = texts
    return kept


def statements(reader: Reader, filters: dict[str, str], page: int, page_size: int) -> upstream_models.StatementsPage:
    return held(lambda: reader.forager.statements(reader.knowledge_base, filters, page=page, page_size=page_size))


def duplicates(reader: Reader, status: str) -> upstream_models.DuplicateList:
    if status not in DUPLICATE_STATUSES:
        raise BadRequest("status", f"must be one of {', '.join(DUPLICATE_STATUSES)}.")
    return held(lambda: reader.forager.duplicates(reader.knowledge_base, status))


def sources(reader: Reader) -> upstream_models.RegisteredSources:
    return held(lambda: reader.forager.registered_sources(reader.knowledge_base))


def source(reader: Reader, source_id: str) -> upstream_models.SourceDetail:
    """One source's page: the first 200 chunks, each cut to its first 400 characters."""
    record = fetched("source", source_id, lambda: reader.forager.source(source_id))
    _held(reader, record.source.project_ref, "source", source_id, record)
    chunks = [chunk.model_copy(update={"text": chunk.text[:CHUNK_TEXT_MAX]}) for chunk in record.chunks[:CHUNK_PAGE]]
    total = record.chunk_total if record.chunk_total is not None else len(record.chunks)
    return record.model_copy(update={"chunks": chunks, "chunk_total": total})


def conflicts(reader: Reader, status: str) -> upstream_models.ConflictRecords:
    if status not in CONFLICT_STATUSES:
        raise BadRequest("status", f"must be one of {', '.join(CONFLICT_STATUSES)}.")
    answer = held(lambda: reader.forager.conflicts(reader.knowledge_base, status))
    # Each row is trusted by its own project_ref, never by the list it came in (as the export history).
    return answer.model_copy(
        update={"conflicts": [c for c in answer.conflicts if c.project_ref == reader.knowledge_base]}
    )


# ------------------------------------------------------------------------------ the scope
def missing(kind: str, record_id: str) -> NotFound:
    """The one answer for an id that does not exist and for another knowledge base's id."""
    del record_id  # never echoed: the answer is the same whatever id was asked
    return NotFound(f"There is no such {kind} in this project's knowledge base.")


def _held(reader: Reader, project_ref: str, kind: str, record_id: str, record: T) -> T:
    if project_ref != reader.knowledge_base:
        raise missing(kind, record_id)
    return record


def fetched(kind: str, record_id: str, fetch: Callable[[], T]) -> T:
    """``fetch``, a call for one record by its id; FORAGER's 404 for it is :func:`missing`."""
    try:
        return fetch()
    except UpstreamRefused as refused:
        if refused.upstream_status == 404:
            raise missing(kind, record_id) from None
        raise


def _text(value: str, field: str) -> str:
    text = value.strip(identifiers.BLANK)
    if not text:
        raise BadRequest(field, "is required.")
    if len(text) > QUERY_MAX:
        raise BadRequest(field, f"must be at most {QUERY_MAX} characters.")
    return text
