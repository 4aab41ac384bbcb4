"""``POST /mcp``: the MCP server, Streamable HTTP in stateless JSON-response mode, in a Lambda.

Built on the official ``mcp`` SDK's low-level ``Server`` and its
``StreamableHTTPSessionManager(stateless=True, json_response=True)``: the SDK owns the
protocol (initialize, version negotiation, ``tools/*``, ``resources/*``, JSON-RPC errors,
the Accept and content-type rules); this module owns the credential and the bridge from an
API Gateway proxy event to one ASGI request and back. Stateless fits a Lambda: any container
answers any request, and nothing lives between requests but the mission record.

Like every function, this one authenticates its own request (the API has no authorizer).
The mission credential is not a principal token: it is checked here, before the SDK sees the
request.
An unknown, ended or expired credential is 401 ``application/problem+json`` with
``WWW-Authenticate: Bearer``. The mission found is handed to the handlers in a context
variable: tools, resources and their scope come from it alone.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from contextvars import ContextVar
from typing import Annotated, Any, Literal

import anyio
from aws_lambda_powertools import Logger
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from knowledge_service import budget
from knowledge_service.base_model import Model
from knowledge_service.budget import RemainingTime
from knowledge_service.domain.agent_missions import authenticate
from knowledge_service.edge import mcp_tools
from knowledge_service.edge.body import UnreadableBody, body_bytes, read_json
from knowledge_service.errors import InternalError, NotFound, ServiceError
from knowledge_service.runtime import runtime
from knowledge_service.storage.agent_missions import MissionRecord

MIB = 1024 * 1024
MAX_BODY = 5 * MIB
"""Bytes of JSON-RPC read at all: a session brain value of up to 4 MiB (the brain's own limit)
plus 1 MiB for the JSON-RPC envelope and the value's JSON escaping (a newline or a quote is two
bytes written). Bounded under Lambda's 6 MB synchronous payload, which also carries the event's
headers. Every tool keeps its own limit inside it: a page 1 MiB, a verb's body 2 MiB."""
SDK_BODY_BOUND = 3 * MAX_BODY
"""What the SDK is let read (its own default is 4 MiB): the door held the body to
:data:`MAX_BODY` and hands on the same message escaped as JSON's ASCII, which is at most three
times as long (a two-byte UTF-8 character is written as a six-byte ``\\u`` escape)."""
MAX_ANSWER = 6 * MIB
"""Lambda's synchronous payload limit, measured as the function returns the answer (the proxy
answer as JSON, the body a string in it). A tool answer over it is a tool error
``payload_too_large``, never the gateway's 502."""
STRUCTURED_UP_TO = 1 * MIB
"""A tool answer whose JSON is at most this many characters is sent twice, as MCP asks
(``structuredContent`` and the same JSON in a text block); a larger one (a session brain value
of up to 4 MiB) only as the text block, so that one copy fits :data:`MAX_ANSWER`."""
SERVER_NAME = "knowledge-service"
logger = Logger(child=True)

MAX_REQUEST_ID = 2**53 - 1
"""The largest integer request id taken (JSON's exact integers); a string id is at most 64 characters."""
METHODS = (
    "initialize",
    "notifications/initialized",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
)
"""The JSON-RPC methods this server serves; any other is refused at the door."""


