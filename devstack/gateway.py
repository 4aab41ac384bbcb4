"""A local API Gateway (REST API, Lambda proxy integration) for the template's routes.

``Gateway.handle`` is the whole request path, without sockets: match the route (static
segments before ``{param}`` before ``{proxy+}``), build the proxy event and call the
function, then render its answer. There is no authorizer: each function authenticates its
own request. Where API Gateway answers by itself (no route, a payload too large, the function
failed) it renders the template's gateway responses. ``ApiServer`` puts it on a loopback port.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import ipaddress
import json
import logging
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

from devstack.events import rest_event
from devstack.lambdas import FunctionError
from devstack.template import Route, Template
from knowledge_service.clock import MAX_OFFSET_SECONDS, OffsetClock

log = logging.getLogger("devstack.api")

PAYLOAD_LIMIT_BYTES = 10 * 1024 * 1024
"""API Gateway's request payload limit."""

INTEGRATION_TIMEOUT_SECONDS = 29.0

LISTEN_BACKLOG = 1024
"""The API's listen queue: a burst of hundreds of simultaneous connections waits, never resets
(the kernel caps it at ``net.core.somaxconn``, 4096 on current Linux)."""

_PROXY_RESPONSE_KEYS = {"statusCode", "headers", "multiValueHeaders", "body", "isBase64Encoded"}
_HOP_BY_HOP = {"content-length", "transfer-encoding", "connection", "keep-alive"}

# API Gateway's own status per response type, when the template sets none.
_DEFAULT_STATUS = {
    "ACCESS_DENIED": 403,
    "API_CONFIGURATION_ERROR": 500,
    "BAD_REQUEST_BODY": 400,
    "BAD_REQUEST_PARAMETERS": 400,
    "DEFAULT_4XX": 400,
    "DEFAULT_5XX": 500,
    "INTEGRATION_FAILURE": 504,
    "INTEGRATION_TIMEOUT": 504,
    "MISSING_AUTHENTICATION_TOKEN": 403,
    "REQUEST_TOO_LARGE": 413,
    "UNAUTHORIZED": 401,
}
# API Gateway's own messages ($context.error.message) and default bodies.
_DEFAULT_MESSAGE = {
    "ACCESS_DENIED": "User is not authorized to access this resource with an explicit deny",
    "DEFAULT_5XX": "Internal server error",
    "INTEGRATION_FAILURE": "Internal server error",
    "INTEGRATION_TIMEOUT": "Endpoint request timed out",
    "MISSING_AUTHENTICATION_TOKEN": "Missing Authentication Token",
    "REQUEST_TOO_LARGE": "Request Too Long",
    "UNAUTHORIZED": "Unauthorized",
}


@dataclass
class HttpAnswer:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    base64_decoded: bool = False  # the function's body arrived base64-encoded

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


def json_answer(status: int, payload: Any, request_id: str | None = None) -> HttpAnswer:
    headers = [("Content-Type", "application/json")]
    if request_id:
        headers.append(("x-amzn-RequestId", request_id))
    return HttpAnswer(status, headers, json.dumps(payload).encode("utf-8"))


def envelope_answer(status: int, message: str, code: str, request_id: str | None = None) -> HttpAnswer:
    """The service's error envelope, for answers the local stack itself gives."""
    return json_answer(status, {"success": False, "message": message, "data": None, "code": code}, request_id)


# ---------------------------------------------------------------------- routes
@dataclass(frozen=True)
class RouteMatch:
    route: Route
    path_parameters: dict[str, str]


class RouteTable:
    """API Gateway's resource matching: the most specific resource wins, segment by segment."""

    def __init__(self, routes: Iterable[Route]):
        self._routes = [(route, _segments(route.path)) for route in routes]

    @property
    def routes(self) -> list[Route]:
        return [route for route, _ in self._routes]

    def match(self, method: str, raw_path: str) -> RouteMatch | None:
        """The route for ``method`` on ``raw_path`` (percent-encoded, without the query).

        An empty segment in a route's fixed part (``/knowledge//status``, ``//knowledge/status``)
        names no resource, as in API Gateway: no route, whatever follows it. Inside a greedy
        ``{proxy+}`` (a page path) an empty segment is the path's own, handed on as sent: the
        function resolves it (like ``.``, the "Doubled slashes" ruling). One trailing slash is
        tolerated.
        """
        parts = raw_path.split("/")[1:]
        if parts and parts[-1] == "":
            parts.pop()
        best: tuple[tuple[int, ...], RouteMatch] | None = None
        for route, pattern in self._routes:
            if route.method not in (method.upper(), "ANY"):
                continue
            params = _match(pattern, parts)
            if params is None:
                continue
            # static (2) beats {param} (1) beats {proxy+} (0); an exact method beats ANY
            rank = (
                *(2 if kind == "static" else 1 if kind == "param" else 0 for kind, _ in pattern),
                1 if route.method != "ANY" else 0,
            )
            if best is None or rank > best[0]:
                best = (rank, RouteMatch(route, params))
        return best[1] if best else None


