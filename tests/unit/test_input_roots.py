"""The second fence: knowledge_forager_input_roots is written through POST /settings only with
folders inside the workspace, and GET /knowledge/status's input_roots reports it as the text
lays it out (workspace, setting, next, refused, running, waiting)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from knowledge_service.domain.settings import INPUT_ROOT_PATTERN, input_root_refusal
from knowledge_service.domain.workspace_paths import BLOCKED_SEGMENTS, PATH_MAX, resolve
from knowledge_service.runtime import Runtime, reset_runtime, runtime
from tests.conftest import Api

ROOTS = "knowledge_forager_input_roots"


def test_folders_inside_the_workspace_are_written_as_given(api: Api, aws: Runtime) -> None:
    answer = api.call("POST", "/settings", body={ROOTS: ["handbook", "docs/procedures (2026)"]})
    assert answer.status == 200, answer.raw
    assert answer.body["data"][ROOTS] == ["handbook", "docs/procedures (2026)"]
    assert aws.config.settings().knowledge_forager_input_roots == ("handbook", "docs/procedures (2026)")


@pytest.mark.parametrize(
    ("folder", "reason"),
    [
        ("/etc", "outside the colony's workspace"),
        ("../other", "climbs out of the workspace"),
        ("docs/.git", "blocked folder"),
        ("/srv/colony/workspace/../secrets", "outside the colony's workspace"),
        ("/srv/colony/workspace/docs", "it is absolute; name it relative to the workspace"),
        ("docs/../handbook", "without empty, '.' or '..' names"),
        ("docs//handbook", "without empty, '.' or '..' names"),
        ("docs/./handbook", "without empty, '.' or '..' names"),
        ("docs%2Fhandbook", "a name holds a character other than"),
        ("docs\\handbook", "a name holds a character other than"),
        ("caf\u00e9", "a name holds a character other than"),
    ],
)
def test_a_folder_outside_is_refused_naming_the_folder_and_the_reason(
    api: Api, aws: Runtime, folder: str, reason: str
) -> None:
    answer = api.call("POST", "/settings", body={ROOTS: ["handbook", folder]})
    assert answer.status == 400, answer.raw
    assert answer.body["code"] == "setting_refused"
    assert folder in answer.body["message"] and reason in answer.body["message"]
    assert aws.config.settings().knowledge_forager_input_roots == ()


def test_an_unmanaged_engine_is_handed_nothing_and_the_validation_still_reports(
    api: Api, aws: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Written before POST /settings took relative folders only: an absolute one still reports.
    stored = aws.config.settings().model_copy(update={ROOTS: ("handbook", "/srv/colony/workspace/archive")})
    aws.config.save_settings(stored)
    monkeypatch.setenv("KNOWLEDGE_WORKSPACE_ROOT", "/srv/colony/workspace/archive")  # the workspace moved
    reset_runtime()
    roots = api.call("GET", "/knowledge/status").body["data"]["input_roots"]
    assert roots == {
        "key": ROOTS,
        "variable": "FORAGER_ALLOWED_INPUT_ROOTS",
        "managed": False,
        "workspace": "/srv/colony/workspace/archive",
        "setting": ["handbook", "/srv/colony/workspace/archive"],
        "next": {"roots": [], "from": "none"},
        "refused": [],
        "running": {"roots": [], "from": "none"},
        "waiting": False,
    }
    monkeypatch.setenv("KNOWLEDGE_WORKSPACE_ROOT", "/srv/moved")
    reset_runtime()
    roots = api.call("GET", "/knowledge/status").body["data"]["input_roots"]
    assert [r["folder"] for r in roots["refused"]] == ["/srv/colony/workspace/archive"]
    assert "outside the colony's workspace (/srv/moved)" in roots["refused"][0]["reason"]


def test_a_managed_engine_is_handed_the_setting_then_the_environment(
    api: Api, aws: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KNOWLEDGE_FORAGER_MANAGED", "true")
    monkeypatch.setenv("FORAGER_ALLOWED_INPUT_ROOTS", "/srv/colony/workspace/env-docs,/etc")
    reset_runtime()
    runtime()
    roots = api.call("GET", "/knowledge/status").body["data"]["input_roots"]
    assert roots["next"] == {"roots": ["/srv/colony/workspace/env-docs"], "from": "environment"}
    api.call("POST", "/settings", body={ROOTS: ["handbook"]})
    roots = api.call("GET", "/knowledge/status").body["data"]["input_roots"]
    assert roots["managed"] is True
    assert roots["next"] == {"roots": ["/srv/colony/workspace/handbook"], "from": "colony"}
    assert roots["waiting"] is True


def test_a_managed_engine_runs_with_what_its_supervisor_started_it_with(
    api: Api, aws: Runtime, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Given the local stack's supervisor, which started the running engine on the workspace
    said = {"state": "running", "endpoint": "http://127.0.0.1:8790", "input_roots": ["/srv/colony/workspace/env-docs"]}
    (tmp_path / "engine.json").write_text(json.dumps(said))
    monkeypatch.setenv("DEVSTACK_ENGINE_FILE", str(tmp_path / "engine.json"))
    monkeypatch.setenv("KNOWLEDGE_FORAGER_MANAGED", "true")
    monkeypatch.setenv("FORAGER_ALLOWED_INPUT_ROOTS", "/srv/colony/workspace/env-docs")
    reset_runtime()
    runtime()
    # When status is read
    roots = api.call("GET", "/knowledge/status").body["data"]["input_roots"]
    # Then it runs with those folders, and what it is handed waits for nothing
    assert roots["running"] == {"roots": ["/srv/colony/workspace/env-docs"], "from": "supervisor"}
    assert roots["waiting"] is False
    # and while its supervisor says it is not running, it runs with nothing
    (tmp_path / "engine.json").write_text(json.dumps({**said, "state": "backoff", "input_roots": []}))
    roots = api.call("GET", "/knowledge/status").body["data"]["input_roots"]
    assert roots["running"] == {"roots": [], "from": "none"} and roots["waiting"] is True


# ---------------------------------------------------------------- the declared form, exactly
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(folder=st.from_regex(INPUT_ROOT_PATTERN, fullmatch=True).filter(lambda f: len(f) <= PATH_MAX))
def test_every_folder_of_the_declared_form_lies_inside_the_workspace(folder: str) -> None:
    assert input_root_refusal(folder, "/srv/colony/workspace") is None
    assert resolve(folder, "/srv/colony/workspace").relative == folder  # its own canonical spelling


@pytest.mark.parametrize(
    "name",
    [
        *sorted(BLOCKED_SEGMENTS),
        *(n.upper() for n in sorted(BLOCKED_SEGMENTS)),
        ".Git",
        ".pytest_cache",
        ".x-CACHE",
        ".",
        "..",
    ],
)
def test_the_declared_form_leaves_out_every_blocked_folder_in_any_case(name: str) -> None:
    for folder in (name, f"docs/{name}", f"{name}/docs", f"a/{name}/b"):
        assert not re.fullmatch(INPUT_ROOT_PATTERN, folder), folder
        assert re.fullmatch(INPUT_ROOT_PATTERN, folder.replace(name, f"{name}x" if name not in (".", "..") else "..."))
