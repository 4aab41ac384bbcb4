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

from knowledge_service.domain.workspace_paths import WINDOWS_DEVICES, PathRefused, file_name
from knowledge_service.edge.upload_form import FILENAME_MAX
from knowledge_service.runtime import Runtime
from knowledge_service.upstream.multipart import FilePart, MultipartBody, encoded_filename
from local_engine.double import Double
from local_engine.serving import multipart as engine_form
from tests.conftest import Api
from tests.unit.test_ingestion_routes import JSON, MULTIPART, form, upstream_posts

ON_THE_WIRE = [
    # the probe's names that changed meaning between the service and the engine (issue 39)
    "x; filename=/etc/passwd",
    "x; filename=/root/.ssh/id_rsa",
    'x"; filename="C:/Windows/win.ini',
    "a;rm -rf ~",
    "%22",
    '"quoted".md',
    "it's a name.md",
    "a=b.md",
    "semi;colon/and=equals.md",
    "100%.md",
    "%2525.md",
    "tilde~/dash-under_score.md",
    "caf\u00e9/\u00fcber.md",
    "\u65e5\u672c\u8a9e.md",
    "emoji \U0001f41c.md",
    "e\u0301.md",
    "back\\slash.md",
    "con-notes.md",
    "console.md",
    "a.b.c",
    "notes/.hidden",
]
"""Names the fence accepts that a header parser could read two ways: each must reach the engine
as exactly the name the service accepted (``file_name``'s answer)."""

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
    # what no file system should name (issue 39): Windows device names, a trailing dot or space, blanks
    "con",
    "NUL",
    "aux.md",
    "com1",
    "lpt1.md",
    "Com9.tar.gz",
    "notes/prn",
    "notes/con .md",
    " ",
    "   ",
    "x.",
    "x ",
    "notes./a.md",
    "a/ /b.md",
]


def _refused_on_every_route(api: Api, forager: Double, name: str) -> list[tuple[int, str, str]]:
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
    api: Api, knowledge_on: Runtime, forager: Double, name: str
) -> None:
    answers = _refused_on_every_route(api, forager, name)
    expected = [(400, "bad_request", "files"), (400, "bad_request", "files"), (400, "bad_request", "files.0.name")]
    assert answers == expected
    assert upstream_posts(forager, "/uploads") == [] and upstream_posts(forager, "/preflight") == []
    staged = boto3.client("s3").list_objects_v2(Bucket=knowledge_on.env.archive_bucket, Prefix="staged/")
    assert staged.get("KeyCount", 0) == 0


