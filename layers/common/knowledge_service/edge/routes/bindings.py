"""Bindings: GET and POST /knowledge/project-map, GET /knowledge/projects, POST /knowledge/bases."""

from __future__ import annotations

import uuid
from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from knowledge_service.base_model import Model
from knowledge_service.domain import bindings
from knowledge_service.domain.idempotency import scoped_key
from knowledge_service.edge.access import Standing, access, current_call
from knowledge_service.edge.envelope import Envelope, error_responses, ok
from knowledge_service.errors import BadRequest
from knowledge_service.identity.principal import Permission
from knowledge_service.runtime import runtime
from knowledge_service.upstream.models import ForagerProject

router = APIGatewayRouter()

IDEMPOTENCY_KEY_MAX = 255
BASES_ROUTE = "POST /knowledge/bases"


class ForagerProjects(Model):
    projects: list[ForagerProject]


@router.post(
    "/knowledge/project-map",
    operation_id="bind_project",
    summary="Bind, rebind or unbind a project",
    tags=["bindings"],
    # a project's own setting: its admin (the console default: manage_settings and ownership of the
    # installation's organization), held by the domain
    openapi_extensions=access(Permission.MANAGE_KNOWLEDGE, project=Standing.ADMIN),
    responses=error_responses(400, 401, 403, 404, 500, 502, 503, 504),
)
def post_project_map(request: Annotated[bindings.ProjectMapRequest, Body()]) -> Envelope[bindings.ProjectMapView]:
    rt = runtime()
    principal = current_call().principal
    return ok(
        bindings.set_binding(
            rt.config, rt.projects, rt.upstream, request, principal, rt.env.installation_organization, rt.events
        )
    )


@router.get(
    "/knowledge/project-map",
    operation_id="get_project_map",
    summary="Every binding the caller may see, and the console default",
    tags=["bindings"],
    openapi_extensions=access(Permission.READ_KNOWLEDGE, project=Standing.INSTALLATION),
    responses=error_responses(401, 403, 500, 502, 503, 504),
)
def get_project_map() -> Envelope[bindings.BindingList]:
    rt = runtime()
    call = current_call()
    rt.upstream.answering(call.settings())  # 503 while knowledge is off or down, as every route but status
    return ok(bindings.visible_bindings(rt.config, rt.projects, call.principal))


@router.get(
    "/knowledge/projects",
    operation_id="list_knowledge_bases",
    summary="The knowledge bases FORAGER holds",
    tags=["bindings"],
    openapi_extensions=access(Permission.READ_KNOWLEDGE, project=Standing.INSTALLATION),
    responses=error_responses(401, 403, 500, 502, 503, 504),
)
def get_projects() -> Envelope[ForagerProjects]:
    """What FORAGER holds, without the knowledge bases of organizations the caller has no
    standing in (``bindings.hidden_knowledge_bases``)."""
    rt = runtime()
    call = current_call()
    held = rt.upstream.client(call.settings()).projects()
    return ok(ForagerProjects(projects=bindings.listed_knowledge_bases(rt.config, rt.projects, call.principal, held)))


@router.post(
    "/knowledge/bases",
    operation_id="create_knowledge_base",
    summary="Make a knowledge base in FORAGER and bind it",
    tags=["bindings"],
    openapi_extensions=access(
        Permission.MANAGE_KNOWLEDGE, project=Standing.ADMIN, capability="platform.project.manage"
    ),
    responses=error_responses(400, 401, 402, 403, 404, 409, 500, 502, 503, 504),
)
def post_bases(request: Annotated[bindings.KnowledgeBaseRequest, Body()]) -> Envelope[bindings.KnowledgeBaseCreated]:
    rt = runtime()
    actor = current_call().principal
    supplied = router.current_event.headers.get("Idempotency-Key") or router.current_event.headers.get(
        "idempotency-key"
    )
    if supplied is not None and not (0 < len(supplied) <= IDEMPOTENCY_KEY_MAX):
        raise BadRequest("Idempotency-Key", f"must be 1 to {IDEMPOTENCY_KEY_MAX} characters.")

    # The caller's key is scoped to the caller and the route before anything uses it: the
    # replay record and the key FORAGER sees (two callers may choose one key).
    key = scoped_key(actor.name, BASES_ROUTE, supplied) if supplied is not None else None

    def create() -> bindings.KnowledgeBaseCreated:
        return bindings.create_knowledge_base(
            rt.config,
            rt.projects,
            rt.upstream,
            rt.events,
            request,
            actor,
            idempotency_key=key or uuid.uuid4().hex,
            installation_organization=rt.env.installation_organization,
        )

    if key is None:
        return ok(create())
    payload = request.model_dump(mode="json")
    return ok(
        rt.idempotency.once(
            key,
            payload,
            bindings.KnowledgeBaseCreated,
            create,
            lambda_context=router.lambda_context,
        )
    )
