"""The inline upload's multipart reader: what it takes and what it refuses, by name."""

from __future__ import annotations

import pytest

from knowledge_service.edge.upload_form import boundary_of, flag, parse_form
from knowledge_service.errors import BadRequest

FIELDS = frozenset({"project", "force", "admission_job_id"})
TYPE = "multipart/form-data; boundary=b0"


def part(head: str, content: bytes) -> bytes:
    return b"--b0\r\n" + head.encode() + b"\r\n\r\n" + content + b"\r\n"


def test_fields_and_files_are_read_with_their_bytes_intact() -> None:
    body = (
        part('Content-Disposition: form-data; name="project"', b"falcon")
        + part('Content-Disposition: form-data; name="files"; filename="a b.md"', b"\r\n--b\x00\xff")
        + b"--b0--\r\n"
    )
    form = parse_form(body, TYPE, FIELDS)
    assert form.fields == {"project": "falcon"}
    assert [(f.filename, f.data) for f in form.files] == [("a b.md", b"\r\n--b\x00\xff")]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (part('Content-Disposition: form-data; name="colour"', b"blue") + b"--b0--\r\n", "colour"),
        (part('Content-Disposition: form-data; name="force"', b"x") * 2 + b"--b0--\r\n", "force"),
        (part('Content-Disposition: form-data; name="other"; filename="x"', b"x") + b"--b0--\r\n", "other"),
        (part('Content-Disposition: form-data; name="files"; filename=""', b"x") + b"--b0--\r\n", "files"),
        (part('Content-Disposition: form-data; name="files"; filename="a\x01"', b"x") + b"--b0--\r\n", "files"),
        (part('Content-Disposition: form-data; name="project"', b"falcon"), "body"),
        (b"--other\r\n", "body"),
        (part("Content-Type: text/plain", b"x") + b"--b0--\r\n", "body"),
    ],
)
def test_a_malformed_form_is_refused_naming_what_is_wrong(body: bytes, named: str) -> None:
    with pytest.raises(BadRequest) as refused:
        parse_form(body, TYPE, FIELDS)
    assert refused.value.field == named


@pytest.mark.parametrize("content_type", ["application/json", "multipart/form-data", "multipart/form-data; boundary="])
def test_a_content_type_without_a_multipart_boundary_is_refused(content_type: str) -> None:
    with pytest.raises(BadRequest) as refused:
        boundary_of(content_type)
    assert refused.value.field == "Content-Type"


def test_force_is_true_or_false_and_nothing_else() -> None:
    assert flag({"force": "true"}, "force") is True
    assert flag({}, "force") is False
    with pytest.raises(BadRequest):
        flag({"force": "yes"}, "force")
    with pytest.raises(BadRequest):
        flag({"force": " TRUE "}, "force")
