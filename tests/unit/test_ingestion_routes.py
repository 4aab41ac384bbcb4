"""Ingestion through the function's handler: jobs, uploads (inline and by session),
preflight, the path fence, the transport caps and Idempotency-Key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from knowledge_service.runtime import Runtime, reset_runtime
from local_engine.double import Double
from tests import demo
from tests.conftest import Api, principal

BOUNDARY = "test-boundary-1"


def form(files: list[tuple[str, bytes]], **fields: str) -> bytes:
    chunks: list[bytes] = []
    for name, value in fields.items():
        chunks.append(f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    for filename, data in files:
        head = f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="{filename}"\r\n\r\n'
        chunks.append(head.encode() + data + b"\r\n")
    chunks.append(f"--{BOUNDARY}--\r\n".encode())
    return b"".join(chunks)


MULTIPART = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
JSON = {"Content-Type": "application/json"}


def upstream_posts(forager: Double, suffix: str) -> list[dict[str, Any]]:
    return [r for r in forager.requests if r["method"] == "POST" and r["path"].endswith(suffix)]


def test_a_job_on_a_workspace_folder_is_queued_and_answered_at_once(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    answer = api.call("POST", "/knowledge/jobs", body={"project": "falcon", "paths": ["handbook/", "./docs"]})
    assert answer.status == 200, answer.raw
    job = answer.body["data"]
    assert job["status"] == "queued" and job["terminal"] is False
    assert [s["name"] for s in job["stages"]][:2] == ["source_registration", "parsing_extraction"]
    assert len(job["stages"]) == 11
    held = forager.jobs("falcon")[-1]
    assert held["inputs"] == ["/srv/colony/workspace/handbook", "/srv/colony/workspace/docs"]
    assert upstream_posts(forager, "/jobs")[-1]["idempotency_key"]


@pytest.mark.parametrize("path", ["../etc", "/etc/passwd", "docs/%2e%2e/%2e%2e/etc", "docs/.git", "data/x", "a\u0000b"])
def test_a_path_outside_the_workspace_is_403_and_no_request_leaves(
    api: Api, knowledge_on: Runtime, forager: Double, path: str
) -> None:
    answer = api.call("POST", "/knowledge/jobs", body={"project": "falcon", "paths": ["handbook", path]})
    assert answer.status == 403, answer.raw
    assert answer.body["code"] == "permission_denied"
    assert upstream_posts(forager, "/jobs") == []


def test_a_replayed_post_answers_the_same_job_and_foragers_holds_one(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    body = {"project": "falcon", "paths": ["handbook"]}
    first = api.call("POST", "/knowledge/jobs", body=body, headers={**JSON, "Idempotency-Key": "import-1"})
    again = api.call("POST", "/knowledge/jobs", body=body, headers={**JSON, "Idempotency-Key": "import-1"})
    assert first.status == again.status == 200, again.raw
    assert first.body["data"]["job_id"] == again.body["data"]["job_id"]
    assert (
        len([j for j in forager.jobs("falcon") if j["kind"] == "paths" and j["inputs"][0].endswith("handbook")]) == 1
    )  # the one it made (the demo's job read files)
    # the demo's completed job, and the one this key made
    assert len(upstream_posts(forager, "/jobs")) == 1


def test_the_same_key_with_a_different_body_is_422(api: Api, knowledge_on: Runtime) -> None:
    headers = {**JSON, "Idempotency-Key": "import-2"}
    api.call("POST", "/knowledge/jobs", body={"project": "falcon", "paths": ["handbook"]}, headers=headers)
    other = api.call("POST", "/knowledge/jobs", body={"project": "falcon", "paths": ["docs"]}, headers=headers)
    assert other.status == 422, other.raw
    assert other.body["code"] == "idempotency_key_reused"


def test_two_callers_keys_never_collide_upstream(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    from knowledge_service.identity.principal import Permission, ProjectRole

    other = principal("bo", *Permission, roles={"falcon": ProjectRole.OPERATOR})
    headers = {**JSON, "Idempotency-Key": "same-words"}
    mine = api.call("POST", "/knowledge/jobs", body={"project": "falcon", "paths": ["handbook"]}, headers=headers)
    theirs = api.call("POST", "/knowledge/jobs", other, body={"project": "falcon", "paths": ["docs"]}, headers=headers)
    assert mine.status == theirs.status == 200, theirs.raw
    assert mine.body["data"]["job_id"] != theirs.body["data"]["job_id"]
    keys = [r["idempotency_key"] for r in upstream_posts(forager, "/jobs")]
    assert len(set(keys)) == 2 and "same-words" not in keys


def test_cancel_and_retry_relay_foragers_state(
    api: Api, knowledge_on: Runtime, forager: Double, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "handbook").mkdir()
    (tmp_path / "handbook" / "a.md").write_text("# A\n\nThe engine reads this file stage by stage.\n")
    monkeypatch.setenv("KNOWLEDGE_WORKSPACE_ROOT", str(tmp_path))  # a workspace the engine can read
    reset_runtime()
    forager.set_job_pace("poll")
    forager.fail_job_at("falcon", "chunking")
    job = api.call("POST", "/knowledge/jobs", body={"project": "falcon", "paths": ["handbook"]}).body["data"]
    path = f"/knowledge/jobs/{job['job_id']}"
    read = None
    for _ in range(8):
        read = api.call("GET", path, query={"project": "falcon"}, resource="/knowledge/jobs/{id}").body["data"]
    assert read is not None and read["status"] == "failed" and read["current_stage"] == "chunking"
    assert read["error"]["stage"] == "chunking"
    retried = api.call("POST", f"{path}/retry", query={"project": "falcon"}, resource="/knowledge/jobs/{id}/retry")
    assert retried.status == 200, retried.raw
    data = retried.body["data"]
    assert data["status"] == "running" and data["current_stage"] == "chunking"
    assert [s["status"] for s in data["stages"][:3]] == ["completed"] * 3
    cancelled = api.call("POST", f"{path}/cancel", query={"project": "falcon"}, resource="/knowledge/jobs/{id}/cancel")
    assert cancelled.body["data"]["cancel_requested"] is True
    again = api.call("POST", f"{path}/cancel", query={"project": "falcon"}, resource="/knowledge/jobs/{id}/cancel")
    assert again.status == 200  # still running until the boundary
    final = api.call("GET", path, query={"project": "falcon"}, resource="/knowledge/jobs/{id}").body["data"]
    assert final["status"] == "cancelled" and final["stages"][3]["status"] == "completed"
    refused = api.call("POST", f"{path}/cancel", query={"project": "falcon"}, resource="/knowledge/jobs/{id}/cancel")
    assert refused.status == 409, refused.raw


def test_an_inline_upload_is_sent_as_one_multipart_batch(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    body = form([("a.md", b"# A\n"), ("notes/b.txt", b"\x00\xffbinary")], project="falcon", force="true")
    answer = api.call("POST", "/knowledge/upload", body=body, headers=MULTIPART)
    assert answer.status == 200, answer.raw
    held = forager.jobs("falcon")[-1]
    assert held["kind"] == "upload" and held["inputs"] == ["a.md", "notes/b.txt"] and held["force"] is True


def test_over_400_files_is_413_with_the_numbers_and_nothing_is_sent(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    body = form([(f"f{i}.txt", b"x") for i in range(401)], project="falcon")
    answer = api.call("POST", "/knowledge/upload", body=body, headers=MULTIPART)
    assert answer.status == 413, answer.raw
    assert "100 MB" in answer.body["message"] and "400 files" in answer.body["message"]
    assert upstream_posts(forager, "/uploads") == []


def test_a_session_over_100_mb_is_refused_before_anything_is_staged(api: Api, knowledge_on: Runtime) -> None:
    files = [{"name": f"part{i}.bin", "size_bytes": 30 * 1024 * 1024} for i in range(4)]
    answer = api.call("POST", "/knowledge/upload/sessions", body={"project": "falcon", "files": files})
    assert answer.status == 413, answer.raw
    assert "100 MB" in answer.body["message"] and "125829120 bytes" in answer.body["message"]
    staged = boto3.client("s3").list_objects_v2(Bucket=knowledge_on.env.archive_bucket, Prefix="staged/")
    assert staged.get("KeyCount", 0) == 0


def test_an_upload_session_is_staged_committed_and_cleared(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    files = {"big/one.md": b"a" * 70_000, "two.txt": b"b" * 10}
    opened = api.call(
        "POST",
        "/knowledge/upload/sessions",
        body={"project": "falcon", "files": [{"name": n, "size_bytes": len(d)} for n, d in files.items()]},
    )
    assert opened.status == 200, opened.raw
    session = opened.body["data"]
    s3 = boto3.client("s3")
    bucket = knowledge_on.env.archive_bucket
    for index, part in enumerate(session["parts"]):  # moto has no HTTP here: PUT what the URL names
        s3.put_object(Bucket=bucket, Key=f"staged/{session['session_id']}/{index:04d}", Body=files[part["name"]])
    assert all(p["url"].startswith("https://") and "Signature" in p["url"] for p in session["parts"])
    commit = {"project": "falcon", "session_id": session["session_id"]}
    answer = api.call("POST", "/knowledge/upload", body=commit, headers=JSON)
    assert answer.status == 200, answer.raw
    assert forager.jobs("falcon")[-1]["inputs"] == ["big/one.md", "two.txt"]
    assert s3.list_objects_v2(Bucket=bucket, Prefix="staged/").get("KeyCount", 0) == 0
    gone = api.call("POST", "/knowledge/upload", body=commit, headers=JSON)
    assert gone.status == 404, gone.raw


def test_a_commit_before_every_part_is_staged_is_409(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    opened = api.call(
        "POST", "/knowledge/upload/sessions", body={"project": "falcon", "files": [{"name": "a", "size_bytes": 3}]}
    ).body["data"]
    answer = api.call(
        "POST", "/knowledge/upload", body={"project": "falcon", "session_id": opened["session_id"]}, headers=JSON
    )
    assert answer.status == 409, answer.raw
    assert upstream_posts(forager, "/uploads") == []


def test_preflight_relays_admitted_and_refused_intact_and_a_failure_as_a_failure(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    body = form([("a.md", b"x" * 2048)], project="falcon")
    admitted = api.call("POST", "/knowledge/preflight", body=body, headers=MULTIPART)
    assert admitted.status == 200, admitted.raw
    assert admitted.body["data"]["admitted"] is True and admitted.body["data"]["admission_job_id"].startswith("adm_")

    forager.set_admission(limit_bytes=1024)
    refused = api.call("POST", "/knowledge/preflight", body=body, headers=MULTIPART)
    assert refused.status == 200, refused.raw
    data = refused.body["data"]
    assert data["admitted"] is False and data["code"] == "over_tier_limit"
    assert (data["measured_bytes"], data["limit_bytes"], data["entry_count"]) == (2048, 1024, 1)

    forager.set_admission(working_storage_fails=True)
    failed = api.call("POST", "/knowledge/preflight", body=body, headers=MULTIPART)
    assert failed.status == 502, failed.raw
    assert failed.body["success"] is False and failed.body["data"] is None


def test_an_upload_passes_the_admission_back(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    files = [("a.md", b"x" * 10)]
    admission = api.call("POST", "/knowledge/preflight", body=form(files, project="falcon"), headers=MULTIPART).body[
        "data"
    ]["admission_job_id"]
    body = form(files, project="falcon", admission_job_id=admission)
    answer = api.call("POST", "/knowledge/upload", body=body, headers=MULTIPART)
    assert answer.status == 200, answer.raw
    assert forager.jobs("falcon")[-1]["admission_job_id"] == admission
    other = form([("a.md", b"y" * 11)], project="falcon", admission_job_id=admission)
    mismatch = api.call("POST", "/knowledge/upload", body=other, headers=MULTIPART)
    assert mismatch.status == 409, mismatch.raw


def test_an_unknown_form_field_is_400_by_name(api: Api, knowledge_on: Runtime) -> None:
    body = form([("a.md", b"x")], project="falcon", colour="blue")
    answer = api.call("POST", "/knowledge/upload", body=body, headers=MULTIPART)
    assert answer.status == 400, answer.raw
    assert answer.body["message"].startswith("colour")


def test_the_multipart_framing_the_client_streams_is_what_httpx_would_send() -> None:
    from knowledge_service.upstream.multipart import FilePart, MultipartBody

    body = MultipartBody([("force", "true")], [FilePart("a.md", 3, lambda: [b"a", b"bc"])], boundary="b1")
    built = b"".join(body)
    assert len(built) == len(body)
    reference = httpx.Request(
        "POST", "http://x", data={"force": "true"}, files=[("files", ("a.md", b"abc", "application/octet-stream"))]
    )
    boundary = reference.headers["Content-Type"].split("boundary=")[1]
    assert reference.read().replace(boundary.encode(), b"b1") == built


def test_a_job_of_another_knowledge_base_is_not_found(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call(
        "GET", f"/knowledge/jobs/{demo.job('harbour')}", query={"project": "falcon"}, resource="/knowledge/jobs/{id}"
    )
    assert answer.status == 404, answer.raw
    listed = api.call("GET", "/knowledge/jobs", query={"project": "falcon"})
    assert [j["job_id"] for j in listed.body["data"]["jobs"]] == [demo.job("falcon")]
    assert json.dumps(listed.body).count("harbour") == 0


def test_a_commit_whose_cleanup_fails_still_answers_the_job_foragers_has(
    api: Api, knowledge_on: Runtime, forager: Double, monkeypatch: pytest.MonkeyPatch
) -> None:
    from knowledge_service.storage.staging import StagingStore

    def broken(self: StagingStore, session_id: str, part_keys: list[str]) -> None:
        raise RuntimeError("S3 said no")

    monkeypatch.setattr(StagingStore, "discard", broken)
    opened = api.call(
        "POST", "/knowledge/upload/sessions", body={"project": "falcon", "files": [{"name": "a", "size_bytes": 3}]}
    ).body["data"]
    boto3.client("s3").put_object(
        Bucket=knowledge_on.env.archive_bucket, Key=f"staged/{opened['session_id']}/0000", Body=b"abc"
    )
    answer = api.call(
        "POST", "/knowledge/upload", body={"project": "falcon", "session_id": opened["session_id"]}, headers=JSON
    )
    assert answer.status == 200, answer.raw
    assert forager.jobs("falcon")[-1]["job_id"] == answer.body["data"]["job_id"]
