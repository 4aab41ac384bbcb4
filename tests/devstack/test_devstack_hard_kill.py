"""What a ``kill -9`` of ``make run`` keeps: every write acknowledged more than
``ACKED_BOUND_SECONDS`` before the kill (devstack/README.md states the bound), and the
FORAGER simulator's knowledge bases (written before the request that made one is answered).

A real stack process (``python -m devstack``), killed with SIGKILL and started again on the
same state directory."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import httpx

from forager_simulator import start_simulator
from tests.e2e.conftest import launch_stack

ACKED_BOUND_SECONDS = 1.0
WRITING_SECONDS = 3.0


def _simulator(state_dir: Path) -> str:
    return str(json.loads((state_dir / "upstream.json").read_text())["endpoint"])


def test_given_writes_up_to_a_kill_9_then_a_restart_keeps_every_one_acknowledged_a_second_before(
    tmp_path: Path,
) -> None:
    acked: list[tuple[str, float]] = []
    with launch_stack(tmp_path) as stack:
        dynamodb = stack.aws_client("dynamodb")
        table = sorted(dynamodb.list_tables()["TableNames"])[0]
        keys = dynamodb.describe_table(TableName=table)["Table"]["KeySchema"]
        simulator = _simulator(tmp_path)
        token = (tmp_path / "simulator.token").read_text().strip()
        made = httpx.post(
            f"{simulator}/api/projects",
            json={"name": "Made before the kill"},
            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": "kill-9-base"},
        )
        assert made.status_code == 201, made.text
        base = made.json()["project_ref"]

        started = time.monotonic()
        n = 0
        while time.monotonic() - started < WRITING_SECONDS:
            marker = f"kill9-{n:05d}"
            dynamodb.put_item(TableName=table, Item={k["AttributeName"]: {"S": marker} for k in keys})
            acked.append((marker, time.monotonic()))
            n += 1
        stack.process.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        stack.process.wait(timeout=10)

    with launch_stack(tmp_path) as again:
        dynamodb = again.aws_client("dynamodb")
        found = set()
        for page in dynamodb.get_paginator("scan").paginate(TableName=table):
            for item in page["Items"]:
                value = next(iter(item.values())).get("S", "")
                if value.startswith("kill9-"):
                    found.add(value)
        simulator = _simulator(tmp_path)
        projects = httpx.get(f"{simulator}/api/projects", headers={"Authorization": f"Bearer {token}"}).json()

    must_survive = [marker for marker, at in acked if killed_at - at >= ACKED_BOUND_SECONDS]
    assert len(must_survive) > 10
    assert [m for m in must_survive if m not in found] == []
    assert base in {p["project_ref"] for p in projects["projects"]}


def test_given_a_state_file_then_bases_sources_and_keys_survive_a_simulator_restart(tmp_path: Path) -> None:
    state = tmp_path / "forager-simulator.json"
    with start_simulator(token="t0ken", state_file=state) as first:
        auth = {"Authorization": "Bearer t0ken", "Idempotency-Key": "key-1"}
        made = httpx.post(f"{first.url}/api/projects", json={"name": "Kept"}, headers=auth).json()
        first.put_source(made["project_ref"], "notes.md", "Kept across a restart.")
        instance = first.state.instance_id

    assert state.stat().st_mode & 0o777 == 0o600
    with start_simulator(token="t0ken", state_file=state) as second:
        listed = httpx.get(f"{second.url}/api/projects", headers={"Authorization": "Bearer t0ken"}).json()
        replay = httpx.post(f"{second.url}/api/projects", json={"name": "Kept"}, headers=auth)

        assert made["project_ref"] in {p["project_ref"] for p in listed["projects"]}
        assert second.state.instance_id == instance
        assert [s.name for s in second.state.sources[made["project_ref"]].values()] == ["notes.md"]
        assert replay.status_code == 200  # the key's first answer, replayed: no second base
        assert replay.json()["project_ref"] == made["project_ref"]


def test_given_no_state_file_then_a_restarted_simulator_is_the_demo_corpus_again() -> None:
    with start_simulator(token="t0ken") as first:
        made = httpx.post(
            f"{first.url}/api/projects",
            json={"name": "Gone"},
            headers={"Authorization": "Bearer t0ken", "Idempotency-Key": "key-2"},
        ).json()
    with start_simulator(token="t0ken") as second:
        listed = httpx.get(f"{second.url}/api/projects", headers={"Authorization": "Bearer t0ken"}).json()

    assert made["project_ref"] not in {p["project_ref"] for p in listed["projects"]}
