"""POST /settings: what the console may write, and what it may not."""

from __future__ import annotations

import pytest

from knowledge_service.runtime import Runtime, reset_runtime
from local_engine.double import Double
from tests.conftest import Api


def test_turning_knowledge_on_and_choosing_study_settings(api: Api, aws: Runtime) -> None:
    answer = api.call(
        "POST",
        "/settings",
        body={"knowledge_enabled": True, "knowledge_auto_study": "on", "knowledge_revision_study": "inherit"},
    )
    assert answer.status == 200
    data = answer.body["data"]
    assert (data["knowledge_enabled"], data["knowledge_auto_study"], data["revision_study_resolved"]) == (
        True,
        "on",
        "on",
    )
    assert aws.config.settings().knowledge_enabled is True
    assert aws.config.settings().updated_by == "ada"


def test_the_credential_is_written_and_never_read_back(api: Api, aws: Runtime) -> None:
    answer = api.call("POST", "/settings", body={"knowledge_forager_token": "fgr_secret_value"})
    assert answer.status == 200
    assert "fgr_secret_value" not in answer.raw
    assert answer.body["data"]["knowledge_forager_token_set"] is True
    assert aws.credentials.read() == "fgr_secret_value"


@pytest.mark.parametrize(
    "field", ["knowledge_forager_allow_remote", "knowledge_forager_managed", "knowledge_workspace_root"]
)
def test_file_only_settings_are_not_writable(api: Api, aws: Runtime, field: str) -> None:
    answer = api.call("POST", "/settings", body={field: True})
    assert answer.status == 400
    assert answer.body["code"] == "bad_request"
    assert answer.body["message"].startswith(f"{field}: is file-only")


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://forager.example.com:8790",
        "http://169.254.169.254/",
        "ftp://x",
        "http://localhost.evil.example:8790",
        "http://127.0.0.1.nip.io:8790",
        "http://127.0.0.1@evil.example",
        # loopback spellings the document's pattern refuses: the code refuses them too
        "http://[::ffff:127.0.0.1]:8790",
        "http://[0000::1]:8790",
        "http://[::1%25eth0]:8790",
        "HTTP://127.0.0.1:8790",
        "http://127.0.0.1:0",
        "http://127.0.0.1:8790 ",
        "http://127.0.0.1:8790/../..",
    ],
)
def test_endpoints_outside_the_policy_are_refused_naming_the_field(api: Api, aws: Runtime, endpoint: str) -> None:
    answer = api.call("POST", "/settings", body={"knowledge_forager_endpoint": endpoint})
    assert answer.status == 400
    assert answer.body["message"].startswith("knowledge_forager_endpoint:")
    assert aws.config.settings().knowledge_forager_endpoint is None


def test_a_loopback_endpoint_is_taken(api: Api, aws: Runtime, forager: Double) -> None:
    answer = api.call("POST", "/settings", body={"knowledge_forager_endpoint": forager.url + "/"})
    assert answer.body["data"]["knowledge_forager_endpoint"] == forager.url


def test_the_gate_cannot_be_written_while_the_environment_pins_it(
    api: Api, aws: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHILL_KNOWLEDGE_ENABLED", "false")
    reset_runtime()
    answer = api.call("POST", "/settings", body={"knowledge_enabled": True})
    assert answer.status == 409
    assert "ANTHILL_KNOWLEDGE_ENABLED" in answer.body["message"]
    assert aws.config.settings().knowledge_enabled is False


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "body"),
        ({"knowledge_auto_study": "sometimes"}, "knowledge_auto_study"),
        ({"knowledge_enabled": None}, "knowledge_enabled"),
        ({"knowledge_forager_token": None, "knowledge_enabled": True}, "knowledge_forager_token"),
        ({"knowledge_forager_token": None}, "knowledge_forager_token"),
        ({"knowledge_forager_endpoint": None, "knowledge_enabled": True}, "knowledge_forager_endpoint"),
        ({"knowledge_forager_input_roots": None}, "knowledge_forager_input_roots"),
        ({"knowledgeEnabled": True}, "knowledgeEnabled"),
        ("not json", "body"),
        ([1, 2], "body"),
    ],
)
def test_bad_bodies_are_refused_naming_the_field(api: Api, aws: Runtime, body: object, field: str) -> None:
    answer = api.call("POST", "/settings", body=body)
    assert answer.status == 400, answer.raw
    assert answer.body["message"].startswith(f"{field}:")


def test_a_failed_settings_write_puts_the_previous_credential_back(
    api: Api, aws: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    aws.credentials.write("old-credential")

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("DynamoDB is down")

    monkeypatch.setattr(type(aws.config), "save_settings", broken)
    answer = api.call(
        "POST", "/settings", body={"knowledge_forager_token": "new-credential", "knowledge_enabled": True}
    )
    assert answer.status == 500
    assert answer.body["code"] == "internal"
    assert "Traceback" not in answer.raw and "DynamoDB is down" not in answer.raw
    assert aws.credentials.read() == "old-credential"
