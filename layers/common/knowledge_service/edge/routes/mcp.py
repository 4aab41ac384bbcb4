"""``POST /mcp``: agent tools over MCP (Streamable HTTP, stateless, JSON responses).

One route, answered by the MCP SDK behind ``edge.mcp_server``. It takes no principal token
and has no API authorizer: the ``km_`` mission credential is checked by the function
itself, so the declaration names it (``x-permission: mission_credential``) instead of an
installation permission. The door holds the body to ``JsonRpcMessage`` before the SDK reads
it, and the route declares that model's schema, so the document states what is enforced.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from knowledge_service.edge.access import PERMISSION_KEY, REQUEST_BODY_KEY
from knowledge_service.edge.mcp_server import MAX_BODY, JsonRpcMessage, handle

router = APIGatewayRouter()

MCP_PATH = "/mcp"
MISSION_CREDENTIAL = "mission_credential"
JSON_RPC_MESSAGE: dict[str, Any] = {
    **JsonRpcMessage.model_json_schema(),
    "description": f"One JSON-RPC 2.0 message of MCP (at most {MAX_BODY} bytes); without id, a notification.",
}
DECLARATION: dict[str, Any] = {
    PERMISSION_KEY: MISSION_CREDENTIAL,
    REQUEST_BODY_KEY: {"required": True, "content": {"application/json": {"schema": JSON_RPC_MESSAGE}}},
}
JSON_RPC_ERROR: dict[str, Any] = {"application/json": {"schema": {"type": "object"}}}
"""Every refusal is JSON-RPC's error object (``{"jsonrpc", "id", "error": {code, message, data}}``)."""


@router.post(
    MCP_PATH,
    operation_id="call_mcp",
    summary="MCP (Streamable HTTP, stateless JSON): tools and resources of one agent mission",
    description=(
        "Authorization: Bearer <km_ mission credential from knowledge-admin mission start>. "
        "Scope, tools, autonomy and expiry are the mission's; no tool takes a project."
    ),
    tags=["mcp"],
    openapi_extensions=DECLARATION,
    responses={
        200: {"description": "A JSON-RPC response", "content": {"application/json": {"schema": {"type": "object"}}}},
        202: {"description": "A notification, accepted"},
        400: {"description": "Not a JSON-RPC message MCP takes", "content": {"application/json": {}}},
        401: {"description": "Unknown, ended or expired mission credential", "content": JSON_RPC_ERROR},
        406: {"description": "Accept names neither application/json nor text/event-stream"},
        413: {"description": f"A body over {MAX_BODY} bytes", "content": JSON_RPC_ERROR},
        500: {"description": "The service failed to answer", "content": {"application/json": {}}},
    },
)
def post_mcp() -> Response[str]:
    answer = handle(router.current_event.raw_event, router.lambda_context)
    headers = dict(answer.get("headers") or {})
    return Response(
        status_code=int(answer["statusCode"]),
        content_type=headers.pop("content-type", headers.pop("Content-Type", None)),
        body=answer.get("body") or "",
        headers=headers,
    )
