"""An upload's file name is a relative name (docs/upstream-contract.md), held to the workspace
path fence's rules by one function (``workspace_paths.file_name``) on every route that
forwards a name to FORAGER: the inline upload, the upload session (opened, then committed)
and preflight. A hostile name is the same 400 on all three, and FORAGER receives nothing."""

from __future__ import annotations

import posixpath
import unicodedata
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from knowledge_service.domain.workspace_paths import PathRefused, file_name
from knowledge_service.runtime import Runtime
from local_engine import Engine
from tests.conftest import Api
from tests.unit.test_ingestion_routes import JSON, MULTIPART, form, upstream_posts

HOSTILE = [
    "../etc/passwd",
    "/etc/passwd",
    "../../etc/cron.d/x",
    "notes/../../etc/passwd",
    "%2e%2e/etc/passwd",
    "%252e%252e%252fetc%252fpasswd",
    "..\\etc\\passwd",
    "\\etc\\passwd",
    "C:\\Windows\\win.ini",
    "c:notes.txt",
    "\uff0e\uff0e\uff0fetc\uff0fpasswd",
    "a\u2215..\u2215..\u2215b",
    "a\x00b.txt",
    "a\x01b.txt",
    "tab\there.txt",
    "a\x7fb.txt",
    "\u202etxt.exe",
    "zero\u200bwidth.md",
    "%ff.txt",
    ".git/config",
    ".",
    "./",
]


def _refused_on_every_route(api: Api, forager: Engine, name: str) -> list[tuple[int, str, str]]:
    answers = [
        api.call("POST", "/knowledge/upload", body=form([(name, b"x")], project="falcon"), headers=MULTIPART),
        api.call("POST", "/knowledge/preflight", body=form([(name, b"x")], project="falcon"), headers=MULTIPART),
        api.call(
            "POST", "/knowledge/upload/sessions", body={"project": "falcon", "files": [{"name": name, "size_bytes": 1}]}
        ),
    ]
    return [(a.status, a.body["code"], a.body["message"].split(":", 1)[0]) for a in answers]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_file_name_is_the_same_400_on_every_upload_route_and_nothing_is_sent(
    api: Api, knowledge_on: Runtime, forager: Engine, name: str
) -> None:
    answers = _refused_on_every_route(api, forager, name)
    expected = [(400, "bad_request", "files"), (400, "bad_request", "files"), (400, "bad_request", "files.0.name")]
    assert answers == expected
    assert upstream_posts(forager, "/uploads") == [] and upstream_posts(forager, "/preflight") == []
    staged = boto3.client("s3").list_objects_v2(Bucket=knowledge_on.env.archive_bucket, Prefix="staged/")
    assert staged.get("KeyCount", 0) == 0


def test_a_name_is_forwarded_in_its_one_canonical_spelling(api: Api, knowledge_on: Runtime, forager: Engine) -> None:
    body = form([("notes/./a.md", b"x"), ("notes%2Fb.md", b"y"), ("\uff43.md", b"z")], project="falcon")
    answer = api.call("POST", "/knowledge/upload", body=body, headers=MULTIPART)
    assert answer.status == 200, answer.raw
    assert forager.jobs("falcon")[-1]["inputs"] == ["notes/a.md", "notes/b.md", "c.md"]


def test_a_session_staged_under_a_hostile_name_is_refused_at_commit_and_nothing_is_sent(
    api: Api, knowledge_on: Runtime, forager: Engine
) -> None:
    opened = api.call(
        "POST", "/knowledge/upload/sessions", body={"project": "falcon", "files": [{"name": "a.md", "size_bytes": 1}]}
    ).body["data"]
    session_id = opened["session_id"]
    staging = knowledge_on.staging
    manifest: dict[str, Any] = dict(staging.manifest(session_id) or {})
    manifest["files"] = [{**manifest["files"][0], "name": "../../etc/cron.d/x"}]  # a manifest from before the rule
    staging.save_manifest(session_id, manifest)
    boto3.client("s3").put_object(Bucket=knowledge_on.env.archive_bucket, Key=manifest["files"][0]["key"], Body=b"x")
    for route in ("/knowledge/upload", "/knowledge/preflight"):
        answer = api.call("POST", route, body={"project": "falcon", "session_id": session_id}, headers=JSON)
        assert answer.status == 400, answer.raw
        assert answer.body["message"].startswith("files:")
    assert upstream_posts(forager, "/uploads") == [] and upstream_posts(forager, "/preflight") == []


names = st.one_of(
    st.lists(
        st.sampled_from(
            [
                *("..", ".", "/", "\\", "%2e", "%2f", "%25", "%00", "%ff", "\x00", "\n", "\u200b", "\uff0e"),
                *("\uff0f", "\u2215", "C:", "c:", "a", "notes", ".git", "x.md", " ", "\u00e9", "e\u0301"),
            ]
        ),
        min_size=1,
        max_size=12,
    ).map("".join),
    st.text(min_size=1, max_size=40),
)


@settings(max_examples=3_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names)
def test_an_accepted_file_name_is_relative_contained_and_its_own_canonical_form(name: str) -> None:
    try:
        relative = file_name(name)
    except PathRefused:
        return
    segments = relative.split("/")
    assert not relative.startswith("/") and "\\" not in relative
    assert not any(s in ("", ".", "..") for s in segments), relative
    assert not (len(segments[0]) >= 2 and segments[0][1] == ":" and segments[0][0].isascii()), relative
    assert all(unicodedata.category(c)[0] != "C" for c in relative), relative
    assert posixpath.normpath(posixpath.join("/batch", relative)).startswith("/batch/")
    assert file_name(relative) == relative
