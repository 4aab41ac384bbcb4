"""The local stack supervises its engine: it watches it and says what it is doing.

The local engine runs in the stack's process (its API and control ports, its worker); every
:data:`PROBE_SECONDS` the supervisor connects to its API port (a TCP connect, so the probe is
neither a request the engine records nor a line in its log) and reads its identity from the
engine itself, and writes the answer ``GET /knowledge/engine`` gives — ``starting``,
``running`` (with the instance, generation, version and since when), ``backoff`` with the last
failure as ``reason`` while it does not answer, ``stopping`` at the end — into the file the
functions find through ``DEVSTACK_ENGINE_FILE`` (written whole: a temporary file, then a rename).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger("devstack")

PROBE_SECONDS = 1.0
RESTART_WINDOW_SECONDS = 600.0


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class EngineSupervisor:
    """Watches the engine at ``url`` and keeps ``path`` saying what it does."""

    def __init__(self, engine: Any, path: Path) -> None:
        self.engine = engine
        self.url = str(engine.url)
        self.path = path
        self._stop = threading.Event()
        self._said: dict[str, Any] = {}
        self._ready_since: str | None = None
        self._failures: list[float] = []
        self._write(self._answer("starting", None))
        self._thread = threading.Thread(target=self._run, name="engine-supervisor", daemon=True)

    def start(self) -> EngineSupervisor:
        self._probe()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._write(self._answer("stopping", "The local stack is stopping."))

    def _answer(self, state: str, reason: str | None, identity: dict[str, Any] | None = None) -> dict[str, Any]:
        identity = identity or {}
        recent = [at for at in self._failures if at > time.monotonic() - RESTART_WINDOW_SECONDS]
        return {
            "state": state,
            "endpoint": self.url,
            "instance_id": identity.get("instance_id"),
            "generation": identity.get("generation"),
            "version": identity.get("version"),
            "reason": reason,
            "ready_since": self._ready_since if state == "running" else None,
            "restarts_in_window": len(recent),
        }

    def _probe(self) -> None:
        address = urlsplit(self.url)
        try:
            with socket.create_connection((address.hostname, address.port), timeout=2.0):
                pass
            state = self.engine.state
            identity = {**state.get_capabilities(), "version": state.get_status().get("version")}
        except OSError as exc:
            if self._said.get("state") == "running":
                self._failures.append(time.monotonic())
            self._ready_since = None
            self._write(self._answer("backoff", f"The engine did not answer its health check: {exc}."))
            return
        if self._ready_since is None:
            self._ready_since = _now()
        self._write(self._answer("running", None, identity))

    def _run(self) -> None:
        while not self._stop.wait(PROBE_SECONDS):
            self._probe()

    def _write(self, answer: dict[str, Any]) -> None:
        if answer == self._said:
            return
        if answer["state"] != self._said.get("state"):
            log.info("engine %s%s", answer["state"], f": {answer['reason']}" if answer["reason"] else "")
        self._said = answer
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".engine.", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(answer, handle)
        os.replace(temporary, self.path)