def test_a_name_is_forwarded_in_its_one_canonical_spelling(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    body = form([("notes/./a.md", b"x"), ("notes%2Fb.md", b"y"), ("\uff43.md", b"z")], project="falcon")
    answer = api.call("POST", "/knowledge/upload", body=body, headers=MULTIPART)
    assert answer.status == 200, answer.raw
    assert forager.jobs("falcon")[-1]["inputs"] == ["notes/a.md", "notes/b.md", "c.md"]


def test_a_session_staged_under_a_hostile_name_is_refused_at_commit_and_nothing_is_sent(
    api: Api, knowledge_on: Runtime, forager: Double
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
    assert all(s.strip() and not s.endswith((".", " ")) for s in segments), relative
    assert not any(s.split(".", 1)[0].rstrip(" ").casefold() in WINDOWS_DEVICES for s in segments), relative
    assert file_name(relative) == relative


@pytest.mark.parametrize("name", ON_THE_WIRE)
def test_the_engine_records_exactly_the_name_the_service_accepted(
    api: Api, knowledge_on: Runtime, forager: Double, name: str
) -> None:
    # Given a name the fence accepts, sent by a client as RFC 7578 writes it (percent-encoded)
    accepted = file_name(name)
    body = form([(encoded_filename(name), b"x")], project="falcon")
    # When it is uploaded through the service
    answer = api.call("POST", "/knowledge/upload", body=body, headers=MULTIPART)
    # Then the engine's job names that one file, spelled exactly as the service accepted it
    assert answer.status == 200, answer.raw
    assert forager.jobs("falcon")[-1]["inputs"] == [accepted]


def test_the_probes_names_keep_their_meaning() -> None:
    assert file_name("x; filename=/etc/passwd") == "x; filename=/etc/passwd"
    assert file_name("a;rm -rf ~") == "a;rm -rf ~"
    assert file_name("%22") == '"'


def test_the_edge_writes_a_filename_percent_encoded_in_upper_case_hex() -> None:
    assert encoded_filename('x; filename="/etc/passwd"') == "x%3B%20filename%3D%22/etc/passwd%22"
    assert encoded_filename("caf\u00e9~-._/A9") == "caf%C3%A9~-._/A9"
    assert encoded_filename("100%") == "100%25"


def test_the_engine_refuses_a_filename_that_is_not_percent_encoded_utf8() -> None:
    for value in (b"100%", b"%zz.md", b"%ff.md", b"%C3.md"):
        with pytest.raises(engine_form.FormRefused):
            engine_form.decoded_filename(value)


@pytest.mark.parametrize("device", sorted(WINDOWS_DEVICES))
def test_every_windows_device_name_is_refused_in_any_case_with_or_without_an_extension(device: str) -> None:
    for spelled in (device, device.upper(), device.title(), f"{device}.md", f"notes/{device.upper()}.tar.gz"):
        with pytest.raises(PathRefused):
            file_name(spelled)


def test_a_filename_of_1024_characters_is_taken_and_1025_is_400(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    longest = "/".join(["a" * 99] * 10) + "/" + "b" * (FILENAME_MAX - 1000)
    assert len(longest) == FILENAME_MAX == 1024
    taken = api.call("POST", "/knowledge/upload", body=form([(longest, b"x")], project="falcon"), headers=MULTIPART)
    assert taken.status == 200, taken.raw
    over = api.call(
        "POST", "/knowledge/upload", body=form([(longest + "c", b"x")], project="falcon"), headers=MULTIPART
    )
    assert (over.status, over.body["message"].split(":", 1)[0]) == (400, "files")
    assert "1 to 1024 characters" in over.body["message"]


def _through_both_sides(name: str) -> str:
    """``name`` written by the edge's multipart writer and read back by the engine's parser."""
    body = MultipartBody([("force", "false")], [FilePart(name, 1, lambda: [b"x"])], boundary="b-1")
    parts = engine_form.parse(b"".join(body), body.boundary)
    (part,) = [p for p in parts if p.filename is not None]
    assert (part.name, part.data) == ("files", b"x")
    return part.filename or ""


@settings(max_examples=1_500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(names, st.text(min_size=1, max_size=60), st.sampled_from(ON_THE_WIRE)))
def test_every_accepted_name_reaches_the_engine_as_it_was_accepted(name: str) -> None:
    try:
        accepted = file_name(name)
    except PathRefused:
        return
    assert _through_both_sides(accepted) == accepted


# ---------------------------------------------------------------------- the engine's reader, alone
def _form_of(disposition: str, tail: str = "--b-1--\r\n") -> bytes:
    return f"--b-1\r\nContent-Disposition: {disposition}\r\n\r\nx\r\n{tail}".encode()


@pytest.mark.parametrize("kind", ["attachment", "inline", "form-datum"])
def test_the_engine_refuses_a_part_that_is_not_form_data(kind: str) -> None:
    with pytest.raises(engine_form.FormRefused, match="not form-data"):
        engine_form.parse(_form_of(f'{kind}; name="files"; filename="a.md"'), "b-1")


def test_the_engine_refuses_a_body_that_ends_before_its_closing_delimiter() -> None:
    with pytest.raises(engine_form.FormRefused, match="ends early"):
        engine_form.parse(_form_of('form-data; name="files"; filename="a.md"', tail="--b-"), "b-1")


def test_the_engines_parts_are_what_was_sent_and_cannot_be_changed_after() -> None:
    (part,) = engine_form.parse(_form_of('form-data; name="files"; filename="a%3Bb.md"'), "b-1")
    assert (part.name, part.filename, part.data) == ("files", "a;b.md", b"x")
    with pytest.raises(AttributeError):
        part.filename = "other"  # type: ignore[misc]


@pytest.mark.parametrize("before", ["Content-Type: application/octet-stream", "A-Header: x", "Zed: y"])
def test_the_engine_finds_the_disposition_among_a_parts_other_headers(before: str) -> None:
    body = f'--b-1\r\n{before}\r\nContent-Disposition: form-data; name="files"; filename="a.md"\r\n\r\nx\r\n--b-1--\r\n'
    (part,) = engine_form.parse(body.encode(), "b-1")
    assert (part.name, part.filename) == ("files", "a.md")


def test_the_engine_refuses_a_body_its_parser_cannot_read() -> None:
    with pytest.raises(engine_form.FormRefused, match="cannot be read"):
        engine_form.parse(b"--b-1\r\nno colon here\r\n\r\nx\r\n--b-1--\r\n", "b-1")
