"""Status and settings: GET /knowledge/status, GET /knowledge/engine, GET /modules, POST /settings."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from knowledge_service.budget import finished, started
from knowledge_service.domain import (
    bindings as bindings_domain,
    modules as modules_domain,
    settings as settings_domain,
    status as status_domain,
)
from knowledge_service.edge.access import Standing, access, current_call
from knowledge_service.edge.envelope import Envelope, error_responses, ok
from knowledge_service.identity.principal import Permission
from knowledge_service.runtime import runtime

router = APIGatewayRouter()


@router.get(
    "/knowledge/status",
    operation_id="get_status",
    summary="What the colony's knowledge is doing",
    tags=["status"],
    openapi_extensions=access(Permission.READ_STATUS, project=Standing.INSTALLATION),
    responses=error_responses(401, 403, 500),
)
def get_status() -> Envelope[status_domain.KnowledgeStatus]:
    rt = runtime()
    # The counts' reads and the settings' are independent: they run at once, each on the
    # container's small pool under the request's budget, while the probe asks FORAGER.
    open_changes = started(rt.findings.open_count)
    waiting = None
    if rt.env.dead_letters_table:  # a colony that never followed a feed reports zeros
        # Imported here, not with the router: the feed domain (its consumer, door, stores) is
        # this one route's, for one count; the function's other routes never load it.
        from knowledge_service.domain.feed import operator

        waiting = started(lambda: operator.colony_counts(rt.dead_letters, rt.config.bindings(), rt.clock()))
    call = current_call()
    # status.projects lists what GET /knowledge/projects lists to the caller: no knowledge base of
    # an organization it has no standing in (issue 39)
    hidden = started(lambda: bindings_domain.hidden_knowledge_bases(rt.config, rt.projects, call.principal))
    answer = status_domain.knowledge_status(rt.env, call.settings(), rt.upstream)
    finished(open_changes, hidden, *([waiting] if waiting else []))
    answer.projects = [ref for ref in answer.projects if ref not in hidden.result()]
    answer.open_changes = open_changes.result()
    if waiting is not None:
        answer.dead_letters = status_domain.DeadLetterSummary(**waiting.result())
    return ok(answer)


@router.get(
    "/knowledge/engine",
    operation_id="get_engine",
    summary="The engine this host manages (none, on a serverless host)",
    tags=["status"],
    openapi_extensions=access(Permission.READ_STATUS, project=Standing.INSTALLATION),
    responses=error_responses(401, 403, 500, 502, 503, 504),
)
def get_engine() -> Envelope[status_domain.EngineAnswer]:
    """A managed engine's state is the supervisor's word, answered while the engine is down too
    (``backoff``: that is when a person asks); an attached colony's answer waits on FORAGER as
    every route but status does."""
    rt = runtime()
    settings = current_call().settings()
    if rt.env.devstack_engine_file:
        rt.upstream.client(settings)  # 503 while knowledge is off, never waiting on the engine itself
    else:
        rt.upstream.client(settings).status()  # 503 while knowledge is off or down
    return ok(status_domain.engine(rt.env))


@router.get(
    "/modules",
    operation_id="list_modules",
    summary="Each hosted module on five axes",
    tags=["status"],
    openapi_extensions=access(Permission.READ_STATUS, project=Standing.INSTALLATION),
    responses=error_responses(401, 403, 500),
)
def get_modules() -> Envelope[modules_domain.ModulesAnswer]:
    rt = runtime()
    settings = current_call().settings()
    status = status_domain.knowledge_status(rt.env, settings, rt.upstream)
    return ok(modules_domain.modules(status, rt.upstream.why_not_connectable(settings)))


@router.post(
    "/settings",
    operation_id="update_settings",
    summary="Write the console-writable knowledge settings",
    tags=["settings"],
    openapi_extensions=access(Permission.MANAGE_SETTINGS, project=Standing.INSTALLATION),
    responses=error_responses(400, 401, 403, 409, 500),
)
def post_settings(update: Annotated[settings_domain.SettingsUpdate, Body()]) -> Envelope[settings_domain.SettingsView]:
    rt = runtime()
    actor = current_call().principal
    return ok(settings_domain.apply_settings(rt.env, rt.config, rt.credentials, update, actor.name))
