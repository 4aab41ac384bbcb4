"""Ingestion over HTTP against the local stack, as a user calls it: jobs that move through
FORAGER's real stages, cancel, fail and retry, uploads inline and through an S3 session,
preflight admitted / refused / failed, and a replayed POST answered with the same job."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest

from tests.localstack import LocalStack, bearer

pytestmark = pytest.mark.e2e

STAGES = [
    "source_registration",
    "parsing_extraction",
    "normalization",
    "chunking",
    "semantic_extraction",
    "entity_resolution",
    "dedup_conflict",
    "provenance",
    "validation",
    "indexing",
    "export_availability",
]
JOB_KEYS = {
    "job_id",
    "status",
    "current_stage",
    "progress",
    "terminal",
    "cancel_requested",
    "created_at",
    "error",
    "stages",
    # what the job was given, as the edge queued it (docs/api.md, Ingestion)
    "kind",
    "inputs",
    "input_count",
    "queued_by",
}
STAGE_KEYS = {"name", "status", "processed", "skipped", "failed", "warnings"}


def control(stack: LocalStack, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    answer = httpx.request(method, stack.control_url + path, json=body, timeout=30.0)
    answer.raise_for_status()
    return answer.json()


@pytest.fixture(autouse=True)
def _clock_pace(stack: LocalStack) -> Any:
    control(stack, "PUT", "/jobs/pace", {"mode": "clock", "stage_seconds": 0.15})
    yield
    control(stack, "PUT", "/admission", {"limit_bytes": 524288000, "working_storage_fails": False})
    control(stack, "PUT", "/jobs/pace", {"mode": "clock", "stage_seconds": 0})  # the engine's own pace


def post(http: httpx.Client, stack: LocalStack, path: str, key: str | None = None, **kwargs: Any) -> httpx.Response:
    headers = bearer(stack.admin_token) | ({"Idempotency-Key": key} if key else {})
    return http.post(path, params={"project": "falcon"}, headers=headers, **kwargs)


def job(http: httpx.Client, stack: LocalStack, job_id: str) -> dict[str, Any]:
    answer = http.get(f"/knowledge/jobs/{job_id}", params={"project": "falcon"}, headers=bearer(stack.admin_token))
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()["data"]
    assert set(data) == JOB_KEYS and [s["name"] for s in data["stages"]] == STAGES
    assert all(set(s) == STAGE_KEYS for s in data["stages"])
    return data


def watch(
    http: httpx.Client, stack: LocalStack, job_id: str, until: Any, seconds: float = 15.0
) -> list[dict[str, Any]]:
    seen = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        seen.append(job(http, stack, job_id))
        if until(seen[-1]):
            return seen
        time.sleep(0.05)
    raise AssertionError(f"the job never got there: {seen[-1]}")


def test_a_job_on_a_workspace_folder_moves_through_real_stages_to_completed(
    http: httpx.Client, stack: LocalStack
) -> None:
    control(stack, "PUT", "/jobs/pace", {"mode": "poll"})  # a stage a read: no poll can miss one
    queued = post(http, stack, "/knowledge/jobs", json={"paths": ["docs/procedures"]})
    assert queued.status_code == 200, queued.text
    assert queued.json()["data"]["status"] == "queued"
    seen = watch(http, stack, queued.json()["data"]["job_id"], lambda j: j["terminal"])
    assert seen[-1]["status"] == "completed" and seen[-1]["progress"] == 1.0
    stages = [j["current_stage"] for j in seen if j["current_stage"]]
    assert list(dict.fromkeys(stages)) == STAGES, stages  # seen at every stage on the way, in order
    progress = [j["progress"] for j in seen]
    assert progress == sorted(progress)
    for snapshot in seen:  # progress is FORAGER's, derived from its stage rows
        completed = sum(1 for s in snapshot["stages"] if s["status"] == "completed")
        assert snapshot["progress"] == round(completed / 11, 4)


def test_a_path_outside_the_workspace_is_403_and_foragers_sees_nothing(http: httpx.Client, stack: LocalStack) -> None:
    before = len(control(stack, "GET", "/projects/falcon/jobs")["jobs"])
    refused = post(http, stack, "/knowledge/jobs", json={"paths": ["docs", "docs/%2e%2e/%2e%2e/etc/passwd"]})
    assert refused.status_code == 403, refused.text
    assert refused.json()["code"] == "permission_denied"
    assert len(control(stack, "GET", "/projects/falcon/jobs")["jobs"]) == before


def test_a_job_cancelled_mid_way_stops_at_a_stage_boundary_and_keeps_its_work(
    http: httpx.Client, stack: LocalStack
) -> None:
    # each read moves the job one stage: on a clock a busy machine's poll can miss a whole stage
    control(stack, "PUT", "/jobs/pace", {"mode": "poll"})
    queued = post(http, stack, "/knowledge/jobs", json={"paths": ["handbook"]}).json()["data"]
    watch(http, stack, queued["job_id"], lambda j: j["current_stage"] == "chunking")
    cancel = post(http, stack, f"/knowledge/jobs/{queued['job_id']}/cancel")
    assert cancel.status_code == 200, cancel.text
    assert cancel.json()["data"]["cancel_requested"] is True
    final = watch(http, stack, queued["job_id"], lambda j: j["terminal"])[-1]
    assert final["status"] == "cancelled"
    statuses = [s["status"] for s in final["stages"]]
    # chunking, the stage running when the cancel came, ends; nothing after it starts
    assert statuses == ["completed"] * 4 + ["pending"] * 7, statuses


def test_a_job_failed_at_a_chosen_stage_is_retried_from_that_stage(http: httpx.Client, stack: LocalStack) -> None:
    control(stack, "POST", "/projects/falcon/jobs/faults", {"fail_at": "entity_resolution"})
    queued = post(http, stack, "/knowledge/jobs", json={"paths": ["handbook"]}).json()["data"]
    failed = watch(http, stack, queued["job_id"], lambda j: j["terminal"])[-1]
    assert failed["status"] == "failed" and failed["current_stage"] == "entity_resolution"
    assert failed["error"]["stage"] == "entity_resolution"
    retried = post(http, stack, f"/knowledge/jobs/{queued['job_id']}/retry")
    assert retried.status_code == 200, retried.text
    data = retried.json()["data"]
    assert data["status"] == "running" and data["current_stage"] == "entity_resolution"
    assert [s["status"] for s in data["stages"][:5]] == ["completed"] * 5  # checkpoints, not the start
    final = watch(http, stack, queued["job_id"], lambda j: j["terminal"])[-1]
    assert final["status"] == "completed"


def test_replaying_a_post_with_the_same_key_answers_the_same_job_and_forager_holds_one(
    http: httpx.Client, stack: LocalStack
) -> None:
    key = f"import-{uuid.uuid4().hex}"
    body = {"paths": ["replayed/folder"]}
    first = post(http, stack, "/knowledge/jobs", key, json=body)
    again = post(http, stack, "/knowledge/jobs", key, json=body)
    assert first.status_code == again.status_code == 200, again.text
    assert first.json()["data"]["job_id"] == again.json()["data"]["job_id"]
    held = [
        j for j in control(stack, "GET", "/projects/falcon/jobs")["jobs"] if j["inputs"][-1].endswith("replayed/folder")
    ]
    assert len(held) == 1
    reused = post(http, stack, "/knowledge/jobs", key, json={"paths": ["another/folder"]})
    assert reused.status_code == 422, reused.text
    assert reused.json()["code"] == "idempotency_key_reused"


def test_an_inline_upload_answers_the_job(http: httpx.Client, stack: LocalStack) -> None:
    files = [
        ("files", ("notes/harbour.md", b"# Harbour\nOpens at 07:00.\n")),
        ("files", ("raw.bin", bytes(range(256)))),
    ]
    answer = post(http, stack, "/knowledge/upload", files=files, data={"force": "true"})
    assert answer.status_code == 200, answer.text
    assert set(answer.json()["data"]) == JOB_KEYS
    held = control(stack, "GET", "/projects/falcon/jobs")["jobs"]
    mine = next(j for j in held if j["job_id"] == answer.json()["data"]["job_id"])
    assert mine["kind"] == "upload" and mine["inputs"] == ["notes/harbour.md", "raw.bin"] and mine["force"] is True
    named = answer.json()["data"]  # and the edge names the job by them
    assert (named["kind"], named["inputs"], named["input_count"]) == ("upload", ["notes/harbour.md", "raw.bin"], 2)


def test_uploaded_files_become_knowledge_search_and_sources_answer_from(http: httpx.Client, stack: LocalStack) -> None:
    # Given a person's files, uploaded as a person's browser sends them (one is not readable)
    files = [
        ("files", ("lighthouse/keeper.md", b"# Keeper\n\nThe lighthouse keeper logs every passing tanker by hand.\n")),
        ("files", ("lighthouse/fog.html", b"<h1>Fog</h1><p>The foghorn sounds twice a minute in thick weather.</p>")),
        ("files", ("lighthouse/blob.bin", b"\x00lighthouse" + bytes(range(255, -1, -1)))),
    ]
    answer = post(http, stack, "/knowledge/upload", files=files)
    assert answer.status_code == 200, answer.text
    # When the engine has done its stages
    done = watch(http, stack, answer.json()["data"]["job_id"], lambda j: j["terminal"])[-1]
    assert done["status"] == "completed"
    assert done["stages"][1]["failed"] == 1  # the binary file, a source's failure: the job goes on
    # Then search finds each readable file's words, with evidence that quotes it
    headers = bearer(stack.admin_token)
    for words, sentence in (
        ("tanker keeper", "The lighthouse keeper logs every passing tanker by hand."),
        ("foghorn weather", "The foghorn sounds twice a minute in thick weather."),
    ):
        hits = http.get("/knowledge/search", params={"project": "falcon", "q": words}, headers=headers).json()
        top = hits["data"]["hits"][0]
        assert top["statement"] == sentence
        evidence = http.get(
            f"/knowledge/items/{top['knowledge_id']}/evidence", params={"project": "falcon"}, headers=headers
        )
        assert evidence.json()["data"]["evidence"][0]["excerpt"] == sentence
    # and the sources list them with their state, the failed one with its sentence
    sources = http.get("/knowledge/sources", params={"project": "falcon"}, headers=headers).json()["data"]["sources"]
    states = {s["name"]: s["processing_status"] for s in sources if s["name"].startswith("lighthouse/")}
    assert states == {
        "lighthouse/keeper.md": "completed",
        "lighthouse/fog.html": "completed",
        "lighthouse/blob.bin": "failed",
    }
    failed = next(s for s in sources if s["name"] == "lighthouse/blob.bin")
    page = http.get(f"/knowledge/sources/{failed['source_id']}", params={"project": "falcon"}, headers=headers).json()
    assert (
        page["data"]["error"]["code"] == "unsupported_format" and page["data"]["error"]["stage"] == "parsing_extraction"
    )


def test_an_upload_through_an_s3_session_is_staged_committed_and_cleared(http: httpx.Client, stack: LocalStack) -> None:
    files = {"big/a.bin": b"a" * (3 * 1024 * 1024), "big/b.md": b"# b\n" * 1000}
    opened = post(
        http,
        stack,
        "/knowledge/upload/sessions",
        json={"files": [{"name": n, "size_bytes": len(d)} for n, d in files.items()]},
    )
    assert opened.status_code == 200, opened.text
    session = opened.json()["data"]
    for part in session["parts"]:
        put = httpx.put(part["url"], content=files[part["name"]], headers=part["headers"], timeout=30)
        assert put.status_code == 200, put.text
    committed = post(http, stack, "/knowledge/upload", json={"session_id": session["session_id"]})
    assert committed.status_code == 200, committed.text
    held = control(stack, "GET", "/projects/falcon/jobs")["jobs"]
    mine = next(j for j in held if j["job_id"] == committed.json()["data"]["job_id"])
    assert mine["inputs"] == ["big/a.bin", "big/b.md"]
    staged = stack.aws_client("s3").list_objects_v2(Bucket=stack.env["ARCHIVE_BUCKET"], Prefix="staged/")
    assert staged.get("KeyCount", 0) == 0


def test_preflight_admitted_refused_and_failed_each_in_its_shape(http: httpx.Client, stack: LocalStack) -> None:
    files = [("files", ("a.md", b"x" * 4096)), ("files", ("b.md", b"y" * 1024))]
    admitted = post(http, stack, "/knowledge/preflight", files=files)
    assert admitted.status_code == 200, admitted.text
    data = admitted.json()["data"]
    assert data["admitted"] is True and data["admission_job_id"].startswith("adm_")
    assert (data["measured_bytes"], data["entry_count"], data["admitted_count"]) == (5120, 2, 2)

    control(stack, "PUT", "/admission", {"limit_bytes": 2048})
    refused = post(http, stack, "/knowledge/preflight", files=files)
    assert refused.status_code == 200, refused.text
    data = refused.json()["data"]
    assert data["admitted"] is False and data["code"] == "over_tier_limit" and data["admission_job_id"] is None
    assert (data["measured_bytes"], data["limit_bytes"], data["rejected_count"]) == (5120, 2048, 2)
    assert data["largest"][0] == {"path": "a.md", "bytes": 4096}

    stack.fault("5xx", path_prefix="/api/projects/falcon/preflight")
    failed = post(http, stack, "/knowledge/preflight", files=files)
    assert failed.status_code == 502, failed.text
    assert failed.json()["success"] is False and failed.json()["data"] is None


def _upload(http: httpx.Client, stack: LocalStack, body: bytes) -> httpx.Response:
    headers = bearer(stack.admin_token) | {"Content-Type": "multipart/form-data; boundary=XBOUNDARYX"}
    return http.post("/knowledge/upload", params={"project": "falcon"}, headers=headers, content=body)


def _form(disposition: bytes) -> bytes:
    return (
        b"--XBOUNDARYX\r\nContent-Disposition: " + disposition + b"\r\nContent-Type: text/markdown\r\n\r\n"
        b"# Note\n\nThe lamp is lit at dusk.\n\r\n--XBOUNDARYX--\r\n"
    )


@pytest.mark.parametrize(
    "disposition",
    [
        b'form-data; name="files"; filename="a.md"; filename="b.md"',  # which one? neither
        b'form-data; name="files"; filename="a.md\r\nX-Smuggled: 1.md"',  # a line break inside a quoted name
        b'form-data; name="files"; name="other"; filename="a.md"',
    ],
    ids=["two-filenames", "crlf-in-filename", "two-names"],
)
def test_an_upload_part_that_reads_two_ways_is_400_and_nothing_is_queued(
    http: httpx.Client, stack: LocalStack, disposition: bytes
) -> None:
    before = len(control(stack, "GET", "/projects/falcon/jobs")["jobs"])
    answer = _upload(http, stack, _form(disposition))
    assert answer.status_code == 400, answer.text
    assert answer.json()["code"] == "bad_request"
    assert len(control(stack, "GET", "/projects/falcon/jobs")["jobs"]) == before
    fine = _upload(http, stack, _form(b'form-data; name="files"; filename="lamp.md"'))
    assert fine.status_code == 200, fine.text


def test_two_authorization_headers_are_400_whichever_comes_first(http: httpx.Client, stack: LocalStack) -> None:
    good, bad = f"Bearer {stack.admin_token}", "Bearer not-a-token"
    for pair in ((good, bad), (bad, good)):
        answer = http.get("/knowledge/status", headers=[("Authorization", pair[0]), ("Authorization", pair[1])])
        assert answer.status_code == 400, answer.text
        assert "Authorization" in answer.json()["message"]
    assert http.get("/knowledge/status", headers=bearer(stack.admin_token)).status_code == 200
