"""Curation: what a person decides in FORAGER's own application, and the event log that
records who decided what (``domain/curation.py``, ``domain/event_log.py``).

Every curation route is ``manage_knowledge`` at the operator's rank on the named project and
``forager.knowledge.curate`` in the catalog: the commercial gate answers right after
authentication, before the body is read or FORAGER asked anything.
"""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from knowledge_service.domain import curation as domain, event_log, identifiers
from knowledge_service.domain.reads import Reader
from knowledge_service.edge.access import Standing, access, current_call, scope_of
from knowledge_service.edge.envelope import Envelope, error_responses, ok
from knowledge_service.edge.params import ConflictId, DuplicateId, EntityId, Project, StatementId
from knowledge_service.identity.principal import Permission
from knowledge_service.runtime import runtime
from knowledge_service.upstream import models as upstream_models

router = APIGatewayRouter()

CURATE = access(Permission.MANAGE_KNOWLEDGE, project=Standing.OPERATOR, capability="forager.knowledge.curate")
REFUSALS = error_responses(400, 401, 402, 403, 404, 409, 500, 502, 503, 504)
TAGS = ["curation"]


def _reader(project: str | None) -> Reader:
    return current_call().reader(project)


@router.post(
    "/knowledge/conflicts/<id>/resolve",
    operation_id="resolve_conflict",
    summary="Decide a disagreement (never FORAGER's suggestion applied for anyone)",
    tags=TAGS,
    openapi_extensions=CURATE,
    responses=REFUSALS,
)
def post_resolve(
    id: ConflictId, request: Annotated[domain.ResolveRequest, Body()], project: Project = None
) -> Envelope[upstream_models.ConflictRecord]:
    conflict_id = identifiers.record_id(id, "cf")
    if request.winner_id is not None:
        identifiers.record_id(request.winner_id, "ki", "winner_id")
    reader = _reader(project)
    return ok(domain.resolve(reader, current_call().principal, runtime().events, conflict_id, request))


@router.post(
    "/knowledge/conflicts/<id>/reopen",
    operation_id="reopen_conflict",
    summary="Put a decided disagreement back in the queue",
    tags=TAGS,
    openapi_extensions=CURATE,
    responses=REFUSALS,
)
def post_reopen(id: ConflictId, project: Project = None) -> Envelope[upstream_models.ConflictRecord]:
    conflict_id = identifiers.record_id(id, "cf")
    reader = _reader(project)
    return ok(domain.reopen(reader, current_call().principal, runtime().events, conflict_id))


@router.post(
    "/knowledge/duplicates/<id>/decide",
    operation_id="decide_duplicate",
    summary="Merge a possible duplicate, or keep the two apart",
    tags=TAGS,
    openapi_extensions=CURATE,
    responses=REFUSALS,
)
def post_decide(
    id: DuplicateId, request: Annotated[domain.DecideRequest, Body()], project: Project = None
) -> Envelope[domain.DuplicateDecided]:
    candidate_id = identifiers.record_id(id, "mc")
    reader = _reader(project)
    return ok(domain.decide(reader, current_call().principal, runtime().events, candidate_id, request))


@router.post(
    "/knowledge/entities/<id>/unmerge",
    operation_id="unmerge_entity",
    summary="Undo a merge: {id} is the one merged away",
    tags=TAGS,
    openapi_extensions=CURATE,
    responses=REFUSALS,
)
def post_unmerge(
    id: EntityId, request: Annotated[domain.UnmergeRequest | None, Body()] = None, project: Project = None
) -> Envelope[domain.Unmerged]:
    entity_id = identifiers.record_id(id, "ent")
    reader = _reader(project)
    body = request or domain.UnmergeRequest()
    return ok(domain.unmerge(reader, current_call().principal, runtime().events, entity_id, body))


@router.post(
    "/knowledge/items/<id>/review",
    operation_id="review_item",
    summary="Mark a statement reviewed, reject it, or reset its review",
    tags=TAGS,
    openapi_extensions=CURATE,
    responses=REFUSALS,
)
def post_review(
    id: StatementId, request: Annotated[domain.ReviewRequest, Body()], project: Project = None
) -> Envelope[domain.ItemReviewed]:
    knowledge_id = identifiers.record_id(id, "ki")
    reader = _reader(project)
    return ok(domain.review(reader, current_call().principal, runtime().events, knowledge_id, request))


@router.get(
    "/knowledge/events",
    operation_id="list_events",
    summary="The event log: who decided what, newest first",
    tags=TAGS,
    openapi_extensions=access(Permission.MANAGE_KNOWLEDGE, project=Standing.OPERATOR),
    responses=error_responses(400, 401, 403, 404, 500, 503),
)
def get_events(
    act: Annotated[
        str | None,
        Query(
            max_length=identifiers.EVENT_ACT_MAX,
            pattern=identifiers.EVENT_ACT_PATTERN,
            description="An event type or a curation act",
        ),
    ] = None,
    cursor: Annotated[
        str | None,
        Query(
            max_length=event_log.CURSOR_MAX,
            pattern=event_log.CURSOR_PATTERN,
            description="A position in the log (the next_cursor an answer gave): the rows recorded before it",
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=event_log.PAGE_MAX)] = event_log.PAGE_DEFAULT,
    project: Project = None,
) -> Envelope[event_log.EventPage]:
    scope = scope_of(project)
    return ok(event_log.page(runtime().events, act=act, project=scope.project, limit=limit, cursor=cursor))
