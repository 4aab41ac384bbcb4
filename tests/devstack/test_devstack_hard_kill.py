"""What a ``kill -9`` of ``make run`` keeps: every write the emulator acknowledged (it is
journaled before its answer leaves, devstack/README.md), and the FORAGER simulator's knowledge
bases (written before the request that made one is answered).

A real stack process (``python -m devstack``), killed with SIGKILL at a random moment of a
burst of writes from several threads, and started again on the same state directory, round
after round. The journal is set to snapshot every few dozen writes so snapshots (and the
journal's rotations) happen during the bursts too. ``DEVSTACK_KILL_ROUNDS`` runs more rounds."""

from __future__ import annotations

import json
import os
import random
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import httpx
from botocore.config import Config

from local_engine.double import start_double
from tests.localstack import LocalStack, launch_stack

ROUNDS = int(os.environ.get("DEVSTACK_KILL_ROUNDS", "3"))
"""Over 30 s (45 s at load 4-7), by reason: each round is a real stack started on the killed one's
state after a real SIGKILL, so two of the three kills hit a stack that came back from one.
``make deep`` runs 10."""
WRITERS = 3
COUNTER = {"pk": {"S": "kill9-counter"}, "sk": {"S": "kill9-counter"}}
FAIL_FAST = Config(retries={"max_attempts": 1, "mode": "standard"}, connect_timeout=2, read_timeout=10)


def _simulator(state_dir: Path) -> str:
    return str(json.loads((state_dir / "upstream.json").read_text())["endpoint"])


def _fail_fast(stack: LocalStack, service: str) -> Any:
    """A client on the stack's emulator that does not retry: a write either got its answer or not."""
    return boto3.client(
        service,
        endpoint_url=stack.env["AWS_ENDPOINT_URL"],
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=FAIL_FAST,
    )


@dataclass
class Acknowledged:
    """What the emulator answered 2xx to, over every round."""

    items: set[str] = field(default_factory=set)
    objects: dict[str, bytes] = field(default_factory=dict)
    increments: int = 0  # ADD 1 to the counter, acknowledged
    attempted: int = 0  # ... and sent (the kill may land after moto applied one, before its answer)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _burst(
    stack: LocalStack, table: str, bucket: str, round_no: int, acked: Acknowledged, stop: threading.Event
) -> None:
    dynamodb = [_fail_fast(stack, "dynamodb") for _ in range(WRITERS)]
    s3 = [_fail_fast(stack, "s3") for _ in range(WRITERS)]

    def write(writer: int) -> None:
        n = 0
        while not stop.is_set():
            marker = f"kill9-{round_no}-{writer}-{n:05d}"
            try:
                if n % 5 == 4:
                    with acked.lock:
                        acked.attempted += 1
                    dynamodb[writer].update_item(
                        TableName=table,
                        Key=COUNTER,
                        UpdateExpression="ADD n :one",
                        ExpressionAttributeValues={":one": {"N": "1"}},
                    )
                    with acked.lock:
                        acked.increments += 1
                elif n % 7 == 6:
                    body = marker.encode() * 50
                    s3[writer].put_object(Bucket=bucket, Key=f"kill9/{marker}", Body=body)
                    with acked.lock:
                        acked.objects[f"kill9/{marker}"] = body
                else:
                    dynamodb[writer].put_item(TableName=table, Item={"pk": {"S": marker}, "sk": {"S": marker}})
                    with acked.lock:
                        acked.items.add(marker)
            except Exception:  # the stack is gone: this write was never acknowledged
                return
            n += 1

    written = len(acked.items)
    threads = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while len(acked.items) < written + 30 and time.monotonic() < deadline:  # the burst is under way
        time.sleep(0.01)
    time.sleep(random.uniform(0.0, 1.0))
    stack.process.send_signal(signal.SIGKILL)
    stack.process.wait(timeout=10)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)