def _integral(value: Any) -> Any:
    """JSON Schema's integer is a number without a fraction: ``7.0`` is the integer 7."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


RequestId = (
    Annotated[int, Field(ge=-MAX_REQUEST_ID, le=MAX_REQUEST_ID), BeforeValidator(_integral)]
    | Annotated[str, Field(max_length=64)]
)


def _left_out_or_given(schema: dict[str, Any]) -> None:
    """Declare an optional field as what it takes when given: no default, never null."""
    schema.pop("default", None)
    if "anyOf" in schema:
        schema["anyOf"] = [branch for branch in schema["anyOf"] if branch.get("type") != "null"]


class JsonRpcMessage(Model):
    """One JSON-RPC 2.0 message of MCP, as the door takes it (and as ``POST /mcp`` declares it):
    the envelope is held here, exactly; what ``params`` must hold for its method is the
    protocol's, answered by the SDK as a JSON-RPC error inside a 200 (``-32602``). A message
    without ``id`` is a notification (``202``)."""

    model_config = ConfigDict(extra="forbid", strict=True, title="JsonRpcMessage")

    jsonrpc: Literal["2.0"]
    id: RequestId | None = Field(default=None, json_schema_extra=_left_out_or_given)
    method: Literal[METHODS]  # type: ignore[valid-type]
    params: dict[str, Any] = Field(default_factory=dict, json_schema_extra=_left_out_or_given)

    @field_validator("id", mode="before")
    @classmethod
    def _not_null(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("a request id is an integer or a string; a notification leaves it out")
        return value


_mission: ContextVar[MissionRecord] = ContextVar("mission")
server: Server[Any, Any] = Server(
    SERVER_NAME,
    instructions=(
        "Tools over this project's knowledge, its pages (brain_*) and its assertions (knowledge.*)."
        " The project is the mission's: no tool takes one. Call tools_discover for on-demand tools."
    ),
)


@server.list_tools()  # type: ignore[no-untyped-call,untyped-decorator]
async def _list_tools() -> list[types.Tool]:
    return [
        types.Tool(name=s.name, description=s.description, inputSchema=mcp_tools.input_schema(s))
        for s in mcp_tools.listed(_mission.get())
    ]


@server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
async def _call_tool(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    payload, is_error = mcp_tools.call(_mission.get(), name, arguments)
    return tool_result(payload, is_error)


def tool_result(payload: dict[str, Any], is_error: bool) -> types.CallToolResult:
    """The answer as MCP carries it: the JSON as text (UTF-8 as written, so a large non-ASCII
    value is not six times its size), and ``structuredContent`` too unless it is large."""
    text = json.dumps(payload, default=str, ensure_ascii=False)
    if not _encodable(text):  # a lone surrogate: only JSON's ASCII escapes carry it
        text = json.dumps(payload, default=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structuredContent=payload if len(text) <= STRUCTURED_UP_TO else None,
        isError=is_error,
    )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@server.list_resources()  # type: ignore[no-untyped-call,untyped-decorator]
async def _list_resources() -> list[types.Resource]:
    return [
        types.Resource(uri=AnyUrl(r["uri"]), name=r["name"], mimeType=r["mimeType"])
        for r in mcp_tools.resources(_mission.get())
    ]


@server.read_resource()  # type: ignore[no-untyped-call,untyped-decorator]
async def _read_resource(uri: AnyUrl) -> list[ReadResourceContents]:
    try:
        text = mcp_tools.read_resource(_mission.get(), str(uri))
    except NotFound as missing:
        raise McpError(types.ErrorData(code=-32002, message=missing.message)) from None
    return [ReadResourceContents(content=text, mime_type="text/markdown")]


# ------------------------------------------------------------------------------ the door
def handle(event: dict[str, Any], context: RemainingTime | None = None) -> dict[str, Any]:
    """One API Gateway proxy event in, one proxy answer out; every FORAGER call a tool makes
    shares the request's budget (Lambda's remaining time in ``context``, as every route's)."""
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    try:
        body = body_bytes(event.get("body"), bool(event.get("isBase64Encoded")), MAX_BODY)
        mission = authenticate(runtime().agent_missions, headers.get("authorization"))
    except ServiceError as refusal:
        return refused(refusal)
    except Exception:  # the mission store failed: a 500 in the same shape, the trace in the log
        logger.exception("mission lookup failed")
        return refused(InternalError("The service failed to answer; the failure is logged."))
    message = _message(body)
    if not isinstance(message, JsonRpcMessage):
        return message
    # What the SDK reads: the envelope as held (an integral id as the integer), escaped as JSON's
    # ASCII so that a lone surrogate a string escaped stays text the SDK can parse.
    body = json.dumps(message.model_dump(exclude_unset=True)).encode("ascii")
    token = _mission.set(mission)
    try:
        with budget.spending(budget.request_budget(context)):
            status, answer_headers, answer = anyio.run(_serve, event.get("httpMethod") or "POST", headers, body)
    finally:
        _mission.reset(token)
    if status >= 400 and "json" not in answer_headers.get("content-type", ""):
        # The SDK refuses some requests in plain text (a wrong Content-Type is
        # "Invalid Content-Type header"): an MCP client reads JSON-RPC, so it is told in it.
        text = answer.decode("utf-8", "replace").strip() or "The request was refused."
        return rpc_error(-32600, f"Invalid request: {text}.", status=status)
    proxy = {
        "statusCode": status,
        "headers": {**answer_headers, "Cache-Control": "no-store"},
        "body": answer.decode("utf-8"),
        "isBase64Encoded": False,
    }
    return proxy if len(json.dumps(proxy)) <= MAX_ANSWER else _too_large(message, len(answer))


