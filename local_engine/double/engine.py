"""The test double: the engine with a control port, faults and the hooks tests steer it by.

:class:`Double` is the :class:`~local_engine.serving.server.Engine` plus what only tests and the
local stack ask for: a second port (the control port, ``control.py``), a fault on the API port
(``faults.py``, met before the contract through the API's interceptor), and the feed, job and
export hooks those modules keep for tests. The engine itself never imports this room.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any, Unpack

from local_engine.double.control import ControlApi
from local_engine.double.faults import PACED_MODES, Fault, FaultOptions, fault_response, make_fault, paced
from local_engine.exports import jobs as exports
from local_engine.ingestion import jobs as ingestion
from local_engine.serving import feed
from local_engine.serving.routing import Request, Response
from local_engine.serving.server import Engine, EngineOptions, Server, close_server, serve, url_of


class FaultSlot:
    """The one active fault, behind its own lock; a limited one counts itself down."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fault: Fault | None = None

    def get(self) -> Fault | None:
        with self._lock:
            return self._fault

    def set(self, fault: Fault | None) -> None:
        with self._lock:
            self._fault = fault

    def take(self, path: str) -> Fault | None:
        """The fault a request to ``path`` meets (``down`` is the server's, never a request's)."""
        with self._lock:
            fault = self._fault
            if fault is None or fault.mode == "down" or not fault.applies_to(path):
                return None
            if fault.times is not None:
                self._fault = None if fault.times <= 1 else replace(fault, times=fault.times - 1)
            return fault


class Double(Engine):
    """The engine with its control port. Use :func:`start_double`, or ``with Double(...) as sim:``."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        control_port: int = 0,
        token: str | None = None,
        **options: Unpack[EngineOptions],
    ) -> None:
        super().__init__(host, port, token, **options)
        self.faults = FaultSlot()
        self.api.interceptor = self._meet_fault
        self._control = ControlApi(self)
        self._control_port = control_port
        self._control_server: Server | None = None
        self._control_thread: threading.Thread | None = None

    def start(self) -> Double:
        super().start()
        try:
            server, thread = serve(self.host, self._control_port, self._control, "control", (self.token,))
        except BaseException:
            self.stop()
            raise
        self._control_port = server.server_port
        self._control_server, self._control_thread = server, thread
        return self

    def _stop_more(self) -> None:
        if self._control_server is not None and self._control_thread is not None:
            close_server(self._control_server, self._control_thread)
        self._control_server = None
        self._control_thread = None

    def _meet_fault(self, request: Request, answer: Any) -> Response:
        fault = self.faults.take(request.path)
        if fault is not None:
            if fault.mode == "slow":
                self._stopping.wait(fault.delay_seconds)
            elif fault.mode in PACED_MODES:
                return paced(fault, answer())
            else:
                faulted = fault_response(fault)
                if faulted is not None:
                    return faulted
        response: Response = answer()
        return response

    # -- addresses -----------------------------------------------------------------

    @property
    def control_port(self) -> int:
        return self._control_port

    @property
    def control_url(self) -> str:
        return url_of(self.host, self._control_port)

    # -- faults --------------------------------------------------------------------

    @property
    def fault(self) -> Fault | None:
        return self.faults.get()

    def set_fault(self, mode: str | int | None, **options: Unpack[FaultOptions]) -> Fault | None:
        """Set (or with ``mode=None`` clear) the API port's fault; see ``faults.py``."""
        fault = make_fault(mode, **options)
        self.apply_fault(fault)
        return fault

    def apply_fault(self, fault: Fault | None) -> None:
        self.faults.set(fault)
        self.set_api_listening(fault is None or fault.mode != "down")

    def clear_faults(self) -> None:
        self.apply_fault(None)

    def reset(self) -> None:
        """Back to the demo corpus: faults cleared, requests and keys forgotten."""
        super().reset()
        self.apply_fault(None)

    def snapshot(self) -> dict[str, Any]:
        """The whole state as JSON-ready data, with the fault (the control port's ``GET /state``)."""
        fault = self.faults.get()
        return {**self.state.snapshot(), "fault": None if fault is None else fault.to_json()}

    def set_capabilities(self, capabilities: dict[str, Any]) -> None:
        """Replace what ``GET /api/capabilities`` answers, wholesale."""
        self.state.set_capabilities(capabilities)

    # -- the change feed (local_engine/serving/feed.py) ---------------------------------

    def put_source(self, ref: str, name: str, text: str, status: str = "complete") -> dict[str, Any]:
        """Add or change a source; the revision it publishes is returned as its envelope."""
        return feed.ledger(self.state).put_source(ref, name, text, status)

    def publish_export(self, ref: str) -> dict[str, Any]:
        """An ANTHILL export of the head revision, built now; answers its completion's envelope."""
        return exports.book(self.state).publish_now(ref)

    def feed_fault(self, ref: str, kind: str, count: int = 1) -> dict[str, Any]:
        """skip | expire | ahead (``count`` envelopes older) | generation | redeliver (see feed.py)."""
        return feed.ledger(self.state).fault(ref, kind, count)

    def publish_malformed(self, ref: str, kind: str) -> dict[str, Any]:
        """oversized | not_json | not_an_object | protocol | header: an envelope the door refuses."""
        return feed.ledger(self.state).publish_malformed(ref, kind)

    def feed_receipts(self, ref: str) -> list[dict[str, Any]]:
        return feed.ledger(self.state).receipts(ref)

    # -- ingestion (local_engine/ingestion/jobs.py) ------------------------------------

    def set_job_pace(self, mode: str = "clock", stage_seconds: float | None = None) -> dict[str, Any]:
        """``clock``: a stage every ``stage_seconds``; ``poll``: one step each time a job is read."""
        return ingestion.book(self.state).set_pace(mode, stage_seconds)

    def fail_job_at(self, ref: str, stage: str, job_id: str | None = None) -> dict[str, Any]:
        """The named job (or the next one queued in ``ref``) fails at the end of ``stage``."""
        return ingestion.book(self.state).fail_at(ref, stage, job_id)

    def set_admission(self, **tier: Any) -> dict[str, Any]:
        return ingestion.book(self.state).set_admission(tier)

    def jobs(self, ref: str) -> list[dict[str, Any]]:
        """Every job the engine holds for ``ref``, with what it was given."""
        return ingestion.book(self.state).held(ref)


def start_double(
    host: str = "127.0.0.1",
    port: int = 0,
    control_port: int = 0,
    token: str | None = None,
    **options: Unpack[EngineOptions],
) -> Double:
    """Start the test double in daemon threads; returns once both ports are listening
    (``port`` / ``control_port`` 0 pick free ports; the rest as :func:`~local_engine.start_engine`)."""
    return Double(host, port, control_port, token, **options).start()