def _request_target(target: str) -> SplitResult:
    """The request line's target split into path and query. An origin-form target (``/...``)
    is split at its ``?`` only: ``urlsplit`` would read ``//knowledge/status`` as the host
    ``knowledge`` and the path ``/status``; it is the path ``//knowledge/status`` (a 404)."""
    if target.startswith("/"):
        path, _, query = target.partition("?")
        return SplitResult("", "", path, query, "")
    return urlsplit(target)  # absolute-form (``http://host/path``)


def _segments(path: str) -> list[tuple[str, str]]:
    segments: list[tuple[str, str]] = []
    for part in (p for p in path.split("/") if p):
        if part.startswith("{") and part.endswith("+}"):
            segments.append(("greedy", part[1:-2]))
        elif part.startswith("{") and part.endswith("}"):
            segments.append(("param", part[1:-1]))
        else:
            segments.append(("static", part))
    return segments


def _match(pattern: list[tuple[str, str]], parts: list[str]) -> dict[str, str] | None:
    params: dict[str, str] = {}
    for index, (kind, name) in enumerate(pattern):
        if kind == "greedy":
            rest = parts[index:]
            if not any(rest):
                return None
            params[name] = unquote("/".join(rest))
            return params
        if index >= len(parts) or parts[index] == "":
            return None
        if kind == "static":
            if unquote(parts[index]) != name:
                return None
        else:
            params[name] = unquote(parts[index])
    return params if len(parts) == len(pattern) else None


# ---------------------------------------------------------------------- gateway responses
class GatewayResponses:
    """The template's ``AWS::ApiGateway::GatewayResponse`` answers, with API Gateway's fallbacks.

    A type the template does not declare falls back to its family (``DEFAULT_4XX`` /
    ``DEFAULT_5XX``) and then to API Gateway's ``{"message": ...}``. Templates support the
    variables API Gateway's gateway responses use most: ``$context.error.messageString``,
    ``$context.error.message``, ``$context.error.responseType`` and ``$context.requestId``.
    """

    def __init__(self, declared: Mapping[str, Mapping[str, Any]]):
        self._declared = declared

    def render(
        self, response_type: str, request_id: str, *, status: int | None = None, message: str | None = None
    ) -> HttpAnswer:
        own = self._declared.get(response_type, {})
        builtin = status or _DEFAULT_STATUS.get(response_type, 500)
        family = self._declared.get("DEFAULT_4XX" if builtin < 500 else "DEFAULT_5XX", {})
        # the type's own StatusCode, else the status this failure has, else the family's
        code = own.get("StatusCode") or status or family.get("StatusCode") or builtin
        message = message or _DEFAULT_MESSAGE.get(response_type, "Error")
        template = (own.get("ResponseTemplates") or {}).get("application/json")
        if template is None:
            template = (family.get("ResponseTemplates") or {}).get("application/json")
        body = (
            _render_template(str(template), message, response_type, request_id)
            if template is not None
            else json.dumps({"message": message})
        )
        headers = [
            ("Content-Type", "application/json"),
            ("x-amzn-RequestId", request_id),
            ("x-amzn-ErrorType", _error_type(response_type)),
        ]
        for source in (family, own):
            for key, value in (source.get("ResponseParameters") or {}).items():
                if key.startswith("gatewayresponse.header."):
                    headers.append((key.removeprefix("gatewayresponse.header."), str(value).strip("'")))
        return HttpAnswer(int(code), headers, body.encode("utf-8"))


