"""The local engine is a process the stack supervises (issue 56), seen over HTTP as a person sees
it: a ``kill -9`` of the engine alone during a job makes ``GET /knowledge/engine`` say
``backoff`` and then ``running`` again, and the job resumes at its stage and completes exactly;
the stack's own API answers throughout."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from devstack.stack import Stack, start_stack

pytestmark = pytest.mark.e2e

FILES, SENTENCES = 12, 15


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    root = tmp_path_factory.mktemp("engine-process")
    workspace = root / "workspace"
    folder = workspace / "cranes"
    folder.mkdir(parents=True)
    for number in range(FILES):
        lines = [f"Crane {number}-{i} lifts the blue containers before the tide turns." for i in range(SENTENCES)]
        (folder / f"crane{number}.md").write_text(f"# Crane {number}\n\n" + "\n\n".join(lines) + "\n")
    running = start_stack(
        state_dir=root / "state", api_port=0, moto_port=0, forager_port=0, forager_control_port=0, workspace=workspace
    )
    try:
        yield running
    finally:
        running.stop()


def _until(what: Callable[[], Any], seconds: float = 60.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        seen = what()
        if seen:
            return seen
        time.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


def test_a_kill_of_the_engine_alone_is_backoff_then_running_and_its_job_completes_exactly(stack: Stack) -> None:
    assert stack.engine is not None and stack.engine.control_url is not None
    api = httpx.Client(base_url=stack.url, headers={"Authorization": f"Bearer {stack.admin_token}"}, timeout=30.0)
    control = httpx.Client(base_url=stack.engine.control_url, timeout=30.0)
    # Given a job on a slow clock (a second a stage), well under way
    control.put("/jobs/pace", json={"mode": "clock", "stage_seconds": 1.0}).raise_for_status()
    queued = api.post("/knowledge/jobs", params={"project": "falcon"}, json={"paths": ["cranes"]})
    assert queued.status_code == 200, queued.text
    job_id = queued.json()["data"]["job_id"]

    def job() -> dict[str, Any]:
        answer = api.get(f"/knowledge/jobs/{job_id}", params={"project": "falcon"})
        return answer.json()["data"] if answer.status_code == 200 else {}

    _until(lambda: job().get("current_stage") == "chunking")
    assert api.get("/knowledge/engine").json()["data"]["state"] == "running"  # its function warm: answers at once
    stack.engine.next_backoff = 3.0  # a backoff a busy machine's poll cannot miss
    first = stack.engine.pid
    assert first is not None
    # When the engine's process alone is killed
    os.kill(first, signal.SIGKILL)
    # Then the supervisor says backoff with why, the stack's API still answers, then running again
    said = _until(lambda: (e := api.get("/knowledge/engine").json()["data"])["state"] == "backoff" and e)
    assert "signal 9" in said["reason"] and said["restarts_in_window"] >= 1
    assert api.get("/knowledge/status").status_code == 200
    back = _until(lambda: (e := api.get("/knowledge/engine").json()["data"])["state"] == "running" and e)
    assert back["reason"] is None and stack.engine.pid not in (None, first)
    # And the job resumes where its checkpoint left it and completes, every statement once
    done = _until(lambda: (j := job()).get("terminal") and j)
    assert done["status"] == "completed", done
    database = stack.state_dir / "engine" / "engine.sqlite3"
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        count, distinct = db.execute(
            "SELECT COUNT(*), COUNT(DISTINCT statement) FROM statements WHERE source_id IN"
            " (SELECT source_id FROM sources WHERE name LIKE 'cranes/%')"
        ).fetchone()
    assert count == distinct == FILES * SENTENCES


def test_a_revision_published_before_a_kill_and_not_yet_synced_is_delivered_once_after(stack: Stack) -> None:
    assert stack.engine is not None
    api = httpx.Client(base_url=stack.url, headers={"Authorization": f"Bearer {stack.admin_token}"}, timeout=30.0)
    settings = {"knowledge_auto_study": "suggest", "knowledge_revision_study": "inherit"}
    assert api.post("/settings", json=settings).status_code == 200
    assert api.post("/knowledge/feed/sync", params={"project": "falcon"}).status_code == 200  # caught up first
    # Given a job that completes, its revision published by the engine and read by no one yet
    folder = stack.workspace / "tugs"
    folder.mkdir()
    (folder / "tug.md").write_text("# Tugs\n\nThe harbour tug pulls the barge out at dawn on Mondays.\n")
    queued = api.post("/knowledge/jobs", params={"project": "falcon"}, json={"paths": ["tugs"]})
    assert queued.status_code == 200, queued.text
    job_id = queued.json()["data"]["job_id"]
    _until(lambda: api.get(f"/knowledge/jobs/{job_id}", params={"project": "falcon"}).json()["data"]["terminal"])
    # When the engine is killed before the colony syncs, and comes back
    first = stack.engine.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    _until(
        lambda: (
            stack.engine.pid not in (None, first) and api.get("/knowledge/engine").json()["data"]["state"] == "running"
        )
    )
    # Then the next sync delivers that revision, and the one after delivers nothing twice
    delivered = api.post("/knowledge/feed/sync", params={"project": "falcon"})
    assert delivered.status_code == 200, delivered.text
    assert delivered.json()["data"]["recorded"] == 1, delivered.json()["data"]
    again = api.post("/knowledge/feed/sync", params={"project": "falcon"}).json()["data"]
    assert again["recorded"] == 0 and again["acted"] == 0, again
    findings = api.get("/knowledge/changes", params={"project": "falcon", "status": "all"}).json()["data"]["findings"]
    assert [f["kind"] for f in findings if f["source_name"] == "tugs/tug.md"] == ["new"]


def test_the_engine_leaves_with_the_stack(stack: Stack, tmp_path: Path) -> None:
    assert stack.engine is not None
    pid = stack.engine.pid
    assert pid is not None and Path(f"/proc/{pid}").exists()
    stack.stop()
    _until(lambda: not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2])
