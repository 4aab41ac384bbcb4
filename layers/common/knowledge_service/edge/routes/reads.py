"""Knowledge reads: search, retrieve, items and their evidence, entities, statements,
duplicates, sources and conflicts. Every one is ``read_knowledge`` and resolves
``?project=`` through the binding map on every call (``domain/reads.py``)."""

from __future__ import annotations

from typing import Annotated, Literal

from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from knowledge_service.domain import identifiers, reads as domain
from knowledge_service.edge.access import Standing, access, current_call
from knowledge_service.edge.envelope import Envelope, error_responses, ok
from knowledge_service.edge.params import EntityId, ForagerWords, Project, SourceId, StatementId
from knowledge_service.errors import BadRequest
from knowledge_service.identity.principal import Permission
from knowledge_service.upstream import models as upstream_models

router = APIGatewayRouter()

READ = access(Permission.READ_KNOWLEDGE, project=Standing.READ)
LIST_REFUSALS = error_responses(400, 401, 403, 404, 500, 502, 503, 504)
TAGS = ["reads"]


def _reader(project: str | None) -> domain.Reader:
    return current_call().reader(project)


@router.get(
    "/knowledge/search",
    operation_id="search_knowledge",
    summary="Ranked candidates, no evidence expansion",
    tags=TAGS,
    openapi_extensions=READ,
    responses=LIST_REFUSALS,
)
def get_search(
    q: Annotated[
        str,
        Query(
            min_length=1,
            max_length=domain.QUERY_MAX,
            pattern=identifiers.NOT_BLANK_PATTERN,
            description="What to search for",
        ),
    ],
    limit: Annotated[int, Query(description="Clamped to 1–50")] = domain.SEARCH_LIMIT_DEFAULT,
    include_historical: Annotated[bool, Query()] = False,
    project: Project = None,
) -> Envelope[upstream_models.SearchResult]:
    return ok(domain.search(_reader(project), q, limit, include_historical))


@router.post(
    "/knowledge/retrieve",
    operation_id="retrieve_knowledge",
    summary="Evidence, entities and conflicts assembled into a context, and the text a model is given",
    tags=TAGS,
    openapi_extensions=READ,
    responses=LIST_REFUSALS,
)
def post_retrieve(
    request: Annotated[domain.RetrieveRequest, Body()], project: Project = None
) -> Envelope[domain.RetrievalAnswer]:
    # "" names no project (the console default), in the body as in the query.
    in_body, in_query = request.project or None, project or None
    reader = _reader(in_body or in_query)
    if in_body and in_query and in_body != in_query:
        _reader(in_query)  # a project that does not exist is not_found wherever it is named
        raise BadRequest("project", "is named twice, differently (the query and the body).")
    return ok(domain.retrieve(reader, request))


@router.get(
    "/knowledge/items/<id>",
    operation_id="get_item",
    summary="One statement, with what a person decided about it",
    tags=TAGS,
    openapi_extensions=READ,
    responses=LIST_REFUSALS,
)
def get_item(id: StatementId, project: Project = None) -> Envelope[upstream_models.KnowledgeItem]:
    knowledge_id = identifiers.record_id(id, "ki")
    return ok(domain.item(_reader(project), knowledge_id))


@router.get(
    "/knowledge/items/<id>/evidence",
    operation_id="get_item_evidence",
    summary="Why we believe a statement: its evidence links",
    tags=TAGS,
    openapi_extensions=READ,
    responses=LIST_REFUSALS,
)
def get_evidence(id: StatementId, project: Project = None) -> Envelope[domain.EvidenceAnswer]:
    knowledge_id = identifiers.record_id(id, "ki")
    return ok(domain.evidence(_reader(project), knowledge_id))


@router.get(
    "/knowledge/entities",
    operation_id="list_entities",
    summary="Canonical entities by name, or the People and organizations list",
    tags=TAGS,
    openapi_extensions=READ,
    responses=LIST_REFUSALS,
)
def get_entities(
    name: Annotated[str | None, Query(max_length=domain.QUERY_MAX, pattern=identifiers.NOT_BLANK_PATTERN)] = None,
    q: Annotated[str | None, Query(max_length=domain.QUERY_MAX, description="A name or an alias")] = None,
    type: ForagerWords = None,
    sort: Annotated[Literal["name", "mentions", "confidence"], Query()] = "name",
    page: Annotated[int, Query(ge=1, le=domain.PAGE_MAX)] = 1,
    page_size: Annotated[int, Query(ge=1, le=domain.PAGE_SIZE_MAX)] = domain.PEOPLE_PAGE_SIZE_DEFAULT,
    project: Project = None,
) -> Envelope[domain.EntitiesAnswer]:
    types = identifiers.forager_words(type, "type")
    return ok(domain.entities(_reader(project), name=name, q=q, types=types, sort=sort, page=page, page_size=page_size))


