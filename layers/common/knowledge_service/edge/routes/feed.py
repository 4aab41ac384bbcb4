"""The change feed: GET /knowledge/feed, POST /knowledge/feed/sync."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from knowledge_service.domain.feed import SyncAnswer, feed_pass
from knowledge_service.domain.feed.view import FeedView, feed_view
from knowledge_service.edge.access import ProjectAccess, access, scope_of
from knowledge_service.edge.envelope import Envelope, error_responses, ok
from knowledge_service.edge.params import Project
from knowledge_service.identity.principal import Permission
from knowledge_service.runtime import runtime

router = APIGatewayRouter()


@router.get(
    "/knowledge/feed",
    summary="The head revision, the watermark(s), recent envelopes, exports and actions",
    tags=["feed"],
    openapi_extensions=access(Permission.READ_KNOWLEDGE, project=ProjectAccess.READ),
    responses=error_responses(400, 401, 403, 404, 500, 502, 503, 504),
)
def get_feed(project: Project = None) -> Envelope[FeedView]:
    rt = runtime()
    scope = scope_of(router, project)
    client = rt.upstream.client(scope.settings)
    return ok(feed_view(client, scope.settings, scope.knowledge_base, rt.inbox, rt.watermarks, rt.actions))


@router.post(
    "/knowledge/feed/sync",
    summary="One pass of the feed, now",
    tags=["feed"],
    openapi_extensions=access(Permission.MANAGE_KNOWLEDGE, project=ProjectAccess.OPERATOR),
    responses=error_responses(400, 401, 403, 404, 409, 500, 502, 503, 504),
)
def post_sync(project: Project = None) -> Envelope[SyncAnswer]:
    rt = runtime()
    scope = scope_of(router, project)
    client = rt.upstream.client(scope.settings)
    answer = feed_pass(rt.feed_stores(), client, scope.settings, scope.knowledge_base, scope.project)
    return ok(answer, answer.message)
