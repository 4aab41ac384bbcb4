"""A job can fail; the engine cannot (issue 56). Over loopback against the engine: a full store
fails the job that met it with the engine's sentence, the engine keeps answering and taking other
jobs, and a retry after space returns completes the job exactly."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local_engine.double import Double, start_double
from local_engine.ingestion.jobs import stage_error
from tests import secrets

TOKEN = "engine-failures-token"


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Double]:
    with start_double(token=TOKEN, data_dir=tmp_path / "data") as sim:
        secrets.register(sim.token)
        yield sim


@pytest.fixture
def api(engine: Double) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=engine.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30.0) as client:
        yield client


def _post(api: httpx.Client, path: str, body: dict[str, Any]) -> Any:
    answer = api.post(path, json=body, headers={"Idempotency-Key": os.urandom(8).hex()})
    assert answer.status_code in (200, 201, 202), answer.text
    return answer.json()


def _finished(engine: Double, api: httpx.Client, ref: str, job_id: str) -> dict[str, Any]:
    for _ in range(1500):
        job: dict[str, Any] = api.get(f"/api/projects/{ref}/jobs/{job_id}").json()
        if job["terminal"]:
            return job
        engine.state.stopping.wait(0.02)
    raise AssertionError(f"the job did not finish: {job}")


def _folder(root: Path, name: str, sentences: int) -> Path:
    folder = root / name
    folder.mkdir()
    for number in range(sentences // 20 + 1):
        lines = [f"The harbour crane number {number * 20 + i} lifts containers before dawn." for i in range(20)]
        (folder / f"note{number}.md").write_text("# Cranes\n\n" + "\n\n".join(lines) + "\n")
    return folder


def test_a_full_store_fails_the_job_with_a_sentence_and_a_retry_after_space_returns_completes(
    engine: Double, api: httpx.Client, tmp_path: Path
) -> None:
    # Given an engine whose store may not grow (SQLite's page limit: a full disk, as the store sees one)
    ref = str(_post(api, "/api/projects", {"name": "Cranes"})["project_ref"])
    store = engine.state.store
    with store.lock:
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
        store.db.execute(f"PRAGMA max_page_count = {pages + 2}")
    # When a job needs more room than it has
    job = _post(api, f"/api/projects/{ref}/jobs", {"paths": [str(_folder(tmp_path, "cranes", 400))]})
    failed = _finished(engine, api, ref, job["job_id"])
    # Then the job fails with the engine's sentence naming the disk, and the engine keeps answering
    assert failed["status"] == "failed", failed
    assert failed["error"]["code"] == "storage_full", failed["error"]
    assert "disk is full" in failed["error"]["message"] and "retry" in failed["error"]["message"]
    assert api.get("/api/status").status_code == 200
    other = str(_post(api, "/api/projects", {"name": "Other organization"})["project_ref"])
    assert api.get(f"/api/projects/{other}/search", params={"q": "crane"}).status_code == 200
    # And once space returns, a retry resumes it and it completes with every statement once
    with store.lock:
        store.db.execute("PRAGMA max_page_count = 1073741823")
    retried = api.post(f"/api/projects/{ref}/jobs/{job['job_id']}/retry", headers={"Idempotency-Key": "r1"})
    assert retried.status_code in (200, 202), retried.text
    done = _finished(engine, api, ref, job["job_id"])
    assert done["status"] == "completed", done
    count = store.value("SELECT COUNT(*) FROM statements WHERE ref = ?", ref)
    distinct = store.value("SELECT COUNT(DISTINCT statement) FROM statements WHERE ref = ?", ref)
    assert count == distinct == 420


def test_another_job_completes_after_one_failed_on_an_error_its_stage_did_not_expect(
    engine: Double, api: httpx.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a stage that raises what no rule expects, once
    from local_engine.ingestion import pipeline

    real = pipeline.STAGE_WORK["chunking"]
    calls = {"n": 0}

    def breaks_once(store: Any, work: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("a bug in a library")
        return real(store, work)

    monkeypatch.setitem(pipeline.STAGE_WORK, "chunking", breaks_once)
    first = str(_post(api, "/api/projects", {"name": "First"})["project_ref"])
    second = str(_post(api, "/api/projects", {"name": "Second"})["project_ref"])
    job = _post(api, f"/api/projects/{first}/jobs", {"paths": [str(_folder(tmp_path, "one", 20))]})
    failed = _finished(engine, api, first, job["job_id"])
    # Then that job fails at its stage with the library's words, and the next job completes
    assert (failed["status"], failed["error"]["stage"], failed["error"]["code"]) == (
        "failed",
        "chunking",
        "stage_failed",
    )
    assert "RuntimeError: a bug in a library" in failed["error"]["message"]
    other = _post(api, f"/api/projects/{second}/jobs", {"paths": [str(_folder(tmp_path, "two", 20))]})
    assert _finished(engine, api, second, other["job_id"])["status"] == "completed"


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (sqlite3.OperationalError("database or disk is full"), "storage_full"),
        (OSError(28, "No space left on device"), "storage_full"),
        (sqlite3.OperationalError("database is locked"), "store_busy"),
        (ValueError("x" * 5000), "stage_failed"),
    ],
)
def test_a_stage_error_is_named_for_what_a_person_can_do(error: BaseException, code: str) -> None:
    named, sentence = stage_error("indexing", error)
    assert named == code
    assert sentence.startswith("The indexing stage") and len(sentence) < 420
