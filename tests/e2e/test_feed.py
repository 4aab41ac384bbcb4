"""The change feed over HTTP against the local stack: a source added through the simulator's
control port publishes a revision; sync (or the six-hourly schedule) consumes it; the finding
and the queued mission are seen through the routes; the lane sentences; each recovery fault."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.localstack import LocalStack, bearer

pytestmark = pytest.mark.e2e

REF = "falcon"
POLL_OFF = "The six-hourly poll studied nothing: knowledge_auto_study is 'off'."
REVISIONS_OFF = "Revisions were recorded and acknowledged and not studied: knowledge_revision_study resolves to 'off'."


@pytest.fixture
def admin(http: httpx.Client, stack: LocalStack) -> Iterator[dict[str, str]]:
    """The admin's headers; the study settings this test changes are put back after it."""
    headers = bearer(stack.admin_token)
    status = http.get("/knowledge/status", headers=headers).json()["data"]
    yield headers
    restored = http.post(
        "/settings",
        headers=headers,
        json={"knowledge_auto_study": status["auto_study"], "knowledge_revision_study": status["revision_study"]},
    )
    assert restored.status_code == 200, restored.text


def settle(http: httpx.Client, headers: dict[str, str], auto: str, revision: str) -> None:
    answer = http.post(
        "/settings", headers=headers, json={"knowledge_auto_study": auto, "knowledge_revision_study": revision}
    )
    assert answer.status_code == 200, answer.text


def put_source(stack: LocalStack, text: str | None = None) -> dict[str, Any]:
    name = f"e2e-{uuid.uuid4().hex[:8]}.md"
    answer = httpx.post(
        f"{stack.control_url}/projects/{REF}/sources",
        json={"name": name, "text": text or f"# {name}\nbody"},
        timeout=30.0,
    )
    answer.raise_for_status()
    return {"name": name, **answer.json()}


def feed_fault(stack: LocalStack, kind: str, count: int = 1) -> None:
    answer = httpx.post(
        f"{stack.control_url}/projects/{REF}/feed/faults", json={"kind": kind, "count": count}, timeout=30.0
    )
    answer.raise_for_status()


def sync(http: httpx.Client, headers: dict[str, str]) -> httpx.Response:
    return http.post("/knowledge/feed/sync", headers=headers, params={"project": REF})


def feed(http: httpx.Client, headers: dict[str, str]) -> dict[str, Any]:
    answer = http.get("/knowledge/feed", headers=headers, params={"project": REF})
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]  # type: ignore[no-any-return]


def findings_for(http: httpx.Client, headers: dict[str, str], name: str) -> list[dict[str, Any]]:
    answer = http.get("/knowledge/changes", headers=headers, params={"project": REF, "status": "all"})
    assert answer.status_code == 200, answer.text
    return [f for f in answer.json()["data"]["findings"] if f["source_name"] == name]


def test_sync_consumes_the_revision_and_the_finding_is_listed(
    http: httpx.Client, stack: LocalStack, admin: dict[str, str]
) -> None:
    settle(http, admin, "suggest", "inherit")
    source = put_source(stack)

    answer = sync(http, admin)

    assert answer.status_code == 200, answer.text
    data = answer.json()["data"]
    assert data["revision_study_resolved"] == "suggest"
    assert data["recorded"] >= 1 and data["acted"] >= 1 and data["mission_ids"] == []
    (finding,) = findings_for(http, admin, source["name"])
    assert (finding["kind"], finding["status"], finding["project_ref"]) == ("new", "open", REF)
    view = feed(http, admin)
    assert view["watermark"]["sequence"] == source["sequence"]
    assert view["head"]["revision_id"] == source["payload"]["revision_id"]
    assert view["retention"]["inbox_days"] == 180


def test_the_six_hourly_schedule_consumes_the_revision(
    http: httpx.Client, stack: LocalStack, admin: dict[str, str]
) -> None:
    settle(http, admin, "suggest", "inherit")
    source = put_source(stack)

    ran = http.post("/_local/schedules/ScheduleFunction/run")

    assert ran.status_code == 200, ran.text
    assert findings_for(http, admin, source["name"])
    assert feed(http, admin)["watermark"]["sequence"] == source["sequence"]


def test_an_ingestion_of_real_files_publishes_the_revision_the_sync_consumes(
    http: httpx.Client, stack: LocalStack, admin: dict[str, str]
) -> None:
    settle(http, admin, "suggest", "inherit")
    queued = http.post("/knowledge/jobs", params={"project": REF}, headers=admin, json={"paths": ["handbook"]})
    assert queued.status_code == 200, queued.text
    job_id = queued.json()["data"]["job_id"]
    deadline = time.monotonic() + 30
    while http.get(f"/knowledge/jobs/{job_id}", params={"project": REF}, headers=admin).json()["data"]["status"] != (
        "completed"
    ):
        assert time.monotonic() < deadline, "the job did not complete"
        time.sleep(0.05)

    data = sync(http, admin).json()["data"]

    assert data["recorded"] >= 1 and data["acted"] >= 1
    view = feed(http, admin)
    head = view["head"]  # the job's revision: the base as its files left it
    assert head["record_count"] > 0 and head["publication_status"] == "complete"
    assert head["revision_id"] in {a["revision_id"] for a in view["actions"]}
    handbook = {f["source_name"] for f in findings_for_all(http, admin) if f["source_name"].startswith("handbook/")}
    assert handbook, "the files the job read are findings of the revision"


