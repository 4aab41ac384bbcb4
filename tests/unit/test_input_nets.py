"""Nets under the input rules (issue 25's list): each holds one rule a small slip would
break — an export's file name never a dot file, a form field's byte bound, the symlink
check's root boundary, and job paths held to the symlink check at all."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from knowledge_service.domain import ingestion
from knowledge_service.domain.exports import safe_file_name
from knowledge_service.domain.workspace_paths import PathRefused, contain
from knowledge_service.edge.upload_form import FIELD_MAX, parse_form
from knowledge_service.errors import BadRequest, PermissionDenied

BOUNDARY = "net-boundary"
EXPORT_ID = "exp_0123456789abcdef"


@pytest.mark.parametrize(("name", "safe"), [("..hidden.zip", "hidden.zip"), (".hidden.zip", "hidden.zip")])
def test_an_export_file_name_never_starts_with_a_dot(name: str, safe: str) -> None:
    assert safe_file_name(name, EXPORT_ID) == safe


def test_a_multipart_text_field_one_byte_past_its_bound_is_refused_naming_the_field() -> None:
    def form(value: str) -> bytes:
        return (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="project"\r\n\r\n{value}\r\n--{BOUNDARY}--\r\n'
        ).encode()

    content_type = f"multipart/form-data; boundary={BOUNDARY}"
    assert parse_form(form("p" * FIELD_MAX), content_type, frozenset({"project"})).fields["project"] == "p" * 256
    with pytest.raises(BadRequest) as refused:
        parse_form(form("p" * (FIELD_MAX + 1)), content_type, frozenset({"project"}))
    assert FIELD_MAX + 1 == 257
    assert refused.value.field == "project" and refused.value.message.startswith("project: ")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "docs").mkdir(parents=True)
    secrets = tmp_path / "workspace-secrets"  # a sibling whose name extends the root's
    secrets.mkdir()
    (secrets / "keys.txt").write_text("s3cr3t")
    os.symlink(secrets, root / "docs" / "leak")
    return root


def test_the_symlink_check_refuses_a_sibling_whose_name_extends_the_roots(workspace: Path) -> None:
    with pytest.raises(PathRefused, match="symbolic link"):
        contain("docs/leak", str(workspace))
    with pytest.raises(PathRefused, match="symbolic link"):
        contain("docs/leak/keys.txt", str(workspace))
    assert contain("docs", str(workspace)).relative == "docs"


class RecordingForager:
    """Stands in for the FORAGER client: every call it receives is kept."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def queue_job(self, knowledge_base: str, paths: list[str], **kwargs: Any) -> Any:
        self.calls.append(("queue_job", paths))
        raise AssertionError("FORAGER must receive nothing")


def test_a_job_path_that_is_a_link_out_of_the_workspace_is_refused_and_nothing_is_sent(workspace: Path) -> None:
    forager = RecordingForager()
    request = ingestion.JobRequest(paths=["docs", "docs/leak"])
    with pytest.raises(PermissionDenied, match="symbolic link"):
        ingestion.queue_job(forager, str(workspace), "falcon", request, "key", None)  # type: ignore[arg-type]
    assert forager.calls == []
