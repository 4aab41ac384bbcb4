"""The API port: FORAGER's upstream contract (docs/upstream-contract.md).

Order of work for every request: record it, pass it to the interceptor if one is set (the
test double's faults, ``local_engine/double/``), check the bearer credential on ``/api`` paths,
route, require an ``Idempotency-Key`` on every POST, then run the handler.

To add a route, write a handler ``(Request) -> Response`` and add it to the table in
:meth:`ForagerApi._routes`.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
from collections.abc import Callable
from email.message import Message
from typing import Any

from local_engine.exports import jobs as exports
from local_engine.ingestion import jobs as ingestion
from local_engine.knowledge import curation
from local_engine.search.reads import ReadsApi
from local_engine.serving import feed
from local_engine.serving.routing import ApiError, Handler, Request, Response, Router, error_response, json_response
from local_engine.serving.state import EngineState, IdempotencyConflict

logger = logging.getLogger("local_engine")

PROJECT_REF_PATTERN = r"[a-z0-9_]{1,64}"
NAME_MAX = 120
DESCRIPTION_MAX = 2000
IDEMPOTENCY_KEY_RE = re.compile(r"[\x21-\x7e]{1,255}")
# Bodies above this are not parsed into the request record.
RECORD_BODY_MAX = 1024 * 1024


Interceptor = Callable[[Request, Callable[[], Response]], Response]
"""Sees each request before the contract does: answers it itself, or calls the real answer and
returns it (delayed or paced as it likes). The engine sets none; the test double sets its faults."""


def is_api_path(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


def redact_headers(headers: Message) -> dict[str, str]:
    """Headers as a dict, the ``Authorization`` value replaced by ``Bearer ***``."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        shown = str(value)
        if name.lower() == "authorization":
            shown = "Bearer ***" if shown.lower().startswith("bearer") else "***"
        out[name] = f"{out[name]}, {shown}" if name in out else shown
    return out


def record_body(body: bytes) -> Any:
    if not body or len(body) > RECORD_BODY_MAX:
        return None
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


class ForagerApi:
    """Serves the contract from a :class:`EngineState`."""

    def __init__(self, state: EngineState, token: str) -> None:
        self.state = state
        self._token = token
        self.interceptor: Interceptor | None = None
        self.router = Router()
        for method, pattern, handler in self._routes():
            self.router.add(method, pattern, handler)

    def _routes(self) -> list[tuple[str, str, Handler]]:
        reads = ReadsApi(self.state)
        return [
            ("GET", r"/api/status", self.get_status),
            ("GET", r"/api/capabilities", self.get_capabilities),
            ("GET", r"/api/projects", self.list_projects),
            ("POST", r"/api/projects", self.create_project),
            *reads.routes(),
            *feed.api_routes(self.state),
            *ingestion.api_routes(self.state),
            *curation.api_routes(self.state, reads),
            *exports.api_routes(self.state),
        ]

    # -- the pipeline ------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        entry = self.state.record_request(
            {
                "method": request.method,
                "path": request.path,
                "query": request.query,
                "headers": redact_headers(request.headers),
                "idempotency_key": request.idempotency_key,
                "body": record_body(request.body),
            }
        )
        response = self._handle(request)
        self.state.set_request_status(entry, response.status)
        return response

    def streams(self, method: str, path: str) -> bool:
        """Whether the route reads the body as it arrives (an upload's), not whole first."""
        return self.router.streams(method, path)

    def _handle(self, request: Request) -> Response:
        if self.interceptor is not None:
            return self.interceptor(request, lambda: self._answer(request))
        return self._answer(request)

    def _answer(self, request: Request) -> Response:
        if is_api_path(request.path) and not self._authorized(request):
            return error_response(
                401,
                "unauthorized",
                "A valid bearer credential is required.",
                [("WWW-Authenticate", "Bearer")],
            )
        if request.method == "POST" and self.router.resolve("POST", request.path).handler:
            key = request.idempotency_key
            if key is None or key == "":
                return error_response(
                    400,
                    "idempotency_key_required",
                    "Every POST needs an Idempotency-Key header.",
                )
            if not IDEMPOTENCY_KEY_RE.fullmatch(key):
                return error_response(
                    400,
                    "bad_request",
                    "The Idempotency-Key must be 1 to 255 visible ASCII characters.",
                )
        return self.router.dispatch(request)

    def _authorized(self, request: Request) -> bool:
        values = request.headers.get_all("Authorization") or []
        if len(values) != 1:
            return False
        expected = f"Bearer {self._token}".encode()
        return hmac.compare_digest(str(values[0]).encode("utf-8"), expected)

    def _idempotent(
        self,
        request: Request,
        body: Any,
        create: Callable[[], tuple[int, Any]],
        replay_status: Callable[[int], int] = lambda status: status,
    ) -> Response:
        key = request.idempotency_key
        assert key is not None  # checked in _handle for every POST route
        try:
            status, payload = self.state.idempotent(key, request.method, request.path, body, create, replay_status)
        except IdempotencyConflict:
            raise ApiError(
                409,
                "idempotency_key_reused",
                "This Idempotency-Key was already used for a different request.",
            ) from None
        return json_response(status, payload)

    # -- handlers ----------------------------------------------------------------

    def get_status(self, request: Request) -> Response:
        return json_response(200, self.state.get_status())

    def get_capabilities(self, request: Request) -> Response:
        return json_response(200, self.state.get_capabilities())

    def list_projects(self, request: Request) -> Response:
        return json_response(200, {"projects": self.state.list_projects()})

    def create_project(self, request: Request) -> Response:
        body = request.json_object()
        unknown = sorted(set(body) - {"name", "description"})
        if unknown:
            raise ApiError(400, "bad_request", f"Unknown field(s): {', '.join(unknown)}.")
        name = body.get("name")
        if not isinstance(name, str):
            raise ApiError(400, "bad_request", "name is required and must be text.")
        name = name.strip()
        if not 1 <= len(name) <= NAME_MAX:
            raise ApiError(400, "bad_request", f"name must be 1 to {NAME_MAX} characters.")
        description = body.get("description", "")
        if not isinstance(description, str):
            raise ApiError(400, "bad_request", "description must be text.")
        description = description.strip()
        if len(description) > DESCRIPTION_MAX:
            raise ApiError(
                400,
                "bad_request",
                f"description must be at most {DESCRIPTION_MAX} characters.",
            )

        def create() -> tuple[int, Any]:
            return 201, self.state.create_project(name, description).to_json()

        return self._idempotent(request, body, create, lambda status: 200 if status == 201 else status)