def _render_template(template: str, message: str, response_type: str, request_id: str) -> str:
    values = {
        "$context.error.messageString": json.dumps(message),
        "$context.error.message": message,
        "$context.error.responseType": response_type,
        "$context.requestId": request_id,
    }
    pattern = re.compile("|".join(re.escape(k) for k in sorted(values, key=len, reverse=True)))
    return pattern.sub(lambda m: values[m.group(0)], template)


def _error_type(response_type: str) -> str:
    return {
        "UNAUTHORIZED": "UnauthorizedException",
        "ACCESS_DENIED": "AccessDeniedException",
        "MISSING_AUTHENTICATION_TOKEN": "MissingAuthenticationTokenException",
        "REQUEST_TOO_LARGE": "RequestTooLargeException",
        "INTEGRATION_TIMEOUT": "IntegrationTimeoutException",
    }.get(response_type, "InternalServerErrorException")


# ---------------------------------------------------------------------- the gateway
Invoke = Callable[[str, dict[str, Any]], Any]
LocalRoute = Callable[[str, str, list[tuple[str, str]], bytes, str, str], HttpAnswer | None]
"""``(method, path, body, request_id, source_ip)`` -> an answer, or None to fall through to the routes."""


@dataclass
class Gateway:
    """The request path of a REST API in front of Lambda proxy routes."""

    routes: RouteTable
    responses: GatewayResponses
    invoke: Invoke
    stage: str = "v1"
    region: str = "us-east-1"
    account_id: str = "123456789012"
    local_route: LocalRoute | None = None
    binary_media_types: list[str] = field(default_factory=list)
    minimum_compression_size: int | None = None  # the API's MinimumCompressionSize: gzip at or above it
    _warned_base64: bool = field(default=False, init=False)

    @classmethod
    def from_template(cls, template: Template, invoke: Invoke, *, local_route: LocalRoute | None = None) -> Gateway:
        api = next(iter(template.of_type("AWS::Serverless::Api").values()))
        return cls(
            routes=RouteTable(template.routes()),
            responses=GatewayResponses(template.gateway_responses()),
            invoke=invoke,
            stage=template.stage_name(),
            region=template.region,
            account_id=template.account_id,
            local_route=local_route,
            binary_media_types=[str(t) for t in api["Properties"].get("BinaryMediaTypes", [])],
            minimum_compression_size=api["Properties"].get("MinimumCompressionSize"),
        )

    def handle(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes, source_ip: str = "127.0.0.1"
    ) -> HttpAnswer:
        """Answer one HTTP request (``target`` is the request line's path and query)."""
        request_id = str(uuid.uuid4())
        if target.startswith("//"):  # before any normalisation: a path whose first segment is empty
            return self.responses.render("MISSING_AUTHENTICATION_TOKEN", request_id)
        parts = _request_target(target)
        raw_path = parts.path or "/"
        if self.local_route is not None and (raw_path.startswith("/_local/") or raw_path == OPENAPI_PATH):
            answer = self.local_route(method, raw_path, headers, body, request_id, source_ip)
            if answer is not None:
                return answer
        if len(body) > PAYLOAD_LIMIT_BYTES:
            return payload_too_large(request_id)
        matched = self.routes.match(method, raw_path)
        if matched is None:
            return self.responses.render("MISSING_AUTHENTICATION_TOKEN", request_id)
        route = matched.route
        headers = _forwarded(headers, source_ip)
        event = rest_event(
            method,
            raw_path,
            resource=route.path,
            headers=headers,
            query=parse_qsl(parts.query, keep_blank_values=True),
            path_parameters=matched.path_parameters,
            body=body or None,
            stage=self.stage,
            source_ip=source_ip,
            request_id=request_id,
        )
        return compressed(self._integrate(route, event, request_id), headers, self.minimum_compression_size)

    # ------------------------------------------------------------------ the integration
    def _integrate(self, route: Route, event: dict[str, Any], request_id: str) -> HttpAnswer:
        started = time.monotonic()
        try:
            result = self.invoke(route.function, event)
        except FunctionError as error:
            if error.error_type == "RequestEntityTooLargeException":
                return payload_too_large(
                    request_id,
                    "The request is larger than Lambda's 6 MB synchronous payload limit; large uploads go through S3.",
                )
            log.exception("%s failed (%s)", route.function, error.error_type, exc_info=error.__cause__ or error)
            return self.responses.render("DEFAULT_5XX", request_id, status=502)
        except Exception:
            log.exception("%s could not run", route.function)
            return self.responses.render("DEFAULT_5XX", request_id, status=502)
        if time.monotonic() - started > INTEGRATION_TIMEOUT_SECONDS:
            log.error("%s answered after API Gateway's 29 s integration timeout", route.function)
            return self.responses.render("INTEGRATION_TIMEOUT", request_id, status=504)
        try:
            answer = proxy_answer(result, request_id)
        except MalformedProxyResponse as error:
            problem = str(error)
        else:
            if answer.base64_decoded:
                self._warn_base64()
            return answer
        log.error("%s: malformed Lambda proxy response: %s", route.function, problem)
        return self.responses.render("DEFAULT_5XX", request_id, status=502)

    def _warn_base64(self) -> None:
        if not self.binary_media_types and not self._warned_base64:
            self._warned_base64 = True
            log.warning(
                "decoded a base64 response body; a deployed REST API does so only for its "
                "BinaryMediaTypes, and the template declares none"
            )


