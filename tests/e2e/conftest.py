"""End to end: the local stack started as a user starts it (``python -m devstack`` in its
own process), called over HTTP, with principals made by ``knowledge-admin --local`` from
"a second terminal"."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from tests import secrets

ROOT = Path(__file__).resolve().parents[2]
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

    def fault(self, mode: str | None, **options: object) -> None:
        httpx.post(f"{self.control_url}/faults", json={"mode": mode, **options}).raise_for_status()


def _wait_until_ready(url: str, process: subprocess.Popen[str], log: Path, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the local stack exited ({process.returncode}):\n{log.read_text()[-4000:]}")
        try:
            httpx.get(url + "/knowledge/status", timeout=1.0)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError(f"the local stack did not answer within {timeout} s:\n{log.read_text()[-4000:]}")


@contextmanager
def launch_stack(state_dir: Path) -> Iterator[LocalStack]:
    """``python -m devstack`` in its own process on free ports, until the block ends."""
    ports = {
        name: free_port()
        for name in ("DEVSTACK_PORT", "DEVSTACK_MOTO_PORT", "DEVSTACK_FORAGER_PORT", "DEVSTACK_FORAGER_CONTROL_PORT")
    }
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FORAGER_"))},
        **{k: str(v) for k, v in ports.items()},
        "DEVSTACK_STATE_DIR": str(state_dir),
    }
    log = state_dir / "stack.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "devstack"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, text=True
        )
    url = f"http://127.0.0.1:{ports['DEVSTACK_PORT']}"
    leaked: list[str] = []
    try:
        _wait_until_ready(url, process, log)
        secrets.register((state_dir / "simulator.token").read_text().strip())
        yield LocalStack(
            url=url,
            control_url=f"http://127.0.0.1:{ports['DEVSTACK_FORAGER_CONTROL_PORT']}",
            state_dir=state_dir,
            admin_token=(state_dir / "admin.token").read_text().strip(),
            process=process,
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        leaked = secrets.scan_stack_log(log)
    assert leaked == [], f"a secret leaked into the local stack's log: {sorted(set(leaked))}"


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    with launch_stack(tmp_path_factory.mktemp("devstack")) as running:
        yield running


def _record(response: httpx.Response) -> None:
    response.read()
    secrets.record(response.text)


@pytest.fixture
def http(stack: LocalStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=30.0, event_hooks={"response": [_record]}) as client:
        yield client


@pytest.fixture(autouse=True)
def _no_fault_left_behind(request: pytest.FixtureRequest) -> Iterator[None]:
    """The shared stack's FORAGER healthy again after each test that used it. Asked for by name,
    not as an argument: a test on a stack of its own (the fuzz run) or on none (a parser's test)
    must not start the shared one for nothing."""
    yield
    if "stack" in request.fixturenames:
        request.getfixturevalue("stack").fault(None)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def move_clock(stack: LocalStack) -> Iterator[Callable[[int], None]]:
    """Moves the functions' clock (``PUT /_local/clock``); put back to the wall clock after the test,
    with the engine's faults cleared."""

    def move(seconds: int) -> None:
        answer = httpx.put(f"{stack.url}/_local/clock", json={"offset_seconds": seconds})
        assert answer.status_code == 200, answer.text
        assert answer.json()["offset_seconds"] == seconds

    yield move
    move(0)
    stack.fault(None)
