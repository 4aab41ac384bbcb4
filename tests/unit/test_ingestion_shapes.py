"""The ingestion bodies hold the shapes the OpenAPI document declares for them (the fuzz run's
positive and negative checks): an integer is a JSON number, an empty project names none."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from knowledge_service.domain import identifiers, ingestion


@pytest.mark.parametrize("size", [False, True, "12", None])
def test_given_a_size_that_is_not_a_json_number_when_a_session_is_asked_then_it_is_refused(size: object) -> None:
    with pytest.raises(ValidationError):
        ingestion.SessionFile.model_validate({"name": "a.md", "size_bytes": size})


@pytest.mark.parametrize("size", [0, 12, 12.0])
def test_given_an_integral_json_number_when_a_session_is_asked_then_it_is_taken(size: object) -> None:
    assert ingestion.SessionFile.model_validate({"name": "a.md", "size_bytes": size}).size_bytes == int(size)  # type: ignore[call-overload]


def test_given_an_empty_body_project_when_a_session_is_asked_then_it_names_none() -> None:
    request = ingestion.UploadSessionRequest.model_validate({"project": "", "files": [{"name": "a", "size_bytes": 1}]})
    assert request.project == ""
    with pytest.raises(ValidationError):
        ingestion.UploadSessionRequest.model_validate({"project": "Not a project", "files": []})


@pytest.mark.parametrize(
    ("pattern", "good", "bad"),
    [
        (identifiers.JOB_ID_PATTERN, "job_0123456789abcdef", "job_0123456789ABCDEF"),
        (identifiers.SESSION_ID_PATTERN, "ups_" + "0" * 32, "ups_" + "0" * 31),
        (identifiers.ADMISSION_ID_PATTERN, "adm_0123456789abcdef", "adm_0123"),
        (identifiers.DEAD_LETTER_ID_PATTERN, "dl_" + "a" * 20, "dl_" + "a" * 16),
    ],
)
def test_every_new_id_shape_is_told_in_words(pattern: str, good: str, bad: str) -> None:
    assert re.fullmatch(pattern, good)
    assert not re.fullmatch(pattern, bad)
    assert identifiers.PATTERN_PROBLEMS[pattern].startswith("is not a")