def _too_large(message: JsonRpcMessage, size: int) -> dict[str, Any]:
    """An answer Lambda could not return: a tool call's is a tool error, any other a JSON-RPC error."""
    words = f"The answer is {size} bytes; over what one MCP answer carries ({MAX_ANSWER} bytes as Lambda returns it)."
    if message.method != "tools/call":
        return rpc_error(-32603, f"Internal error: {words}", message.id, status=200)
    result = tool_result({"error": words, "code": "payload_too_large"}, True).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    body = {"jsonrpc": "2.0", "id": message.id, "result": result}
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json", "Cache-Control": "no-store"},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


REFUSAL_CODES = {401: -32001, 413: -32600}
"""The JSON-RPC code of a refusal the door makes before the body is read (JSON-RPC 2.0 leaves
-32000 to -32099 to the server: -32001 an unauthenticated caller); a failure is -32603."""


def refused(error: ServiceError) -> dict[str, Any]:
    """A refusal before the body is read (no credential, a body over its bound, the mission
    store failing), as JSON-RPC's error object: an MCP client reads JSON-RPC, never problem+json
    (issue 39). The HTTP status stays the refusal's; ``error.data`` carries its ``code``."""
    extra = {"WWW-Authenticate": 'Bearer realm="mcp"'} if error.status == 401 else {}
    code = REFUSAL_CODES.get(error.status, -32603 if error.status >= 500 else -32600)
    failure = {"code": code, "message": error.message, "data": {"code": error.code, "status": error.status}}
    return {
        "statusCode": error.status,
        "headers": {"Content-Type": "application/json", "Cache-Control": "no-store", **extra},
        "body": json.dumps({"jsonrpc": "2.0", "id": None, "error": failure}),
        "isBase64Encoded": False,
    }


def _message(body: bytes) -> JsonRpcMessage | dict[str, Any]:
    """The body as one :class:`JsonRpcMessage`, or the door's refusal of it.

    The body is read within the edge's bounds (``edge.body``: size, depth, number length)
    before anything believes it, then held to the envelope: not JSON is ``-32700``, not the
    envelope ``-32600`` naming the field, both ``400`` as the SDK answers what it cannot read."""
    try:
        raw = read_json(body, MAX_BODY)
    except UnicodeDecodeError:
        return rpc_error(-32700, "Parse error: the body is not UTF-8.")
    except UnreadableBody as unreadable:
        if unreadable.field == "body":
            return rpc_error(-32700, f"Parse error: {unreadable.message}")
        # JSON, but not text UTF-8 carries (a lone surrogate) or a key given twice: the field named
        kind = (-32602, "Invalid params") if unreadable.field.startswith("params") else (-32600, "Invalid request")
        return rpc_error(kind[0], f"{kind[1]}: {unreadable.message}", _known_id(body))
    except ValueError:
        return rpc_error(-32700, "Parse error: the body is not JSON.")
    try:
        return JsonRpcMessage.model_validate(raw)
    except ValidationError as invalid:
        first = invalid.errors(include_url=False)[0]
        field = str(first["loc"][0]) if first["loc"] else "body"  # the envelope's field, not a union branch
        request_id = raw.get("id") if isinstance(raw, dict) else None
        known = request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None
        return rpc_error(-32600, f"Invalid request: {field}: {first['msg']}", known)


def _known_id(body: bytes) -> int | str | None:
    """The id of a message that parsed as JSON but was refused after (already held to the edge's
    bounds), so its refusal answers the caller's id; None when it has no usable one."""
    try:
        raw = json.loads(body)
    except ValueError:
        return None
    request_id = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    return request_id


def rpc_error(code: int, message: str, request_id: int | str | None = None, *, status: int = 400) -> dict[str, Any]:
    """A JSON-RPC error answered 400, as the SDK answers a message it cannot read."""
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json", "Cache-Control": "no-store"},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


async def _serve(method: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
    """Run the request through a fresh stateless session manager (one per invocation: a
    manager runs once) and collect the ASGI answer."""
    manager = StreamableHTTPSessionManager(
        app=server, stateless=True, json_response=True, max_request_body_size=SDK_BODY_BOUND
    )
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "https",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
        "client": ("127.0.0.1", 0),
        "server": ("localhost", 443),
    }
    sent = False
    status = 500
    answer_headers: dict[str, str] = {}
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: MutableMapping[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
            for key, value in message.get("headers", []):
                answer_headers[key.decode("latin-1")] = value.decode("latin-1")
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return status, answer_headers, b"".join(chunks)