def findings_for_all(http: httpx.Client, headers: dict[str, str]) -> list[dict[str, Any]]:
    answer = http.get("/knowledge/changes", headers=headers, params={"project": REF, "status": "all"})
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]["findings"]  # type: ignore[no-any-return]


def test_under_on_the_sync_answers_mission_ids_and_the_finding_is_queued(
    http: httpx.Client, stack: LocalStack, admin: dict[str, str]
) -> None:
    settle(http, admin, "suggest", "on")
    source = put_source(stack)

    data = sync(http, admin).json()["data"]

    assert data["revision_study_resolved"] == "on" and data["mission_ids"]
    (finding,) = findings_for(http, admin, source["name"])
    assert finding["status"] == "queued" and finding["mission_id"] in data["mission_ids"]
    actions = {a["revision_id"]: a["outcome"] for a in feed(http, admin)["actions"]}
    assert actions[source["payload"]["revision_id"]] == "queued"


def test_the_lane_sentences_and_the_refusal(http: httpx.Client, stack: LocalStack, admin: dict[str, str]) -> None:
    settle(http, admin, "off", "suggest")
    assert sync(http, admin).json()["message"].endswith(POLL_OFF)

    settle(http, admin, "suggest", "off")
    put_source(stack)
    off = sync(http, admin).json()
    assert off["message"].endswith(REVISIONS_OFF)
    assert (off["data"]["acted"], off["data"]["recorded"]) == (0, 1)

    settle(http, admin, "off", "inherit")
    refused = sync(http, admin)
    assert refused.status_code == 409
    assert "knowledge_auto_study" in refused.json()["message"]
    assert "knowledge_revision_study" in refused.json()["message"]


@pytest.mark.parametrize(
    ("kind", "degraded"),
    [
        ("skip", "gap"),
        ("expire", "cursor_expired"),
        ("ahead", "cursor_ahead"),
        ("generation", "generation_changed"),
    ],
)
def test_each_recovery_fault_is_degraded_then_reconciled_then_ok(
    http: httpx.Client, stack: LocalStack, admin: dict[str, str], kind: str, degraded: str
) -> None:
    settle(http, admin, "suggest", "suggest")
    put_source(stack)
    assert sync(http, admin).status_code == 200  # caught up: the watermark is at the head
    if kind == "skip":
        put_source(stack)
        feed_fault(stack, "skip")
        put_source(stack)
    elif kind == "expire":
        put_source(stack)
        put_source(stack)
        feed_fault(stack, "expire")
    else:
        feed_fault(stack, kind)

    answer = sync(http, admin)

    assert answer.status_code == 200, answer.text
    data = answer.json()["data"]
    assert degraded in data["degraded"] and data["reconciled"] >= 1
    assert "degraded" in answer.json()["message"] and "reconciled" in answer.json()["message"]
    view = feed(http, admin)
    assert view["watermark"]["status"] == "ok"
    notes = [m["note"] or "" for m in view["watermarks"] if m["status"] == "ok"]
    assert any("reconciled" in n for n in notes)  # for a new generation, on the old row

    # The stream reads on from where it was reconciled: the next publication arrives, even after
    # cursor_ahead, where the restored producer numbers it with a sequence the colony read before.
    source = put_source(stack)
    assert sync(http, admin).json()["data"]["degraded"] == []
    view = feed(http, admin)
    assert view["watermark"]["sequence"] == source["sequence"]
    assert view["watermark"]["status"] == "ok"
    assert findings_for(http, admin, source["name"])
    if kind == "generation":  # the old generation's row stays where the console can see it
        assert len({m["generation"] for m in view["watermarks"]}) >= 2


def test_redelivery_records_nothing_twice_and_claims_nothing_twice(
    http: httpx.Client, stack: LocalStack, admin: dict[str, str]
) -> None:
    settle(http, admin, "suggest", "suggest")
    put_source(stack)
    put_source(stack)  # so the redelivery answers something below the envelope the read re-checks
    sync(http, admin)
    before = feed(http, admin)["actions"]
    feed_fault(stack, "redeliver")

    data = sync(http, admin).json()["data"]

    assert data["received"] >= 1 and (data["recorded"], data["acted"]) == (0, 0)
    assert feed(http, admin)["actions"] == before


def test_a_producer_restored_and_republishing_before_the_next_pass_loses_nothing(
    http: httpx.Client, stack: LocalStack, admin: dict[str, str]
) -> None:
    settle(http, admin, "suggest", "suggest")
    put_source(stack)
    put_source(stack)
    assert sync(http, admin).status_code == 200
    read_before = feed(http, admin)["watermark"]["sequence"]
    feed_fault(stack, "ahead", 2)  # restored from a backup two envelopes older, same generation
    republished = [put_source(stack) for _ in range(3)]  # two reuse sequences the colony already read

    answer = sync(http, admin)

    assert answer.status_code == 200, answer.text
    data = answer.json()["data"]
    assert data["degraded"] == ["history_diverged"] and data["reconciled"] >= 1
    assert data["recorded"] == 3
    assert "degraded (history_diverged)" in answer.json()["message"]
    view = feed(http, admin)
    assert (view["watermark"]["sequence"], view["watermark"]["status"]) == (republished[-1]["sequence"], "ok")
    assert republished[-1]["sequence"] == read_before + 1
    live = max(view["watermarks"], key=lambda m: (m["generation"] == view["generation"], m["epoch"]))
    assert live["superseded_by"] is None and live["base"] == read_before - 2
    revisions = {a["revision_id"] for a in view["actions"]}
    assert {r["payload"]["revision_id"] for r in republished} <= revisions
    for source in republished:
        assert findings_for(http, admin, source["name"])