class MalformedProxyResponse(Exception):
    """API Gateway's "Malformed Lambda proxy response" (a 502)."""


def proxy_answer(result: Any, request_id: str) -> HttpAnswer:
    """The HTTP answer a Lambda proxy response stands for, as API Gateway renders it."""
    if not isinstance(result, Mapping):
        raise MalformedProxyResponse("the answer is not an object")
    extra = set(result) - _PROXY_RESPONSE_KEYS
    if extra:
        log.warning("proxy response carries fields API Gateway does not read: %s", sorted(extra))
    status = result.get("statusCode")
    if isinstance(status, str) and status.isdigit():
        status = int(status)
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        raise MalformedProxyResponse("statusCode is missing or not a status")
    body = result.get("body")
    if body is not None and not isinstance(body, str):
        raise MalformedProxyResponse("body is not a string")
    headers = _proxy_headers(result.get("headers") or {}, result.get("multiValueHeaders") or {})
    headers.append(("x-amzn-RequestId", request_id))
    payload = (body or "").encode("utf-8")
    if result.get("isBase64Encoded") and body:
        try:
            payload = base64.b64decode(body, validate=True)
        except ValueError as error:
            raise MalformedProxyResponse("isBase64Encoded but the body is not base64") from error
        return HttpAnswer(status, headers, payload, base64_decoded=True)
    return HttpAnswer(status, headers, payload)


def compressed(answer: HttpAnswer, request: list[tuple[str, str]], minimum: int | None) -> HttpAnswer:
    """The answer gzip-compressed as API Gateway compresses it when the API sets
    ``MinimumCompressionSize``: a body of at least that many bytes, for a request whose
    ``Accept-Encoding`` takes gzip, unless the function encoded it itself."""
    if minimum is None or len(answer.body) < minimum or answer.header("Content-Encoding") is not None:
        return answer
    accepted = ",".join(v for k, v in request if k.lower() == "accept-encoding")
    codings = {part.split(";")[0].strip().lower(): part for part in accepted.split(",") if part.strip()}
    if "gzip" not in codings or re.search(r";\s*q=0(\.0*)?\s*$", codings["gzip"]):
        return answer
    headers = [(k, v) for k, v in answer.headers if k.lower() != "content-length"]
    headers.append(("Content-Encoding", "gzip"))
    body = gzip.compress(answer.body, compresslevel=6, mtime=0)
    return HttpAnswer(answer.status, headers, body, answer.base64_decoded)


def _proxy_headers(single: Any, multi: Any) -> list[tuple[str, str]]:
    """``headers`` and ``multiValueHeaders`` merged: a name in both takes the multi-value list."""
    if not isinstance(single, Mapping) or not isinstance(multi, Mapping):
        raise MalformedProxyResponse("headers are not objects")
    headers: list[tuple[str, str]] = []
    multi_names = {k.lower() for k in multi}
    headers.extend((name, _header_value(value)) for name, value in single.items() if name.lower() not in multi_names)
    for name, values in multi.items():
        if not isinstance(values, list):
            raise MalformedProxyResponse(f"multiValueHeaders[{name!r}] is not a list")
        headers.extend((name, _header_value(v)) for v in values)
    headers = [(k, v) for k, v in headers if k.lower() not in _HOP_BY_HOP]
    if not any(k.lower() == "content-type" for k, _ in headers):
        headers.append(("Content-Type", "application/json"))
    return headers


