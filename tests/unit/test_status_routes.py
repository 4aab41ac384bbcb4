"""GET /knowledge/status, GET /knowledge/engine and GET /modules, at the handler."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowledge_service.models import KnowledgeSettings
from knowledge_service.runtime import Runtime, reset_runtime
from local_engine.double import Double
from tests.conftest import Api

STATUS_FIELDS = {
    "enabled",
    "reachable",
    "usable",
    "version",
    "schema_version",
    "search_backend",
    "model_provider",
    "endpoint",
    "reason",
    "projects",
    "configured_endpoint",
    "allow_remote",
    "auto_study",
    "revision_study",
    "revision_study_resolved",
    "open_changes",
    "dead_letters",
    "gate_env_var",
    "gate_env_pinned",
    "change_feed",
    "package_version",
    "host_package_version",
    "package_agreement",
    "package_note",
    "input_roots",
}


def test_status_reports_every_documented_field_when_working(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    answer = api.call("GET", "/knowledge/status")
    assert answer.status == 200
    assert answer.body["success"] is True
    data = answer.body["data"]
    assert set(data) == STATUS_FIELDS
    assert (data["enabled"], data["reachable"], data["usable"]) == (True, True, True)
    assert data["version"] == "0.8.0"
    assert data["endpoint"] == data["configured_endpoint"] == forager.url
    assert set(data["projects"]) >= {"falcon", "harbour"}
    assert (data["package_version"], data["host_package_version"], data["package_agreement"]) == (7, 7, "agreed")
    assert data["package_note"] is None
    assert data["gate_env_var"] == "ANTHILL_KNOWLEDGE_ENABLED"
    assert data["dead_letters"] == {
        "scope": "colony",
        "unresolved": 0,
        "escalated": 0,
        "unreachable": 0,
        "unreachable_escalated": 0,
        "escalation_days": 180,
    }
    assert data["input_roots"]["next"] == {"roots": [], "from": "none"}
    assert data["revision_study_resolved"] == data["auto_study"]


def test_status_never_carries_the_credential(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    assert forager.token not in api.call("GET", "/knowledge/status").raw


def test_status_with_knowledge_off_probes_nothing_and_says_so(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    knowledge_on.config.save_settings(
        KnowledgeSettings(knowledge_enabled=False, knowledge_forager_endpoint=forager.url)
    )
    before = len(forager.requests)
    data = api.call("GET", "/knowledge/status").body["data"]
    assert (data["enabled"], data["reachable"], data["usable"]) == (False, False, False)
    assert data["endpoint"] == ""
    assert data["configured_endpoint"] == forager.url
    assert "knowledge_enabled" in data["reason"]
    assert data["package_agreement"] == "unknown"
    assert len(forager.requests) == before


def test_status_tells_unreachable_from_not_configured(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    forager.set_fault("down")
    data = api.call("GET", "/knowledge/status").body["data"]
    assert (data["enabled"], data["reachable"], data["usable"]) == (True, False, False)
    assert "cannot be reached" in data["reason"]
    knowledge_on.config.save_settings(KnowledgeSettings(knowledge_enabled=True, knowledge_forager_endpoint=""))
    data = api.call("GET", "/knowledge/status").body["data"]
    assert data["reason"] == "No FORAGER endpoint is configured."


@pytest.mark.parametrize(
    ("capabilities", "agreement", "starts"),
    [
        (
            {"change_feed": True, "exports": {"anthill": {"package_version": 6}}},
            "disagreed",
            "This host reads ANTHILL package version 7 and this knowledge service emits version 6",
        ),
        ({"change_feed": True}, "unstated", "This knowledge service states no ANTHILL package version"),
    ],
)
def test_package_disagreement_never_makes_knowledge_unusable(
    api: Api, knowledge_on: Runtime, forager: Double, capabilities: dict, agreement: str, starts: str
) -> None:
    forager.set_capabilities({"instance_id": "fgi_1", "generation": "gen_01", **capabilities})
    data = api.call("GET", "/knowledge/status").body["data"]
    assert data["package_agreement"] == agreement
    assert data["package_note"].startswith(starts)
    assert (data["reachable"], data["usable"]) == (True, True)


@pytest.mark.parametrize("mode", ["5xx", "malformed", "429", "reset"])
def test_capabilities_that_could_not_be_read_are_unknown_while_the_rest_answers(
    api: Api, knowledge_on: Runtime, forager: Double, mode: str
) -> None:
    forager.set_fault(mode, path_prefix="/api/capabilities")
    data = api.call("GET", "/knowledge/status").body["data"]
    assert data["reachable"] is True  # /api/status answered
    assert (data["package_agreement"], data["package_note"], data["package_version"]) == ("unknown", None, None)


def test_the_environment_pin_is_reported_and_wins(
    api: Api, knowledge_on: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHILL_KNOWLEDGE_ENABLED", "false")
    reset_runtime()
    data = api.call("GET", "/knowledge/status").body["data"]
    assert data["gate_env_pinned"] is True
    assert data["enabled"] is False
    assert "ANTHILL_KNOWLEDGE_ENABLED" in data["reason"]


def test_engine_is_unmanaged_on_a_serverless_host(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call("GET", "/knowledge/engine")
    assert answer.status == 200
    assert set(answer.body["data"]) == {"managed", "note"}
    assert answer.body["data"]["managed"] is False


MANAGED_KEYS = {
    "managed", "state", "endpoint", "instance_id", "generation", "version", "reason", "ready_since",
    "restarts_in_window",
}  # fmt: skip


def _managed(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    monkeypatch.setenv("DEVSTACK_ENGINE_FILE", str(path))
    reset_runtime()


def test_a_managed_engine_answers_what_its_supervisor_says(
    api: Api, knowledge_on: Runtime, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    said = {
        "state": "backoff", "endpoint": "http://127.0.0.1:8790", "instance_id": "fgi_1", "generation": "gen_01",
        "version": "0.8.0", "reason": "The engine did not answer its health check.", "ready_since": None,
        "restarts_in_window": 2,
    }  # fmt: skip
    (tmp_path / "engine.json").write_text(json.dumps(said))
    _managed(monkeypatch, tmp_path / "engine.json")
    data = api.call("GET", "/knowledge/engine").body["data"]
    assert data == {"managed": True, **said} and set(data) == MANAGED_KEYS


def test_a_managed_engine_is_answered_from_its_supervisor_while_the_engine_is_down(
    api: Api, knowledge_on: Runtime, forager: Double, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Given a supervisor that says backoff, and an engine that does not answer
    said = {
        "state": "backoff", "endpoint": "http://127.0.0.1:8790", "instance_id": None, "generation": None,
        "version": None, "reason": "The engine exited (code -9); next try in 2 s.", "ready_since": None,
        "restarts_in_window": 1,
    }  # fmt: skip
    (tmp_path / "engine.json").write_text(json.dumps(said))
    _managed(monkeypatch, tmp_path / "engine.json")
    forager.set_fault("down")
    # When a person asks what the engine is doing
    answer = api.call("GET", "/knowledge/engine")
    # Then the supervisor's word is the answer, not the 503 of an engine that did not answer
    assert answer.status == 200, answer.body
    assert answer.body["data"] == {"managed": True, **said}
    assert api.call("GET", "/knowledge/projects").status == 503  # every other route still waits on it


@pytest.mark.parametrize("written", ["{not json", '{"state": "dancing"}', "x" * 20_000, None])
def test_a_supervisor_word_that_cannot_be_read_is_a_failed_engine(
    api: Api, knowledge_on: Runtime, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, written: str | None
) -> None:
    if written is not None:
        (tmp_path / "engine.json").write_text(written)
    _managed(monkeypatch, tmp_path / "engine.json")
    data = api.call("GET", "/knowledge/engine").body["data"]
    assert (data["managed"], data["state"]) == (True, "failed") and data["reason"]


def test_engine_answers_503_while_knowledge_is_off(api: Api, aws: Runtime) -> None:
    answer = api.call("GET", "/knowledge/engine")
    assert answer.status == 503
    assert answer.body == {
        "success": False,
        "message": answer.body["message"],
        "data": None,
        "code": "knowledge_disabled",
    }


def test_modules_reports_five_axes_and_the_summary(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    data = api.call("GET", "/modules").body["data"]
    (module,) = data["modules"]
    assert module["id"] == "knowledge"
    assert set(module["axes"]) == {"installed", "configured", "healthy", "enabled", "entitled"}
    assert module["summary"] == "ok"
    assert module["first_problem"] is None
    assert module["axes"]["entitled"]["state"] == "unverifiable"
    assert module["axes"]["entitled"]["ok"] is None
    assert data["entitlement_note"].startswith("The entitled axis is informational.")

    forager.set_fault("down")
    module = api.call("GET", "/modules").body["data"]["modules"][0]
    assert module["summary"] == "attention"
    assert module["first_problem"]["who_can_fix"] == "operator"


def test_modules_with_knowledge_off_is_off_and_names_the_fix(api: Api, aws: Runtime) -> None:
    module = api.call("GET", "/modules").body["data"]["modules"][0]
    assert module["summary"] == "off"
    assert module["first_problem"]["condition"] == "knowledge_enabled is off."
    assert module["first_problem"]["who_can_fix"] == "administrator"
    assert module["axes"]["healthy"]["ok"] is None
