"""The engine's change feed lives in its store (issue 56): after a ``kill -9`` of the engine's
process, the head, the numbering, the generation and every envelope not yet read are there."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import secrets
from tests.localstack import free_port

pytestmark = pytest.mark.contract

TOKEN = "engine-feed-token"


@contextmanager
def engine_process(data: Path, roots: Path) -> Iterator[tuple[subprocess.Popen[bytes], httpx.Client]]:
    port = free_port()
    command = [sys.executable, "-m", "local_engine", "--port", str(port), "--data", str(data), "--quiet"]
    process = subprocess.Popen([*command, "--input-root", str(roots)], env={**os.environ, "LOCAL_ENGINE_TOKEN": TOKEN})
    api = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    try:
        for _ in range(600):
            try:
                if api.get("/api/status").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield process, api
    finally:
        api.close()
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


def _post(api: httpx.Client, path: str, body: dict[str, Any]) -> Any:
    answer = api.post(path, json=body, headers={"Idempotency-Key": os.urandom(8).hex()})
    assert answer.status_code in (200, 201, 202), answer.text
    return answer.json()


def _import(api: httpx.Client, ref: str, folder: Path) -> None:
    job = _post(api, f"/api/projects/{ref}/jobs", {"paths": [str(folder)]})
    for _ in range(1500):
        if api.get(f"/api/projects/{ref}/jobs/{job['job_id']}").json()["terminal"]:
            return
        time.sleep(0.02)
    raise AssertionError("the job did not finish")


def test_a_kill_of_the_engine_keeps_its_feed_head_numbering_and_unread_envelopes(tmp_path: Path) -> None:
    secrets.register(TOKEN)
    docs = tmp_path / "docs"
    (docs / "one").mkdir(parents=True)
    (docs / "two").mkdir()
    (docs / "one" / "a.md").write_text("# Ferry\n\nThe ferry leaves pier four at seven every morning.\n")
    (docs / "two" / "b.md").write_text("# Lamp\n\nThe lighthouse lamp is lit thirty minutes before sunset.\n")
    data = tmp_path / "data"
    # Given an engine that published two revisions of a base, neither read by anyone
    with engine_process(data, docs) as (process, api):
        ref = str(_post(api, "/api/projects", {"name": "Harbour"})["project_ref"])
        _import(api, ref, docs / "one")
        _import(api, ref, docs / "two")
        before = api.get(f"/api/projects/{ref}/feed", params={"after": 0}).json()
        head = api.get(f"/api/projects/{ref}/revisions/head").json()
        generation = api.get("/api/capabilities").json()["generation"]
        # When its process is killed outright
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    with engine_process(data, docs) as (_, api):
        # Then the restarted engine serves the same envelopes, the same head and generation
        after = api.get(f"/api/projects/{ref}/feed", params={"after": 0}).json()
        assert [e["event_id"] for e in after["envelopes"]] == [e["event_id"] for e in before["envelopes"]]
        assert after["head_sequence"] == before["head_sequence"] == 2
        assert after["generation"] == generation == api.get("/api/capabilities").json()["generation"]
        assert api.get(f"/api/projects/{ref}/revisions/head").json() == head
        # and its next revision is numbered on from there, in the same generation
        (docs / "two" / "c.md").write_text("# Crane\n\nThe harbour crane lifts forty containers an hour.\n")
        _import(api, ref, docs / "two")
        newest = api.get(f"/api/projects/{ref}/feed", params={"after": 2, "generation": generation}).json()
        assert [e["sequence"] for e in newest["envelopes"]] == [3]
        assert newest["envelopes"][0]["payload"]["publication_sequence"] == 3
