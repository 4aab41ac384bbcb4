"""The shapes the API's own description declares are the shapes the code enforces.

Each pattern is written once (``domain/identifiers.py``, ``domain/settings.py``) and used by
the route parameters and models the document is generated from *and* by the domain's own
checks. These properties hold the two to one set: what the pattern matches the check takes,
what it does not the check refuses, in the check's own words and naming the field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from knowledge_service.domain import identifiers
from knowledge_service.domain.endpoint_policy import check_endpoint
from knowledge_service.domain.settings import LOOPBACK_ENDPOINT_PATTERN
from knowledge_service.errors import BadRequest
from knowledge_service.runtime import Runtime
from tests.conftest import Api

DOCUMENT = json.loads((Path(__file__).resolve().parents[2] / "docs" / "openapi.json").read_text())


def matches(pattern: str, value: str) -> bool:
    """The pattern as JSON Schema (ECMA) and pydantic (Rust) read it: a search, where ``$`` is
    the end of the text (Python's ``$`` would also match before a final newline)."""
    found = re.search(pattern, value)
    return found is not None and (not pattern.endswith("$") or found.end() == len(value))


def refused(check: Any, *args: str) -> BadRequest | None:
    try:
        check(*args)
    except BadRequest as error:
        return error
    return None


WORDISH = st.text(alphabet="abz09_ ,-A.", max_size=12)
PROJECTISH = st.text(alphabet="abz09_-A. ", max_size=66)
IDISH = st.text(alphabet="kient_src0af9gAF", max_size=22)


@given(st.one_of(st.from_regex(identifiers.FORAGER_WORDS_PATTERN, fullmatch=True), WORDISH))
def test_a_filter_is_taken_exactly_when_the_declared_pattern_matches(value: str) -> None:
    error = refused(identifiers.forager_words, value, "status")
    assert (error is None) is matches(identifiers.FORAGER_WORDS_PATTERN, value)
    if error is not None:
        assert error.message.startswith("status: ")


@given(st.one_of(st.from_regex(identifiers.PROJECT_ID_PATTERN, fullmatch=True), PROJECTISH))
def test_a_project_id_is_taken_exactly_when_the_declared_pattern_matches(value: str) -> None:
    error = refused(identifiers.project_id, value)
    assert (error is None) is matches(identifiers.PROJECT_ID_PATTERN, value)


@pytest.mark.parametrize("prefix", sorted(identifiers.RECORD_KINDS))
@given(data=st.data())
def test_a_record_id_is_taken_exactly_when_the_declared_pattern_matches(prefix: str, data: st.DataObject) -> None:
    pattern = identifiers.record_pattern(prefix)
    value = data.draw(st.one_of(st.from_regex(pattern, fullmatch=True), IDISH, st.just(f"{prefix}_" + "0" * 16 + "\n")))
    error = refused(identifiers.record_id, value, prefix)
    assert (error is None) is matches(pattern, value)


@given(st.from_regex(LOOPBACK_ENDPOINT_PATTERN, fullmatch=True).filter(bool))
def test_every_endpoint_the_document_declares_is_one_the_policy_takes(url: str) -> None:
    check_endpoint(url, allow_remote=False, allowed_hosts=())


@pytest.mark.parametrize(
    "url", ["http://localhost.evil.example", "http://127.0.0.1@evil.example", "http://127.0.0.1/?q", "ftp://127.0.0.1"]
)
def test_the_declared_endpoint_pattern_refuses_what_the_policy_refuses(url: str) -> None:
    assert not matches(LOOPBACK_ENDPOINT_PATTERN, url)


def test_every_declared_pattern_is_told_in_the_checks_own_words() -> None:
    """A value refused by a declared pattern is answered with the domain check's sentence."""
    patterns = set()
    for path in DOCUMENT["paths"].values():
        for operation in path.values():
            for parameter in operation.get("parameters", []):
                if "pattern" in parameter.get("schema", {}):
                    patterns.add(parameter["schema"]["pattern"])
    assert patterns, "the document declares no parameter pattern"
    missing = {p for p in patterns if p not in identifiers.PATTERN_PROBLEMS and p != r"^[0-9a-f]{1,64}$"}
    assert missing == set()


@pytest.mark.parametrize(
    ("path", "resource", "query", "message"),
    [
        (
            "/knowledge/items/ki_zz",
            "/knowledge/items/{id}",
            {},
            "id: is not a FORAGER statement id (ki_ and 16 hex digits).",
        ),
        (
            "/knowledge/entities/ent_0000000000000000x",
            "/knowledge/entities/{id}",
            {},
            "id: is not a FORAGER entity id (ent_ and 16 hex digits).",
        ),
        (
            "/knowledge/statements",
            None,
            {"status": "Disputed"},
            "status: takes FORAGER's words: lower-case letters, digits and '_', comma-separated.",
        ),
        (
            "/knowledge/sources",
            None,
            {"project": "Falcon!"},
            "project: is not a project id (lower-case letters, digits, '-' and '_', at most 63).",
        ),
        ("/knowledge/search", None, {"q": " \t "}, "q: is required."),
    ],
)
def test_a_value_outside_the_declared_shape_is_refused_in_the_checks_words_naming_the_field(
    api: Api, knowledge_on: Runtime, path: str, resource: str | None, query: dict[str, str], message: str
) -> None:
    answer = api.call("GET", path, query=query, resource=resource)
    assert (answer.status, answer.body["code"], answer.body["message"]) == (400, "bad_request", message)


@pytest.mark.parametrize(("top_k", "status"), [(5, 200), (5.0, 200), (5.5, 400), (True, 400), ("5", 400), (51, 400)])
def test_top_k_takes_exactly_a_json_integer_from_1_to_50(
    api: Api, knowledge_on: Runtime, top_k: object, status: int
) -> None:
    answer = api.call("POST", "/knowledge/retrieve", body={"query": "launch", "project": "falcon", "top_k": top_k})
    assert answer.status == status, answer.raw
    if status == 400:
        assert answer.body["message"].startswith("top_k: ")


def test_a_project_named_twice_that_does_not_exist_is_not_found_before_the_two_are_compared(
    api: Api, knowledge_on: Runtime
) -> None:
    missing = api.call(
        "POST", "/knowledge/retrieve", body={"query": "x", "project": "falcon"}, query={"project": "nowhere"}
    )
    assert (missing.status, missing.body["code"]) == (404, "not_found")
    knowledge_on.config.bind("colony-docs", "harbour", "test")
    both = api.call(
        "POST", "/knowledge/retrieve", body={"query": "x", "project": "falcon"}, query={"project": "colony-docs"}
    )
    assert (both.status, both.body["message"]) == (
        400,
        "project: is named twice, differently (the query and the body).",
    )


def test_an_empty_project_names_none_so_the_other_place_chooses(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call(
        "POST", "/knowledge/retrieve", body={"query": "launch", "project": ""}, query={"project": "falcon"}
    )
    assert answer.status == 200, answer.raw
    assert answer.body["data"]["project"] == "falcon"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "body"),
        ({"knowledge_enabled": None}, "knowledge_enabled"),
        ({"knowledge_auto_study": None}, "knowledge_auto_study"),
    ],
)
def test_settings_the_document_says_are_never_null_are_refused_naming_the_field(
    api: Api, aws: Runtime, body: dict[str, Any], field: str
) -> None:
    answer = api.call("POST", "/settings", body=body)
    assert answer.status == 400
    assert answer.body["message"].startswith(f"{field}: ")


def test_the_document_declares_the_settings_never_null_and_at_least_one() -> None:
    schema = DOCUMENT["components"]["schemas"]["SettingsUpdate"]
    assert schema["minProperties"] == 1
    assert all("anyOf" not in field and field.get("type") != "null" for field in schema["properties"].values())