def _forwarded(headers: list[tuple[str, str]], source_ip: str) -> list[tuple[str, str]]:
    """The headers API Gateway adds on the way in: X-Forwarded-For (appended to) and -Proto."""
    names = {name.lower() for name, _ in headers}
    added = [(n, f"{v}, {source_ip}") if n.lower() == "x-forwarded-for" else (n, v) for n, v in headers]
    if "x-forwarded-for" not in names:
        added.append(("X-Forwarded-For", source_ip))
    if "x-forwarded-proto" not in names:
        added.append(("X-Forwarded-Proto", "http"))
    return added


def _header_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def payload_too_large(request_id: str, message: str | None = None) -> HttpAnswer:
    return envelope_answer(
        413, message or "The request is larger than API Gateway's 10 MB payload limit.", "payload_too_large", request_id
    )


# ---------------------------------------------------------------------- local tooling
_SCHEDULE_RUN = re.compile(r"^/_local/schedules/([^/]+)/run/?$")
OPENAPI_PATH = "/openapi.json"
METRICS_PATH = "/_local/metrics"


CLOCK_PATH = "/_local/clock"


def local_routes(
    run_schedule: Callable[[str], Any],
    clock_file: Path | None = None,
    metrics: Callable[[], dict[str, Any]] | None = None,
) -> LocalRoute:
    """The local stack's own control routes (no authentication: loopback callers only).

    ``POST /_local/schedules/<FunctionLogicalId>/run`` runs that function's schedule now
    and answers its handler's return value as JSON. ``GET /openapi.json`` answers the API's
    OpenAPI document, generated from the code that is running. ``GET /_local/clock`` answers
    how far the functions' clock runs ahead of the wall clock, and ``PUT /_local/clock``
    ``{"offset_seconds": n}`` moves it (``clock_file``, the file ``DEVSTACK_CLOCK_FILE`` names).
    ``GET /_local/metrics`` answers ``metrics()``: the invocations and AWS calls counted since
    start, and the metrics the functions published (``cloudwatch``; ``devstack.metering.Meter``).
    """

    def route(
        method: str, path: str, headers: list[tuple[str, str]], body: bytes, request_id: str, source_ip: str
    ) -> HttpAnswer | None:
        if path == OPENAPI_PATH and method in ("GET", "HEAD"):
            from knowledge_service.edge.openapi import openapi_document

            return json_answer(200, openapi_document(), request_id)
        local = path.rstrip("/") == CLOCK_PATH and clock_file is not None
        if (local or _SCHEDULE_RUN.match(path)) and method not in ("GET", "HEAD"):
            refused = _refused_from_afar(headers, body, request_id)
            if refused is not None:
                return refused
        if local and clock_file is not None:
            return _clock(method, body, request_id, source_ip, clock_file)
        if path == METRICS_PATH and metrics is not None and method == "GET":
            if not _is_loopback(source_ip):
                return envelope_answer(
                    403, "Local control routes answer loopback callers only.", "permission_denied", request_id
                )
            return json_answer(200, metrics(), request_id)
        matched = _SCHEDULE_RUN.match(path)
        if matched is None:
            return None
        if not _is_loopback(source_ip):
            return envelope_answer(
                403, "Local control routes answer loopback callers only.", "permission_denied", request_id
            )
        if method != "POST":
            answer = envelope_answer(405, "This local route takes POST.", "method_not_allowed", request_id)
            answer.headers.append(("Allow", "POST"))
            return answer
        function = matched.group(1)
        try:
            result = run_schedule(function)
        except KeyError:
            return envelope_answer(404, f"No schedule runs a function named {function!r}.", "not_found", request_id)
        except FunctionError as error:
            log.exception("%s failed (%s)", function, error.error_type, exc_info=error.__cause__ or error)
            return envelope_answer(500, f"{function} failed: {error.error_type}: {error}", "internal", request_id)
        return json_answer(200, result, request_id)

    return route


LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
"""The names a local route's ``Host`` may carry: a loopback address, never a name that resolves
there only for now (DNS rebinding)."""


