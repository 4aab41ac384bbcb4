"""End to end: the whole local stack in this process, over HTTP, as a newcomer uses it.

One stack at a time per process (the functions share ``os.environ``), so the tests here
share one, in order: the first ones use it as started; the last ones restart it on the
same state directory to prove what survives.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from devstack.stack import Stack, StackStartError, start_stack
from devstack.template import ROOT, Template
from tests.localstack import free_port

pytestmark = pytest.mark.e2e

RESPONSES = Template().gateway_responses()
UNAUTHORIZED = RESPONSES["UNAUTHORIZED"]["ResponseTemplates"]["application/json"].encode()
MISSING_ROUTE = RESPONSES["MISSING_AUTHENTICATION_TOKEN"]["ResponseTemplates"]["application/json"].encode()


class Running:
    """The stack the tests share, restartable on its state directory."""

    def __init__(self, state_dir: Path):
        self.state_dir = state_dir
        self.environ_before = dict(os.environ)
        self.stack = self._start()

    def _start(self) -> Stack:
        return start_stack(
            state_dir=self.state_dir,
            api_port=0,
            moto_port=0,
            forager_port=0,
            forager_control_port=0,
            schedule_seconds=None,
            persist=True,
        )

    def restart(self) -> Stack:
        self.stack.stop()
        self.stack = self._start()
        return self.stack

    def get(self, path: str, token: str | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.get(self.stack.url + path, headers=headers, timeout=30)

    def post(self, path: str, body: Any, token: str | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.post(self.stack.url + path, json=body, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    shared = Running(tmp_path_factory.mktemp("devstack"))
    yield shared
    shared.stack.stop()


def test_status_answers_usable_for_the_admin_token(running: Running) -> None:
    answer = running.get("/knowledge/status", running.stack.admin_token)
    assert answer.status_code == 200
    body = answer.json()
    assert body["success"] is True
    assert body["data"]["usable"] is True
    assert body["data"]["endpoint"] == running.stack.engine.url
    assert "falcon" in body["data"]["projects"]


def test_no_authorization_header_is_the_gateways_401_byte_for_byte(running: Running) -> None:
    answer = running.get("/knowledge/status")
    assert answer.status_code == 401
    assert answer.content == UNAUTHORIZED
    assert answer.headers["content-type"] == "application/json"


def test_a_bad_token_is_the_same_401_byte_for_byte(running: Running) -> None:
    answer = running.get("/knowledge/status", "ks_" + "A" * 43)
    assert (answer.status_code, answer.content) == (401, UNAUTHORIZED)


def test_an_unknown_route_is_the_templates_404(running: Running) -> None:
    answer = running.get("/knowledge/nothing-here", running.stack.admin_token)
    assert (answer.status_code, answer.content) == (404, MISSING_ROUTE)


def test_a_schedule_runs_now_from_python_and_from_the_local_route(running: Running) -> None:
    report = running.stack.run_schedule("ScheduleFunction")
    assert report["bound_projects"] == ["falcon"]
    answer = httpx.post(f"{running.stack.url}/_local/schedules/ScheduleFunction/run", timeout=30)
    assert answer.status_code == 200
    assert answer.json()["bound_projects"] == ["falcon"]
    with pytest.raises(KeyError):
        running.stack.run_schedule("StatusFunction")


def test_the_state_directory_holds_the_token_the_env_and_the_snapshot(running: Running) -> None:
    stack = running.stack
    token_file = stack.state_dir / "admin.token"
    assert token_file.read_text().strip() == stack.admin_token
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    env = dict(line.split("=", 1) for line in (stack.state_dir / "env").read_text().splitlines())
    assert env["AWS_ENDPOINT_URL"] == stack.moto_url
    assert env["CONFIG_TABLE"] == stack.env["CONFIG_TABLE"] == "knowledge-local-ConfigTable"
    assert os.environ["AWS_ENDPOINT_URL"] == stack.moto_url
    assert stack.snapshot() in (True, False)
    state = json.loads(stack.state_file.read_text())
    assert stat.S_IMODE(stack.state_file.stat().st_mode) == 0o600
    principals = state["dynamodb"][stack.env["PRINCIPALS_TABLE"]]["items"]
    assert [p["name"] for p in principals] == [{"S": "local-admin"}]
    assert {p["Name"] for p in state["ssm"]} == {stack.env["FORAGER_CREDENTIAL_PARAMETER"]}


def test_a_restart_keeps_the_admin_token_and_the_project_map(running: Running) -> None:
    token = running.stack.admin_token
    bound = running.post("/knowledge/project-map", {"project": "colony-docs", "knowledge_base": "harbour"}, token)
    assert bound.status_code == 200, bound.text
    stack = running.restart()
    assert stack.admin_token == token
    assert running.get("/knowledge/status", token).json()["data"]["usable"] is True
    assert stack.run_schedule("ScheduleFunction")["bound_projects"] == ["colony-docs", "falcon"]
    # everything was there already; only the endpoint followed the simulator to its new port
    assert [entry.split(" http")[0] for entry in stack.seeded] == ["settings endpoint"]
    assert stack.engine.url == stack.env["KNOWLEDGE_FORAGER_ENDPOINT"]


def test_a_revoked_admin_gets_a_new_token_on_restart_and_the_old_one_fails(running: Running) -> None:
    from knowledge_service.storage.principals import PrincipalStore

    old = running.stack.admin_token
    PrincipalStore(running.stack.resource("dynamodb"), running.stack.env["PRINCIPALS_TABLE"]).revoke("local-admin")
    assert running.get("/knowledge/status", old).status_code == 401
    stack = running.restart()
    assert stack.admin_token != old
    assert stack.admin_name == "local-admin"
    assert running.get("/knowledge/status", stack.admin_token).status_code == 200
    assert running.get("/knowledge/status", old).status_code == 401


def test_one_stack_per_process(running: Running) -> None:
    with pytest.raises(StackStartError, match="already running"):
        start_stack(state_dir=running.state_dir, api_port=0, moto_port=0, forager_port=0, forager_control_port=0)


def test_stop_puts_the_environment_back(running: Running) -> None:
    changed = set(running.stack.env)
    running.stack.stop()
    assert {k: os.environ.get(k) for k in changed} == {k: running.environ_before.get(k) for k in changed}
    running.stack.stop()  # a second stop does nothing


def test_python_m_devstack_prints_the_token_and_snapshots_on_sigterm(tmp_path: Path) -> None:
    control_port = free_port()
    env = {
        **os.environ,
        "DEVSTACK_STATE_DIR": str(tmp_path),
        "DEVSTACK_PORT": "0",
        "DEVSTACK_MOTO_PORT": "0",
        "DEVSTACK_FORAGER_PORT": "0",
        "DEVSTACK_FORAGER_CONTROL_PORT": str(control_port),
    }
    env.pop("AWS_ENDPOINT_URL", None)
    env.pop("DEVSTACK_ENGINE_CONTROL", None)  # as make run starts it
    process = subprocess.Popen(
        [sys.executable, "-m", "devstack"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("Ctrl-C"):
                break
        output = "".join(lines)
        token = (tmp_path / "admin.token").read_text().strip()
        assert f'curl -H "Authorization: Bearer {token}" http://127.0.0.1:' in output
        url = next(line.split()[1] for line in lines if line.strip().startswith("API"))
        assert (
            httpx.get(f"{url}/knowledge/status", headers={"Authorization": f"Bearer {token}"}, timeout=30).json()[
                "data"
            ]["usable"]
            is True
        )
        # and the engine's control port (the tests' own) does not listen, nor does the banner name one
        assert "control" not in next(line for line in lines if line.strip().startswith("FORAGER"))
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://127.0.0.1:{control_port}/health", timeout=5)
        (tmp_path / "aws-state.json").unlink()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert (tmp_path / "aws-state.json").exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
