"""Requests, responses and a table-driven router, shared by the API and control ports.

Nothing here knows about sockets: the HTTP layer (``server.py``) turns the wire into a
:class:`Request` and a :class:`Response` back into bytes, so handlers are plain functions
that are easy to add and to test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from email.message import Message
from typing import Any

JSON_CONTENT_TYPE = "application/json; charset=utf-8"


class ApiError(Exception):
    """An answer in the contract's error shape: ``{"error": {"code", "message"}}``."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = list(headers)

    def to_response(self) -> Response:
        return error_response(self.status, self.code, self.message, self.headers)


class BodyError(ApiError):
    """The request's body could not be read as its framing says (it ended early, a chunk size is
    not one, it grew past the cap): the answer is this error, and the connection is not reused."""


@dataclass
class Request:
    """One HTTP request as the handlers see it.

    ``body`` is the body whole, except for a :func:`streamed` route's request: its body is
    ``chunks``, read from the connection as the handler iterates (a :class:`BodyError` if it
    breaks off), and ``body`` is empty.
    """

    method: str
    path: str
    query: str
    headers: Message
    body: bytes
    params: dict[str, str] = field(default_factory=dict)
    chunks: Iterable[bytes] = ()

    def header(self, name: str) -> str | None:
        value = self.headers.get(name)
        return None if value is None else str(value)

    @property
    def idempotency_key(self) -> str | None:
        return self.header("Idempotency-Key")

    def json(self) -> Any:
        """The body as JSON, or a 400 ``bad_request``."""
        if not self.body.strip():
            raise ApiError(400, "bad_request", "A JSON body is required.")
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ApiError(400, "bad_request", "The body is not valid JSON.") from exc

    def json_object(self) -> dict[str, Any]:
        body = self.json()
        if not isinstance(body, dict):
            raise ApiError(400, "bad_request", "The body must be a JSON object.")
        return body


@dataclass
class Response:
    """What a handler answers.

    ``declared_length`` and ``abort`` exist for the ``reset`` fault: the headers announce
    ``declared_length`` bytes, only ``body`` is written, and the connection is then
    closed abruptly. ``trickle_seconds`` (the ``trickle`` fault) writes the body one byte
    at a time, that long apart; ``stall_seconds`` (``stall``) writes the headers, then
    nothing for that long, then resets the connection.
    """

    status: int
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)
    content_type: str | None = JSON_CONTENT_TYPE
    declared_length: int | None = None
    abort: bool = False
    trickle_seconds: float | None = None
    stall_seconds: float | None = None
    stream: Iterator[bytes] | None = None  # a body written as it is made (an archive), never held whole


def json_response(status: int, payload: Any, headers: Iterable[tuple[str, str]] = ()) -> Response:
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Response(status=status, body=body, headers=list(headers))


def error_response(
    status: int,
    code: str,
    message: str,
    headers: Iterable[tuple[str, str]] = (),
) -> Response:
    return json_response(status, {"error": {"code": code, "message": message}}, headers)


Handler = Callable[[Request], Response]


@dataclass(frozen=True)
class StreamedHandler:
    """A handler that reads its request's body as it arrives (``Request.chunks``), never whole:
    an upload's 100 MB goes to disk a chunk at a time. See :func:`streamed`."""

    handler: Handler

    def __call__(self, request: Request) -> Response:
        return self.handler(request)


def streamed(handler: Handler) -> Handler:
    """Mark ``handler`` as reading its body from ``Request.chunks`` (``Router.streams``)."""
    return StreamedHandler(handler)


@dataclass(frozen=True)
class Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler


@dataclass(frozen=True)
class Resolution:
    """The outcome of routing: a handler with its path parameters, or a 404 / 405."""

    handler: Handler | None
    params: dict[str, str]
    allowed: tuple[str, ...]  # methods the path answers, when the method is wrong


class Router:
    """An ordered table of ``(method, regex, handler)``; regexes match the whole path.

    Named groups in the regex become ``Request.params``.
    """

    def __init__(self) -> None:
        self._routes: list[Route] = []

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        self._routes.append(Route(method.upper(), re.compile(pattern), handler))

    def resolve(self, method: str, path: str) -> Resolution:
        allowed: list[str] = []
        for route in self._routes:
            match = route.pattern.fullmatch(path)
            if match is None:
                continue
            if route.method == method.upper():
                return Resolution(route.handler, match.groupdict(), ())
            if route.method not in allowed:
                allowed.append(route.method)
        return Resolution(None, {}, tuple(allowed))

    def streams(self, method: str, path: str) -> bool:
        """Whether the route ``method path`` reads its body as it arrives (:func:`streamed`)."""
        return isinstance(self.resolve(method, path).handler, StreamedHandler)

    def dispatch(self, request: Request) -> Response:
        """Route and run; 404 ``not_found`` / 405 ``method_not_allowed`` otherwise."""
        resolution = self.resolve(request.method, request.path)
        if resolution.handler is None:
            if resolution.allowed:
                return error_response(
                    405,
                    "method_not_allowed",
                    f"{request.method} is not allowed on {request.path}.",
                    [("Allow", ", ".join(resolution.allowed))],
                )
            return error_response(404, "not_found", f"No route for {request.path}.")
        request.params = resolution.params
        try:
            return resolution.handler(request)
        except ApiError as exc:
            return exc.to_response()

    @property
    def routes(self) -> tuple[Route, ...]:
        return tuple(self._routes)