def _refused_from_afar(headers: list[tuple[str, str]], body: bytes, request_id: str) -> HttpAnswer | None:
    """A local route that changes something takes JSON from its own origin alone: a web page of
    another origin (a cross-site ``text/plain`` POST, a DNS-rebound name) is refused, since
    loopback alone does not tell a person's browser from a test."""
    named = {name.lower(): value.strip() for name, value in headers}
    origin, host = named.get("origin"), named.get("host", "")
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    if name.strip("[]").lower() not in LOOPBACK_NAMES or (
        origin is not None and origin not in (f"http://{host}", f"https://{host}")
    ):
        return envelope_answer(
            403, "Local control routes refuse requests from another origin.", "permission_denied", request_id
        )
    kind = named.get("content-type", "").split(";")[0].strip().lower()
    if (body or kind) and kind != "application/json":
        return envelope_answer(
            415, "Local control routes take application/json bodies only.", "unsupported_media_type", request_id
        )
    return None


def _clock(method: str, body: bytes, request_id: str, source_ip: str, clock_file: Path) -> HttpAnswer:
    """Read or move the functions' clock (the offset file their ``OffsetClock`` reads each call)."""
    if not _is_loopback(source_ip):
        return envelope_answer(
            403, "Local control routes answer loopback callers only.", "permission_denied", request_id
        )
    if method == "PUT":
        try:
            offset = json.loads(body or b"{}").get("offset_seconds")
        except (ValueError, AttributeError):
            offset = None
        if isinstance(offset, bool) or not isinstance(offset, int) or abs(offset) > MAX_OFFSET_SECONDS:
            return envelope_answer(
                400, "offset_seconds must be a whole number of seconds (at most ten years).", "bad_request", request_id
            )
        clock_file.write_text(f"{offset}\n", encoding="utf-8")
    elif method != "GET":
        answer = envelope_answer(405, "This local route takes GET or PUT.", "method_not_allowed", request_id)
        answer.headers.append(("Allow", "GET, PUT"))
        return answer
    clock = OffsetClock(clock_file)
    payload = {"offset_seconds": int(clock.offset().total_seconds()), "now": clock().isoformat()}
    return json_answer(200, payload, request_id)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.removeprefix("::ffff:")).is_loopback
    except ValueError:
        return False


# ---------------------------------------------------------------------- the HTTP server
class _BodyTooLarge(Exception):
    pass


