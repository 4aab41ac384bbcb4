"""Verbs: ``POST /v/<verb>`` for each ``knowledge.*`` verb and the two capture verbs, and
``GET /v``, the catalogue (capability, risk class, permission, MCP tier, idempotency).

Each route is a door onto ``domain.verbs.door.invoke``: it hands over the caller, the
``?workspace=``, the raw body and ``X-Break-Glass``; the door does the rest.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from knowledge_service.domain.verbs.catalogue import VERBS, Verb
from knowledge_service.domain.verbs.door import MAX_BODY, Call, Stores, invoke, well_formed
from knowledge_service.domain.verbs.models import OUTPUTS, VerbCatalogue, VerbDescription
from knowledge_service.domain.verbs.render import render_schema
from knowledge_service.edge.access import PERMISSION_KEY, admitted, caller
from knowledge_service.edge.body import read_json
from knowledge_service.edge.verbs_resolver import verb_answer, verb_responses
from knowledge_service.errors import PermissionDenied, Unauthenticated
from knowledge_service.identity.principal import Permission, Principal
from knowledge_service.models import ProjectRecord
from knowledge_service.runtime import runtime

router = APIGatewayRouter()

VERB_KEY = "x-verb"
BREAK_GLASS_HEADER = "X-Break-Glass"
CATALOGUE_PATH = "/v"


def verb_path(name: str) -> str:
    return f"/v/{name}"


def declaration(verb: Verb) -> dict[str, Any]:
    """The verb's access, in the operation's extensions (the document says it too)."""
    return {
        PERMISSION_KEY: verb.installation_permission.value,
        VERB_KEY: {
            "capability": verb.capability.value,
            "riskClass": verb.risk.value,
            "minAutonomy": verb.risk.autonomy.name,
            "minPermission": verb.permission.name.title(),
            "mcpTier": verb.mcp_tier,
            "idempotent": verb.idempotent,
            "budgetGated": verb.budget_gated,
        },
    }


def stores() -> Stores:
    rt = runtime()
    return Stores(rt.projects, rt.verbs, rt.verb_audit)


def _caller(workspace: str | None) -> tuple[Principal | None, dict[str, ProjectRecord | None] | None]:
    """The caller and, when ``workspace`` is a project id, its record: one BatchGetItem.
    An unknown or revoked token is no principal (the front door refuses it, and audits that)."""
    named = workspace if workspace and well_formed(workspace) else None
    try:
        principal, records = admitted(router.current_event, named)
    except Unauthenticated:
        return None, None
    return principal, ({named: records.project} if named is not None else None)


def _run(name: str, workspace: str | None) -> Response[str]:
    event = router.current_event
    principal, read = _caller(workspace)
    call = Call(
        verb=name,
        principal=principal,
        workspace=workspace,
        read_with_caller=read,
        body=raw_body(event.body, bool(event.is_base64_encoded)),
        break_glass=event.headers.get(BREAK_GLASS_HEADER),
        bounds=_bounded,
    )
    return verb_answer(invoke(stores(), call))


def _bounded(body: bytes) -> object:
    """The edge's depth and number bounds, at the verbs' own size cap (not the 1 MiB default)."""
    return read_json(body, MAX_BODY)


def raw_body(body: str | None, base64_encoded: bool) -> bytes:
    """The request's bytes as sent: the front door bounds them, then parses them as UTF-8 JSON
    (bytes that are not UTF-8, or a lone surrogate, are BadInput there, never a failure here)."""
    if not body:
        return b""
    if base64_encoded:
        try:
            return base64.b64decode(body, validate=False)
        except binascii.Error:
            return b"\xff"  # not base64: not a JSON body either
    return body.encode("utf-8", "surrogatepass")


def _register(verb: Verb) -> None:
    def handler(workspace: Annotated[str | None, Query()] = None) -> Response[str]:
        return _run(verb.name, workspace)

    handler.__name__ = handler.__qualname__ = "verb_" + verb.name.replace(".", "_")
    statuses = [400, 401, 403, 404, 409, 500]
    if verb.budget_gated:
        statuses.insert(-1, 429)
    router.post(
        verb_path(verb.name),
        operation_id=verb.name.replace(".", "_"),  # knowledge_distil, capture_create
        summary=verb.summary,
        description=f"The {verb.name} verb. The workspace is named by ?workspace=<project id>.",
        tags=["verbs"],
        openapi_extensions=declaration(verb),
        responses=verb_responses(OUTPUTS[verb.name], *statuses),
    )(handler)


for _verb in VERBS.values():
    _register(_verb)


@router.get(
    CATALOGUE_PATH,
    operation_id="list_verbs",
    summary="The verbs, with capability, risk class, permission, MCP tier and idempotency",
    tags=["verbs"],
    openapi_extensions={PERMISSION_KEY: Permission.READ_KNOWLEDGE.value},
    responses=verb_responses(VerbCatalogue, 401, 403, 500),
)
def catalogue() -> Response[str]:
    principal = caller(router.current_event)
    if not principal.holds(Permission.READ_KNOWLEDGE):
        raise PermissionDenied("The catalogue takes the read_knowledge permission.")
    return verb_answer(catalogue_of_verbs())


def catalogue_of_verbs() -> VerbCatalogue:
    return VerbCatalogue(
        verbs=[
            VerbDescription(
                verb=v.name,
                summary=v.summary,
                capability=v.capability.value,
                risk_class=v.risk.value,
                min_autonomy=v.risk.autonomy.name,
                min_permission=v.permission.name.title(),
                availability=v.availability.value,
                mcp_tier=v.mcp_tier,
                idempotent=v.idempotent,
                budget_gated=v.budget_gated,
                path=verb_path(v.name),
                render_schema=render_schema(v.name),
            )
            for v in VERBS.values()
        ]
    )
