"""The local stack supervises its engine: a process of its own that it starts, watches, restarts
with backoff and stops.

The engine is ``python -m local_engine`` in its own interpreter and process group (a crash or a
large import of the engine is not the stack's), told to exit with the stack (``--exit-with``, so
even a ``kill -9`` of the stack takes it along). Every :data:`PROBE_SECONDS` the supervisor asks
its API port who it is (``GET /api/capabilities``, ``GET /api/status``); when the process exits it
is started again after a backoff that doubles from :data:`FIRST_BACKOFF_SECONDS` to
:data:`MAX_BACKOFF_SECONDS` (back to the first once it has run for a minute). What it saw is the
answer ``GET /knowledge/engine`` gives — ``starting``, ``running`` (with the instance,
generation, version and since when), ``backoff`` with the last exit and the next try as
``reason``, ``stopping`` at the end — written into the file the functions find through
``DEVSTACK_ENGINE_FILE`` (whole: a temporary file, then a rename). The supervisor never waits on
the engine to answer that: it answers from what it last saw. The file also names the folders the
running engine was started with (``input_roots``), which ``GET /knowledge/status`` reports as
what the engine runs with.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

log = logging.getLogger("devstack")

PROBE_SECONDS = 1.0
RESTART_WINDOW_SECONDS = 600.0
FIRST_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 30.0
STEADY_SECONDS = 60.0
"""How long the engine must have run for the next failure's backoff to start from the first again."""
READY_SECONDS = 90.0
"""How long a start waits for the engine to answer (its first start compiles and loads its libraries)."""
STOP_SECONDS = 10.0


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def url_of(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@dataclass
class EngineCommand:
    """How the engine is started: its ports (chosen once, so a restart answers where the functions
    were told it does), its token, data and input root, and its control port when asked for."""

    host: str
    port: int
    token: str
    input_roots: list[Path]
    data_dir: Path | None = None
    state_file: Path | None = None
    control_port: int | None = None
    workers: int | None = None
    log_file: Path | None = None
    environment: dict[str, str] = field(default_factory=dict)

    def argv(self) -> list[str]:
        argv = [sys.executable, "-m", "local_engine", "--host", self.host, "--port", str(self.port)]
        argv += ["--exit-with", str(os.getpid())]
        for root in self.input_roots:
            argv += ["--input-root", str(root)]
        if self.data_dir is not None:
            argv += ["--data", str(self.data_dir)]
        if self.state_file is not None:
            argv += ["--state-file", str(self.state_file)]
        if self.control_port is not None:
            argv += ["--control-port", str(self.control_port)]
        if self.workers is not None:
            argv += ["--workers", str(self.workers)]
        return argv


class EngineSupervisor:
    """Runs the engine ``command`` describes and keeps ``path`` saying what it does."""

    def __init__(self, command: EngineCommand, path: Path) -> None:
        self.command = command
        self.token = command.token
        self.url = url_of(command.host, command.port)
        self.control_url = None if command.control_port is None else url_of(command.host, command.control_port)
        self.path = path
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._started_at = 0.0
        self.next_backoff = FIRST_BACKOFF_SECONDS  # the wait before the next restart
        self._said: dict[str, Any] = {}
        self._identity: dict[str, Any] = {}
        self._ready_since: str | None = None
        self._failures: list[float] = []
        self._client = httpx.Client(headers={"Authorization": f"Bearer {self.token}"}, timeout=2.0)
        self._write(self._answer("starting", None))
        self._thread = threading.Thread(target=self._run, name="engine-supervisor", daemon=True)

    # -- the process --------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The running engine's process id (None between a crash and its restart)."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def start(self) -> EngineSupervisor:
        """Start the engine and return once it answers; an engine that cannot start (its port in
        use, a bad option) raises ``OSError`` with its own words."""
        self._spawn()
        deadline = time.monotonic() + READY_SECONDS
        while not self._probe():
            process = self._process
            if process is not None and process.poll() is not None:
                raise OSError(f"the local engine exited with code {process.returncode}: {self._last_words()}")
            if time.monotonic() > deadline:
                self._terminate()
                raise OSError(f"the local engine did not answer within {READY_SECONDS:.0f} s")
            time.sleep(0.1)
        self._thread.start()
        return self

    def _spawn(self) -> None:
        log_file = self.command.log_file
        output = log_file.open("ab") if log_file is not None else subprocess.DEVNULL
        env = {**os.environ, **self.command.environment, "LOCAL_ENGINE_TOKEN": self.token}
        try:
            with self._lock:
                self._process = subprocess.Popen(  # its own process group: a signal to the stack's is not its
                    self.command.argv(),
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=output,
                    start_new_session=True,
                )
                self._started_at = time.monotonic()
        finally:
            if log_file is not None and not isinstance(output, int):
                output.close()

    def _last_words(self) -> str:
        log_file = self.command.log_file
        if log_file is None or not log_file.exists():
            return "(no log)"
        lines = log_file.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        return lines[-1] if lines else "(nothing logged)"

    def _terminate(self) -> None:
        with self._lock:
            process = self._process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=STOP_SECONDS)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=STOP_SECONDS)
        self._write(self._answer("stopping", "The local stack is stopping."))
        self._terminate()
        self._client.close()

    # -- what it says ---------------------------------------------------------------

    def _answer(self, state: str, reason: str | None) -> dict[str, Any]:
        recent = [at for at in self._failures if at > time.monotonic() - RESTART_WINDOW_SECONDS]
        identity = self._identity if state == "running" else {}
        return {
            "state": state,
            "endpoint": self.url,
            "instance_id": identity.get("instance_id"),
            "generation": identity.get("generation"),
            "version": identity.get("version"),
            "reason": reason,
            "ready_since": self._ready_since if state == "running" else None,
            "restarts_in_window": len(recent),
            # not GET /knowledge/engine's: GET /knowledge/status's input_roots.running
            "input_roots": [str(root) for root in self.command.input_roots] if state == "running" else [],
        }

    def _probe(self) -> bool:
        """Ask the engine who it is; say ``running`` when it answers. False when it does not."""
        try:
            capabilities = self._client.get(f"{self.url}/api/capabilities").raise_for_status().json()
            status = self._client.get(f"{self.url}/api/status").raise_for_status().json()
        except (httpx.HTTPError, ValueError):
            return False
        self._identity = {
            "instance_id": capabilities.get("instance_id"),
            "generation": capabilities.get("generation"),
            "version": status.get("version"),
        }
        if self._ready_since is None:
            self._ready_since = _now()
        self._write(self._answer("running", None))
        return True

    def _run(self) -> None:
        while not self._stop.wait(PROBE_SECONDS):
            process = self._process
            if process is not None and process.poll() is not None:
                self._restart(process.returncode)
            elif not self._probe() and self._said.get("state") == "running":  # alive, but its port is not
                self._failures.append(time.monotonic())
                self._ready_since = None
                self._write(self._answer("backoff", "The engine did not answer its health check."))

    def _restart(self, code: int | None) -> None:
        """The engine exited: say ``backoff`` with why and when, wait, start it again."""
        if time.monotonic() - self._started_at > STEADY_SECONDS:
            self.next_backoff = FIRST_BACKOFF_SECONDS
        wait, self.next_backoff = self.next_backoff, min(self.next_backoff * 2, MAX_BACKOFF_SECONDS)
        self._failures.append(time.monotonic())
        self._ready_since = None
        exited = f"signal {-code}" if code is not None and code < 0 else f"code {code}"
        self._write(self._answer("backoff", f"The engine exited ({exited}); the next start in {wait:.1f} s."))
        if self._stop.wait(wait):
            return
        self._spawn()

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