_SERVER_ERRORS = {
    400: "The request could not be read as HTTP/1.1.",
    408: "The request did not arrive in time.",
    414: "The request line is longer than this API accepts (64 KiB).",
    431: "The request's headers are larger than this API accepts.",
    501: "This method is not one HTTP defines.",
    505: "This API speaks HTTP/1.0 and HTTP/1.1.",
}
_SERVER_ERROR_CODES = {
    408: "request_timeout",
    414: "uri_too_long",
    431: "headers_too_large",
    501: "not_implemented",
    505: "http_version_not_supported",
}


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "devstack-apigateway"
    sys_version = ""
    timeout = 60
    gateway: Gateway  # set on the subclass ApiServer makes

    def setup(self) -> None:
        super().setup()
        # Answers go out in two writes (headers, body): without this, Nagle holds the second
        # until the client's delayed ACK, ~40 ms per request on a kept-alive connection.
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (request line or headers too long, malformed, an HTTP
        version it does not speak) in the service's envelope, never its HTML page."""
        self.close_connection = True
        text = _SERVER_ERRORS.get(code, message or "The request could not be read.")
        answer = envelope_answer(code, text, _SERVER_ERROR_CODES.get(code, "bad_request"), str(uuid.uuid4()))
        answer.headers.append(("Connection", "close"))
        if not getattr(self, "command", None):
            self.command = ""  # the request line never parsed: there is no HEAD to honour
        if getattr(self, "request_version", None) in (None, "HTTP/0.9"):
            self.request_version = "HTTP/1.1"  # unparsed: answer with a status line and headers all the same
        try:
            self._write(answer)
            self.wfile.flush()
        except OSError:
            return
        self._drain()
        self._log_line(code, time.monotonic())

    def _drain(self) -> None:
        """Read what the client is still sending (the rest of a 1 MB request line) before the
        close: closing a socket with unread data resets it, and the client loses the answer."""
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(2.0)
            left = PAYLOAD_LIMIT_BYTES
            while left > 0:
                chunk = self.rfile.read1(65536) if hasattr(self.rfile, "read1") else self.rfile.read(65536)
                if not chunk:
                    break
                left -= len(chunk)

    def do_GET(self) -> None:
        self._serve()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = do_GET

    def __getattr__(self, name: str) -> Any:
        # Any other method (TRACE, PROPFIND, …) reaches the gateway too, which answers it as
        # API Gateway does a method no resource declares, instead of http.server's 501 page.
        if name.startswith("do_") and name[3:].isalpha() and name[3:].isupper():
            return self.do_GET
        raise AttributeError(name)

    def handle_expect_100(self) -> bool:
        if self._declared_length() > PAYLOAD_LIMIT_BYTES:
            self._refuse_too_large()
            return False
        return super().handle_expect_100()

    def _declared_length(self) -> int:
        try:
            return int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return 0

    def _refuse_too_large(self) -> None:
        self.close_connection = True
        answer = payload_too_large(str(uuid.uuid4()))
        answer.headers.append(("Connection", "close"))
        self._write(answer)
        self._log_line(answer.status, time.monotonic())

    def _serve(self) -> None:
        started = time.monotonic()
        if self._declared_length() > PAYLOAD_LIMIT_BYTES:
            self._refuse_too_large()
            return
        try:
            body = self._read_body()
        except _BodyTooLarge:
            self._refuse_too_large()
            return
        headers = list(self.headers.items())
        try:
            answer = self.gateway.handle(self.command, self._target(), headers, body, self.client_address[0])
        except Exception:
            log.exception("the local gateway failed")
            answer = envelope_answer(500, "The local gateway failed; see its log.", "internal")
        self._write(answer)
        self._log_line(answer.status, started)

    def _target(self) -> str:
        """The request line's target exactly as the client sent it. ``self.path`` is not: since
        CPython 3.11.4 http.server collapses a leading ``//`` there (an open-redirect guard for
        its file server), which routed ``//knowledge/status`` to ``/knowledge/status``; API
        Gateway answers it as no route (issue 39)."""
        words = self.requestline.split()
        return words[1] if len(words) == 3 else self.path

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks: list[bytes] = []
            size = 0
            while True:
                line = self.rfile.readline(65537)
                length = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if length == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                size += length
                if size > PAYLOAD_LIMIT_BYTES:
                    raise _BodyTooLarge
                chunks.append(self.rfile.read(length))
                self.rfile.readline(65537)
            return b"".join(chunks)
        length = self._declared_length()
        return self.rfile.read(length) if length > 0 else b""

    def _write(self, answer: HttpAnswer) -> None:
        self.send_response_only(answer.status)
        self.send_header("Date", self.date_time_string())
        for name, value in answer.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        if self.command != "HEAD" and answer.body:
            self.wfile.write(answer.body)

    def _log_line(self, status: int, started: float) -> None:
        # never the query string: tokens do not belong there, but still
        path = urlsplit(getattr(self, "path", "") or "").path[:200]
        log.info("%s %s %d %.1fms", self.command, path, status, (time.monotonic() - started) * 1000)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # one line per request comes from _log_line; http.server's own lines would repeat it


class _Server(ThreadingHTTPServer):
    """Keeps its open connections, so stopping closes the kept-alive ones too."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]):
        super().__init__(address, handler)
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self.connections_lock:
            open_now = list(self.connections)
        for connection in open_now:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up before its answer was written (a timed-out probe, a test
        # that gives up) is not the gateway failing: one debug line, not a traceback.
        if isinstance(sys.exc_info()[1], ConnectionError):
            log.debug("%s hung up before its answer was written", client_address)
            return
        super().handle_error(request, client_address)


class ApiServer:
    """The gateway on ``host:port`` (port 0: a free one), served from daemon threads."""

    def __init__(self, gateway: Gateway, host: str = "127.0.0.1", port: int = 3000):
        handler = type("GatewayRequestHandler", (_RequestHandler,), {"gateway": gateway})
        self._server = _Server((host, port), handler)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = str(self._server.server_address[0])
        return f"http://{host}:{self.port}"

    def start(self) -> ApiServer:
        self._thread = threading.Thread(target=self._server.serve_forever, name="devstack-api", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self._server.server_close()
        self._server.close_connections()