def _check(stack: LocalStack, table: str, bucket: str, acked: Acknowledged) -> None:
    dynamodb = stack.aws_client("dynamodb")
    found = set()
    counter = 0
    for page in dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        for item in page["Items"]:
            if item["pk"] == COUNTER["pk"]:
                counter = int(item.get("n", {"N": "0"})["N"])
            elif item["pk"]["S"].startswith("kill9-"):
                found.add(item["pk"]["S"])
    s3 = stack.aws_client("s3")
    assert sorted(acked.items - found) == []
    assert acked.increments <= counter <= acked.attempted  # none lost, none applied twice
    for key, body in acked.objects.items():
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body, key


def test_given_kill_9_at_random_moments_of_write_bursts_then_every_acknowledged_write_survives(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("DEVSTACK_JOURNAL_RECORDS", "40")  # snapshots and rotations during the bursts
    acked = Acknowledged()
    with launch_stack(tmp_path) as stack:
        table, bucket = stack.env["PAGES_TABLE"], stack.env["ARCHIVE_BUCKET"]
        token = (tmp_path / "simulator.token").read_text().strip()
        made = httpx.post(
            f"{_simulator(tmp_path)}/api/projects",
            json={"name": "Made before the kill"},
            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": "kill-9-base"},
            timeout=30.0,
        )
        assert made.status_code == 201, made.text
        base = made.json()["project_ref"]
        _burst(stack, table, bucket, 0, acked, threading.Event())
    for round_no in range(1, ROUNDS):
        with launch_stack(tmp_path) as stack:
            _check(stack, table, bucket, acked)
            _burst(stack, table, bucket, round_no, acked, threading.Event())

    with launch_stack(tmp_path) as again:
        _check(again, table, bucket, acked)
        projects = httpx.get(
            f"{_simulator(tmp_path)}/api/projects", headers={"Authorization": f"Bearer {token}"}, timeout=30.0
        )

    assert len(acked.items) >= 30 * ROUNDS
    assert acked.increments > 10
    assert base in {p["project_ref"] for p in projects.json()["projects"]}


def test_given_a_state_file_then_bases_sources_and_keys_survive_a_simulator_restart(tmp_path: Path) -> None:
    state = tmp_path / "forager-simulator.json"
    with start_double(token="t0ken", state_file=state) as first:
        auth = {"Authorization": "Bearer t0ken", "Idempotency-Key": "key-1"}
        made = httpx.post(f"{first.url}/api/projects", json={"name": "Kept"}, headers=auth, timeout=30.0).json()
        first.put_source(made["project_ref"], "notes.md", "Kept across a restart.")
        instance = first.state.instance_id

    assert state.stat().st_mode & 0o777 == 0o600
    with start_double(token="t0ken", state_file=state) as second:
        listed = httpx.get(f"{second.url}/api/projects", headers={"Authorization": "Bearer t0ken"}, timeout=30.0).json()
        replay = httpx.post(f"{second.url}/api/projects", json={"name": "Kept"}, headers=auth, timeout=30.0)

        assert made["project_ref"] in {p["project_ref"] for p in listed["projects"]}
        assert second.state.instance_id == instance
        assert [
            r["name"] for r in second.state.store.rows("SELECT name FROM sources WHERE ref = ?", made["project_ref"])
        ] == ["notes.md"]
        assert replay.status_code == 200  # the key's first answer, replayed: no second base
        assert replay.json()["project_ref"] == made["project_ref"]


def test_given_no_state_file_then_a_restarted_simulator_is_the_demo_corpus_again() -> None:
    with start_double(token="t0ken") as first:
        made = httpx.post(
            f"{first.url}/api/projects",
            json={"name": "Gone"},
            headers={"Authorization": "Bearer t0ken", "Idempotency-Key": "key-2"},
            timeout=30.0,
        ).json()
    with start_double(token="t0ken") as second:
        listed = httpx.get(f"{second.url}/api/projects", headers={"Authorization": "Bearer t0ken"}, timeout=30.0).json()

    assert made["project_ref"] not in {p["project_ref"] for p in listed["projects"]}
