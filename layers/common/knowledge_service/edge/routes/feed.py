"""The change feed: GET /knowledge/feed, POST /knowledge/feed/sync, and its dead letters."""

from __future__ import annotations

from typing import Annotated, Literal

from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from knowledge_service.domain import identifiers
from knowledge_service.domain.feed import SyncAnswer, feed_pass, operator
from knowledge_service.domain.feed.view import ACTIONS_CURSOR_MAX, ACTIONS_CURSOR_PATTERN, FeedView, feed_view
from knowledge_service.edge.access import Standing, access, current_call, scope_of
from knowledge_service.edge.envelope import Envelope, error_responses, ok
from knowledge_service.edge.params import Project
from knowledge_service.errors import Conflict, PermissionDenied
from knowledge_service.identity.principal import Permission
from knowledge_service.runtime import runtime

router = APIGatewayRouter()


@router.get(
    "/knowledge/feed",
    operation_id="get_feed",
    summary="The head revision, the watermark(s), recent envelopes, exports and actions",
    tags=["feed"],
    openapi_extensions=access(Permission.READ_KNOWLEDGE, project=Standing.READ),
    responses=error_responses(400, 401, 403, 404, 500, 502, 503, 504),
)
def get_feed(
    project: Project = None,
    actions_after: Annotated[
        str | None,
        Query(
            max_length=ACTIONS_CURSOR_MAX,
            pattern=ACTIONS_CURSOR_PATTERN,
            description="A position in the actions (the actions_cursor an answer gave): the older ones",
        ),
    ] = None,
) -> Envelope[FeedView]:
    rt = runtime()
    scope = scope_of(project)
    client = rt.upstream.client(scope.settings)
    return ok(
        feed_view(client, scope.settings, scope.knowledge_base, rt.inbox, rt.watermarks, rt.actions, actions_after)
    )


@router.post(
    "/knowledge/feed/sync",
    operation_id="sync_feed",
    summary="One pass of the feed, now",
    tags=["feed"],
    openapi_extensions=access(Permission.MANAGE_KNOWLEDGE, project=Standing.OPERATOR),
    responses=error_responses(400, 401, 403, 404, 409, 500, 502, 503, 504),
)
def post_sync(project: Project = None) -> Envelope[SyncAnswer]:
    rt = runtime()
    scope = scope_of(project)
    client = rt.upstream.client(scope.settings)
    answer = feed_pass(rt.feed_stores(), client, scope.settings, scope.knowledge_base, scope.project, now=rt.clock)
    return ok(answer, answer.message)


# ---------------------------------------------------------------- dead letters
DeadLetterId = Annotated[str, Path(pattern=identifiers.DEAD_LETTER_ID_PATTERN)]


@router.get(
    "/knowledge/feed/dead-letters",
    operation_id="list_dead_letters",
    summary="The dead-letter queue: a knowledge base's, or with installation=true every one's",
    tags=["feed"],
    openapi_extensions=access(Permission.READ_KNOWLEDGE, project=Standing.READ),
    responses=error_responses(400, 401, 403, 404, 500),
)
def get_dead_letters(
    project: Project = None,
    state: Annotated[Literal["unresolved", "resolved", "all"], Query()] = "unresolved",
    installation: Annotated[bool, Query()] = False,
) -> Envelope[operator.DeadLetterList]:
    rt = runtime()
    now = rt.clock()
    if installation:
        if not current_call().principal.holds(Permission.MANAGE_KNOWLEDGE):
            raise PermissionDenied("The installation's list takes the manage_knowledge permission.")
        return ok(operator.installation_queue(rt.dead_letters, rt.config.bindings(), state, now))
    scope = scope_of(project)
    return ok(operator.queue(rt.dead_letters, rt.actions, scope.knowledge_base, state, now))


@router.get(
    "/knowledge/feed/dead-letters/<id>",
    operation_id="get_dead_letter",
    summary="One dead letter whole: the envelope as kept and every attempt's text",
    tags=["feed"],
    openapi_extensions=access(Permission.READ_KNOWLEDGE, project=Standing.READ),
    responses=error_responses(400, 401, 403, 404, 409, 500),
)
def get_dead_letter(id: DeadLetterId, project: Project = None) -> Envelope[operator.DeadLetterDetail]:
    rt = runtime()
    scope = scope_of(project)
    entry = operator.entry_in_scope(rt.dead_letters, scope.knowledge_base, id)
    operator.own_project_reaches(rt.config.bindings(), entry)
    return ok(operator.detail(entry, rt.clock()))


@router.post(
    "/knowledge/feed/dead-letters/<id>/replay",
    operation_id="replay_dead_letter",
    summary="Replay a dead letter (after a fix) in the scope it was filed under",
    tags=["feed"],
    openapi_extensions=access(Permission.MANAGE_KNOWLEDGE, project=Standing.OPERATOR),
    responses=error_responses(400, 401, 403, 404, 409, 500),
)
def post_replay(id: DeadLetterId, body: Annotated[operator.ReplayRequest, Body()]) -> Envelope[operator.ActionAnswer]:
    rt = runtime()
    actor = operator.require_actor(current_call().principal.name)
    scope = scope_of(body.project)
    entry = operator.entry_in_scope(rt.dead_letters, scope.knowledge_base, id)
    operator.own_project_reaches(rt.config.bindings(), entry)
    answer = operator.replay(
        rt.dead_letters,
        rt.inbox,
        rt.actions,
        rt.watermarks,
        entry,
        body,
        actor,
        scope.settings.revision_study_resolved,
        rt.clock(),
    )
    return ok(answer, f"Replayed by {actor} ({body.reason}); effect: {answer.effect}.")


@router.post(
    "/knowledge/feed/dead-letters/<id>/discard",
    operation_id="discard_dead_letter",
    summary="Discard a dead letter with who and why (project form, or knowledge_base for an unreachable one)",
    tags=["feed"],
    openapi_extensions=access(Permission.MANAGE_KNOWLEDGE, project=Standing.OPERATOR),
    responses=error_responses(400, 401, 403, 404, 409, 500),
)
def post_discard(id: DeadLetterId, body: Annotated[operator.DiscardRequest, Body()]) -> Envelope[operator.ActionAnswer]:
    rt = runtime()
    actor = operator.require_actor(current_call().principal.name)
    bindings = rt.config.bindings()
    if body.knowledge_base is not None and body.project is None:
        entry = operator.entry_in_scope(rt.dead_letters, body.knowledge_base, id)
        if operator.reaches(bindings, entry):
            raise Conflict("This dead letter's project still reaches it: it is that project's to decide.")
    else:
        scope = scope_of(body.project)
        entry = operator.entry_in_scope(rt.dead_letters, scope.knowledge_base, id)
        operator.own_project_reaches(bindings, entry)
    answer = operator.discard(
        rt.dead_letters, entry, actor, body.reason, rt.clock(), lambda: _state(rt.config.subscription())
    )
    return ok(answer, f"Discarded by {actor} ({body.reason}).")


def _state(entitlement: object) -> str:
    """What the entitlement read found, as the entry and the event record it."""
    return str(getattr(entitlement, "state", entitlement))
