"""A job is named by what it was given (issue 41, "names, not ids"): FORAGER's payload holds no
path and no file name, so the edge keeps what it queued (storage/job_inputs.py) and every answer
that relays the job carries its kind, its inputs and who queued it."""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from knowledge_service.runtime import Runtime
from knowledge_service.storage.job_inputs import INPUTS_KEPT, JobInputStore
from local_engine.double import Double
from tests import demo as demo_records
from tests.conftest import Api
from tests.unit.test_ingestion_routes import JSON, MULTIPART, form


def listed(api: Api) -> dict[str, dict[str, Any]]:
    answer = api.call("GET", "/knowledge/jobs", query={"project": "falcon", "limit": "100"})
    assert answer.status == 200, answer.raw
    return {job["job_id"]: job for job in answer.body["data"]["jobs"]}


def read(api: Api, job_id: str) -> dict[str, Any]:
    answer = api.call("GET", f"/knowledge/jobs/{job_id}", query={"project": "falcon"}, resource="/knowledge/jobs/{id}")
    assert answer.status == 200, answer.raw
    job: dict[str, Any] = answer.body["data"]
    return job


def test_an_import_is_named_by_the_workspace_paths_it_named(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call("POST", "/knowledge/jobs", body={"project": "falcon", "paths": ["handbook/", "./docs", "docs"]})
    assert answer.status == 200, answer.raw
    job = answer.body["data"]

    assert (job["kind"], job["inputs"], job["input_count"], job["queued_by"]) == (
        "import",
        ["handbook", "docs"],
        2,
        "ada",
    )
    assert {key: listed(api)[job["job_id"]][key] for key in ("kind", "inputs", "queued_by")} == {
        "kind": "import",
        "inputs": ["handbook", "docs"],
        "queued_by": "ada",
    }
    assert read(api, job["job_id"])["inputs"] == ["handbook", "docs"]


def test_an_inline_upload_is_named_by_its_files(api: Api, knowledge_on: Runtime) -> None:
    body = form([("notes.md", b"# Notes\n"), ("plans/plan.txt", b"the plan")], project="falcon")
    answer = api.call("POST", "/knowledge/upload", body=body, headers=MULTIPART)
    assert answer.status == 200, answer.raw

    job = listed(api)[answer.body["data"]["job_id"]]

    assert (job["kind"], job["inputs"], job["input_count"]) == ("upload", ["notes.md", "plans/plan.txt"], 2)


def test_a_committed_upload_session_is_named_by_its_files(api: Api, knowledge_on: Runtime) -> None:
    files = {"almanac.md": b"a" * 10, "tides.md": b"b" * 5}
    session = api.call(
        "POST",
        "/knowledge/upload/sessions",
        body={"project": "falcon", "files": [{"name": n, "size_bytes": len(d)} for n, d in files.items()]},
    ).body["data"]
    for index, part in enumerate(session["parts"]):
        boto3.client("s3").put_object(
            Bucket=knowledge_on.env.archive_bucket,
            Key=f"staged/{session['session_id']}/{index:04d}",
            Body=files[part["name"]],
        )
    answer = api.call(
        "POST", "/knowledge/upload", body={"project": "falcon", "session_id": session["session_id"]}, headers=JSON
    )
    assert answer.status == 200, answer.raw

    assert answer.body["data"]["inputs"] == ["almanac.md", "tides.md"]
    assert listed(api)[answer.body["data"]["job_id"]]["kind"] == "upload"


def test_a_large_batch_keeps_its_first_names_and_counts_them_all(api: Api, knowledge_on: Runtime) -> None:
    names = [f"page-{n:03d}.md" for n in range(INPUTS_KEPT + 7)]
    body = form([(name, b"x") for name in names], project="falcon")
    job = api.call("POST", "/knowledge/upload", body=body, headers=MULTIPART).body["data"]

    assert job["inputs"] == names[:INPUTS_KEPT]
    assert job["input_count"] == INPUTS_KEPT + 7


def test_a_job_queued_past_the_edge_has_no_name_and_cancel_keeps_one(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    # the demo's job was queued in FORAGER itself: the edge kept nothing of it
    demo = listed(api)[demo_records.job("falcon")]
    assert (demo["kind"], demo["inputs"], demo["input_count"], demo["queued_by"]) == (None, [], 0, None)
    forager.set_job_pace("poll")
    job = api.call("POST", "/knowledge/jobs", body={"project": "falcon", "paths": ["handbook"]}).body["data"]
    cancelled = api.call(
        "POST",
        f"/knowledge/jobs/{job['job_id']}/cancel",
        query={"project": "falcon"},
        resource="/knowledge/jobs/{id}/cancel",
    )
    assert cancelled.status == 200, cancelled.raw
    assert (cancelled.body["data"]["kind"], cancelled.body["data"]["inputs"]) == ("import", ["handbook"])


def test_a_name_that_cannot_be_kept_leaves_the_job_answered_by_its_id(
    api: Api, knowledge_on: Runtime, forager: Double, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: JobInputStore, *args: object) -> None:
        raise RuntimeError("DynamoDB is away")

    monkeypatch.setattr(JobInputStore, "remember", broken)
    answer = api.call("POST", "/knowledge/jobs", body={"project": "falcon", "paths": ["handbook"]})

    assert answer.status == 200, answer.raw
    assert answer.body["data"]["job_id"] in {job["job_id"] for job in forager.jobs("falcon")}
    assert answer.body["data"]["kind"] is None


def test_names_are_kept_per_knowledge_base_and_expire(knowledge_on: Runtime) -> None:
    store = knowledge_on.job_inputs
    from datetime import UTC, datetime

    at = datetime(2026, 12, 5, tzinfo=UTC)
    store.remember("falcon", "job_00000000000000aa", "import", ["docs"], "ada", at)

    assert store.recall("harbour", ["job_00000000000000aa"]) == {}
    kept = store.recall("falcon", ["job_00000000000000aa", "job_00000000000000bb"])
    assert list(kept) == ["job_00000000000000aa"] and kept["job_00000000000000aa"].inputs == ("docs",)
    item = (
        boto3.resource("dynamodb")
        .Table(knowledge_on.env.config_table)
        .get_item(Key={"pk": "job#falcon", "sk": "job_00000000000000aa"})["Item"]
    )
    assert int(item["expire_at_epoch"]) == int(datetime(2027, 12, 5, tzinfo=UTC).timestamp())
