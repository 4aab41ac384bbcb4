"""A local stack for the tests that call it over HTTP: ``python -m devstack`` started in its own
process on free ports (``launch_stack``), and what a test does with it (``LocalStack``).

The session's shared stack (``stack``, one a worker) is the root ``tests/conftest.py``'s fixture, so
the end-to-end and browser files on a worker use the same one (docs/testing.md, "The local stacks").
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import boto3
import httpx

from tests import secrets

# One TLS context for every client a test makes: httpx builds a new one for each client otherwise
# (certifi's bundle read and parsed, ~20 ms of CPU), and the tiers make thousands of them on
# loopback, where no TLS is spoken at all.
TLS = httpx.create_ssl_context()

ROOT = Path(__file__).resolve().parents[1]
ADMIN_CLI = Path(sys.executable).parent / "knowledge-admin"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalStack:
    url: str
    control_url: str
    state_dir: Path
    admin_token: str
    process: subprocess.Popen[str]

    def admin(self, *args: str) -> str:
        """Run knowledge-admin against this stack; returns its stdout."""
        result = subprocess.run(
            [str(ADMIN_CLI), "--local", "--state-dir", str(self.state_dir), *args],
            capture_output=True,
            text=True,
            check=False,
            env={k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "DEVSTACK_"))},
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    @property
    def workspace(self) -> Path:
        """The stack's workspace (``DEVSTACK_WORKSPACE``): folders there import by path."""
        return workspace_for(self.state_dir)

    def principal(self, name: str, *args: str) -> str:
        return self.admin("principal", "create", name, *args).strip()

    @property
    def env(self) -> dict[str, str]:
        """The functions' environment the stack wrote for a second terminal."""
        lines = (self.state_dir / "env").read_text().splitlines()
        return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))

    def aws_client(self, service: str) -> Any:
        """A boto3 client on the stack's AWS emulator, as an operator's script would make one."""
        env = self.env
        return boto3.client(
            service,
            endpoint_url=env["AWS_ENDPOINT_URL"],
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    @cached_property
    def control(self) -> httpx.Client:
        """A client of the FORAGER simulator's control port, kept for the stack's life."""
        return httpx.Client(base_url=self.control_url, verify=TLS, timeout=30.0)

    def fault(self, mode: str | None, **options: object) -> None:
        self.control.post("/faults", json={"mode": mode, **options}).raise_for_status()


def _wait_until_ready(url: str, process: subprocess.Popen[str], log: Path, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=1.0, verify=TLS) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the local stack exited ({process.returncode}):\n{log.read_text()[-4000:]}")
            try:
                client.get(url + "/knowledge/status")
                return
            except httpx.TransportError:
                time.sleep(0.2)
    raise RuntimeError(f"the local stack did not answer within {timeout} s:\n{log.read_text()[-4000:]}")


REAL_DOCS = ROOT / "tests" / "e2e" / "realworld_docs"
WORKSPACE_FOLDERS = ("docs/procedures", "handbook")
"""The folders the end-to-end tests import by path: each a copy of a real documentation set."""


def workspace_for(state_dir: Path) -> Path:
    return state_dir.with_name(state_dir.name + "-workspace")


def make_workspace(folder: Path) -> Path:
    """A workspace holding real documents (``DEVSTACK_WORKSPACE``), as a person's would."""
    for name in WORKSPACE_FOLDERS:
        shutil.copytree(REAL_DOCS, folder / name, dirs_exist_ok=True)
    return folder


@contextmanager
def launch_stack(state_dir: Path) -> Iterator[LocalStack]:
    """``python -m devstack`` in its own process on free ports, until the block ends, its
    workspace a folder of real documents beside its state."""
    ports = {
        name: free_port()
        for name in ("DEVSTACK_PORT", "DEVSTACK_MOTO_PORT", "DEVSTACK_FORAGER_PORT", "DEVSTACK_FORAGER_CONTROL_PORT")
    }
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FORAGER_"))},
        **{k: str(v) for k, v in ports.items()},
        "DEVSTACK_STATE_DIR": str(state_dir),
        "DEVSTACK_WORKSPACE": str(make_workspace(workspace_for(state_dir))),
        "DEVSTACK_ENGINE_CONTROL": "1",  # the tests steer the engine through its control port
    }
    log = state_dir / "stack.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "devstack"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, text=True
        )
    url = f"http://127.0.0.1:{ports['DEVSTACK_PORT']}"
    leaked: list[str] = []
    running: LocalStack | None = None
    try:
        _wait_until_ready(url, process, log)
        secrets.register((state_dir / "simulator.token").read_text().strip())
        running = LocalStack(
            url=url,
            control_url=f"http://127.0.0.1:{ports['DEVSTACK_FORAGER_CONTROL_PORT']}",
            state_dir=state_dir,
            admin_token=(state_dir / "admin.token").read_text().strip(),
            process=process,
        )
        yield running
    finally:
        if running is not None and "control" in vars(running):
            running.control.close()
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        leaked = secrets.scan_stack_log(log)
    assert leaked == [], f"a secret leaked into the local stack's log: {sorted(set(leaked))}"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
