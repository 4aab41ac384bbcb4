"""The control port: how tests and the local stack steer the test double.

The product never calls it. It has no authentication, which is why the double binds
loopback addresses only (see README.md), and why it answers only requests a web page could not
have sent: a ``Host`` naming a loopback address (never a name that resolves there only for now,
as DNS rebinding makes one), no ``Origin`` but its own, and a body only as ``application/json``
(a cross-site form's ``text/plain`` POST is refused).
"""

from __future__ import annotations

from typing import Any, Protocol

from local_engine.double.faults import Fault, FaultError, fault_from_json
from local_engine.exports import jobs as exports
from local_engine.ingestion import jobs as ingestion
from local_engine.serving import feed
from local_engine.serving.routing import (
    ApiError,
    Handler,
    Request,
    Response,
    Router,
    error_response,
    json_response,
)
from local_engine.serving.state import EngineState


class Controller(Protocol):
    """What the control port needs of the running double."""

    @property
    def state(self) -> EngineState: ...

    @property
    def fault(self) -> Fault | None: ...

    def snapshot(self) -> dict[str, Any]: ...

    def apply_fault(self, fault: Fault | None) -> None: ...

    def reset(self) -> None: ...


LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


def _refused_from_afar(request: Request) -> Response | None:
    host = request.header("Host") or ""
    name = host if host.endswith("]") else host.rsplit(":", 1)[0]
    origin = request.header("Origin")
    if name.strip("[]").lower() not in LOOPBACK_NAMES or (
        origin is not None and origin not in (f"http://{host}", f"https://{host}")
    ):
        return error_response(403, "forbidden", "The control port answers its own loopback address only.")
    kind = (request.header("Content-Type") or "").split(";")[0].strip().lower()
    if (request.body or kind) and kind != "application/json":
        return error_response(415, "unsupported_media_type", "The control port takes application/json bodies only.")
    return None


def _fault_json(fault: Fault | None) -> dict[str, Any]:
    return {"fault": None if fault is None else fault.to_json()}


class ControlApi:
    def __init__(self, controller: Controller) -> None:
        self._controller = controller
        self.router = Router()
        for method, pattern, handler in self._routes():
            self.router.add(method, pattern, handler)

    def _routes(self) -> list[tuple[str, str, Handler]]:
        return [
            ("GET", r"/health", self.health),
            ("POST", r"/reset", self.reset),
            ("GET", r"/faults", self.get_faults),
            ("POST", r"/faults", self.set_faults),
            ("DELETE", r"/faults", self.clear_faults),
            ("GET", r"/state", self.get_state),
            ("GET", r"/capabilities", self.get_capabilities),
            ("PUT", r"/capabilities", self.put_capabilities),
            *feed.control_routes(self._controller.state),
            *ingestion.control_routes(self._controller.state),
            *exports.control_routes(self._controller.state),
        ]

    def handle(self, request: Request) -> Response:
        refused = _refused_from_afar(request)
        return refused if refused is not None else self.router.dispatch(request)

    def streams(self, method: str, path: str) -> bool:
        """Whether the route reads the body as it arrives (an upload's), not whole first."""
        return self.router.streams(method, path)

    def health(self, request: Request) -> Response:
        return json_response(200, {"ok": True})

    def reset(self, request: Request) -> Response:
        self._controller.reset()
        return json_response(200, {"ok": True})

    def get_faults(self, request: Request) -> Response:
        return json_response(200, _fault_json(self._controller.fault))

    def set_faults(self, request: Request) -> Response:
        try:
            fault = fault_from_json(request.json())
        except FaultError as exc:
            raise ApiError(400, "bad_request", str(exc)) from None
        self._controller.apply_fault(fault)
        return json_response(200, _fault_json(fault))

    def clear_faults(self, request: Request) -> Response:
        self._controller.apply_fault(None)
        return json_response(200, _fault_json(None))

    def get_state(self, request: Request) -> Response:
        return json_response(200, self._controller.snapshot())

    def get_capabilities(self, request: Request) -> Response:
        return json_response(200, self._controller.state.get_capabilities())

    def put_capabilities(self, request: Request) -> Response:
        capabilities = request.json_object()
        self._controller.state.set_capabilities(capabilities)
        return json_response(200, self._controller.state.get_capabilities())