@router.get(
    "/knowledge/entities/<id>",
    operation_id="get_entity",
    summary="One person's or organization's page",
    tags=TAGS,
    openapi_extensions=READ,
    responses=LIST_REFUSALS,
)
def get_entity(id: EntityId, project: Project = None) -> Envelope[upstream_models.EntityDetail]:
    entity_id = identifiers.record_id(id, "ent")
    return ok(domain.entity(_reader(project), entity_id))


@router.get(
    "/knowledge/statements",
    operation_id="list_statements",
    summary="Every statement, filtered and paged as FORAGER's Knowledge page does",
    tags=TAGS,
    openapi_extensions=READ,
    responses=LIST_REFUSALS,
)
def get_statements(
    q: Annotated[str | None, Query(max_length=domain.QUERY_MAX)] = None,
    type: ForagerWords = None,
    status: ForagerWords = None,
    support: ForagerWords = None,
    review_status: ForagerWords = None,
    source_id: Annotated[str | None, Query(pattern=identifiers.record_pattern("src"))] = None,
    entity_id: Annotated[str | None, Query(pattern=identifiers.record_pattern("ent"))] = None,
    page: Annotated[int, Query(ge=1, le=domain.PAGE_MAX)] = 1,
    page_size: Annotated[int, Query(ge=1, le=domain.PAGE_SIZE_MAX)] = domain.STATEMENTS_PAGE_SIZE_DEFAULT,
    project: Project = None,
) -> Envelope[upstream_models.StatementsPage]:
    filters = {
        name: ",".join(identifiers.forager_words(value, name))
        for name, value in (("type", type), ("status", status), ("support", support), ("review_status", review_status))
    }
    if source_id is not None:
        filters["source_id"] = identifiers.record_id(source_id, "src", "source_id")
    if entity_id is not None:
        filters["entity_id"] = identifiers.record_id(entity_id, "ent", "entity_id")
    if q is not None and q.strip():
        filters["q"] = q.strip()
    return ok(domain.statements(_reader(project), filters, page, page_size))


@router.get(
    "/knowledge/duplicates",
    operation_id="list_duplicates",
    summary="Possible duplicate people or organizations",
    tags=TAGS,
    openapi_extensions=READ,
    responses=LIST_REFUSALS,
)
def get_duplicates(
    status: Annotated[Literal["pending", "all"], Query(description="pending (the default) or all")] = "pending",
    project: Project = None,
) -> Envelope[upstream_models.DuplicateList]:
    identifiers.forager_words(status, "status")
    return ok(domain.duplicates(_reader(project), status))


@router.get(
    "/knowledge/sources",
    operation_id="list_sources",
    summary="Registered sources",
    tags=TAGS,
    openapi_extensions=READ,
    responses=LIST_REFUSALS,
)
def get_sources(project: Project = None) -> Envelope[upstream_models.RegisteredSources]:
    return ok(domain.sources(_reader(project)))


@router.get(
    "/knowledge/sources/<id>",
    operation_id="get_source",
    summary="One source's page: the first 200 chunks, each cut to 400 characters",
    tags=TAGS,
    openapi_extensions=READ,
    responses=LIST_REFUSALS,
)
def get_source(id: SourceId, project: Project = None) -> Envelope[upstream_models.SourceDetail]:
    source_id = identifiers.record_id(id, "src")
    return ok(domain.source(_reader(project), source_id))


@router.get(
    "/knowledge/conflicts",
    operation_id="list_conflicts",
    summary="Disagreements in scope, with both sides and the suggested resolution",
    tags=TAGS,
    openapi_extensions=READ,
    responses=LIST_REFUSALS,
)
def get_conflicts(
    status: Annotated[
        Literal["open", "resolved", "dismissed", "decided", "all"],
        Query(description="open (the default), resolved, dismissed, decided or all"),
    ] = "open",
    project: Project = None,
) -> Envelope[upstream_models.ConflictRecords]:
    identifiers.forager_words(status, "status")
    return ok(domain.conflicts(_reader(project), status))
