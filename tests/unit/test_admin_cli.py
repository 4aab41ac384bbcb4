"""knowledge-admin: projects, principals, tokens, grants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowledge_service.admin.cli import main
from knowledge_service.identity.authentication import principal_for
from knowledge_service.identity.principal import Permission, ProjectRole
from knowledge_service.runtime import Runtime

pytestmark = pytest.mark.prints_tokens


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_new_token_is_printed_once_alone_on_stdout(aws: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "project", "create", "falcon", "--organization", "colony")[0] == 0
    code, out, _ = run(
        capsys, "principal", "create", "alice", "--permission", "read_knowledge", "--role", "falcon=viewer"
    )
    assert code == 0
    token = out.strip()
    assert out == token + "\n"
    principal = principal_for(f"Bearer {token}", aws.principals)
    assert principal is not None
    assert principal.role_in("falcon") is ProjectRole.VIEWER
    listing = run(capsys, "principal", "list", "--json")[1]
    assert token not in listing
    assert json.loads(listing)[0]["name"] == "alice"


def test_grant_adds_roles_and_revoke_ends_the_token(aws: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "project", "create", "falcon", "--organization", "colony")
    token = run(capsys, "principal", "create", "bob", "--without", "manage_knowledge")[1].strip()
    assert not principal_for(f"Bearer {token}", aws.principals).holds(Permission.MANAGE_KNOWLEDGE)  # type: ignore[union-attr]
    assert (
        run(capsys, "principal", "grant", "bob", "--permission", "manage_knowledge", "--role", "falcon=admin")[0] == 0
    )
    principal = principal_for(f"Bearer {token}", aws.principals)
    assert principal is not None and principal.holds(Permission.MANAGE_KNOWLEDGE)
    assert run(capsys, "principal", "revoke", "bob")[0] == 0
    assert principal_for(f"Bearer {token}", aws.principals) is None


def test_an_agent_cannot_be_given_manage_permissions(aws: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "principal", "create", "bot", "--kind", "agent", "--permission", "manage_knowledge")
    assert code == 2
    assert out == ""
    assert "agent never holds manage_knowledge" in err


def test_a_role_on_a_missing_project_is_refused(aws: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "principal", "create", "carol", "--role", "ghost=viewer")
    assert code == 2
    assert "no project 'ghost'" in err


def test_two_active_principals_cannot_share_a_name(aws: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "principal", "create", "dup")
    code, _, err = run(capsys, "principal", "create", "dup")
    assert code == 2
    assert "already exists" in err


def test_local_reads_the_stacks_env_file_whatever_follows_it(
    aws: Runtime, capsys: pytest.CaptureFixture[str], tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`knowledge-admin --local principal list` is the README's own line: --local takes no value."""
    state = Path(str(tmp_path))
    run(capsys, "project", "create", "falcon", "--organization", "colony")
    monkeypatch.chdir(state)
    state.joinpath(".devstack").mkdir()
    state.joinpath(".devstack", "env").write_text(
        f"PRINCIPALS_TABLE={aws.env.principals_table}\nPROJECTS_TABLE={aws.env.projects_table}\n"
    )
    code, out, _ = run(capsys, "--local", "project", "list")
    assert code == 0
    assert out.startswith("falcon\t")
    code, out, _ = run(capsys, "--local", "--state-dir", str(state / ".devstack"), "project", "list")
    assert (code, out.split("\t")[0]) == (0, "falcon")


def test_local_finds_the_stack_make_run_started_with_devstack_state_dir(
    aws: Runtime, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a stack started with DEVSTACK_STATE_DIR=second, and no .devstack where the command runs
    run(capsys, "project", "create", "falcon", "--organization", "colony")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "second").mkdir()
    (tmp_path / "second" / "env").write_text(
        f"PRINCIPALS_TABLE={aws.env.principals_table}\nPROJECTS_TABLE={aws.env.projects_table}\n"
    )
    # When knowledge-admin --local runs with that same variable, and no --state-dir
    monkeypatch.setenv("DEVSTACK_STATE_DIR", "second")
    code, out, _ = run(capsys, "--local", "project", "list")
    # Then it reads that stack's state folder
    assert (code, out.split("\t")[0]) == (0, "falcon")
    # and --state-dir still names another, whatever the variable says
    code, _, err = run(capsys, "--local", "--state-dir", str(tmp_path / "none"), "project", "list")
    assert code == 2
    assert f"{tmp_path / 'none' / 'env'} does not exist" in err


def test_local_without_a_running_stack_names_both_ways_to_find_one(
    aws: Runtime, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DEVSTACK_STATE_DIR", raising=False)
    code, _, err = run(capsys, "--local", "project", "list")
    assert code == 2
    assert ".devstack/env does not exist" in err
    assert "DEVSTACK_STATE_DIR" in err and "--state-dir" in err


def test_subscription_set_writes_the_record_the_gate_reads(aws: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "subscription", "set", "active", "--capability", "forager.knowledge.curate")
    assert code == 0
    assert json.loads(out)["state"] == "active"
    record = aws.config.subscription()
    assert (record.state.value, record.capabilities) == ("active", ("forager.knowledge.curate",))
    item = aws.config._table.get_item(Key={"pk": "subscription", "sk": "installation"})["Item"]
    assert (item["state"], item["capabilities"]) == ("active", ["forager.knowledge.curate"])
    assert json.loads(run(capsys, "subscription", "show")[1])["capabilities"] == ["forager.knowledge.curate"]


def test_subscription_set_refuses_a_capability_that_is_not_paid(
    aws: Runtime, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "subscription", "set", "active", "--capability", "knowledge.read")
    assert code == 2 and "not a paid capability" in err
    assert aws.config.subscription().state.value == "unenrolled"


def test_events_lists_the_log_newest_first(aws: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    aws.events.record("knowledge_curated", "ada", {"act": "resolve", "project": "falcon", "knowledge_base": "falcon"})
    aws.events.record("knowledge_export_started", "ada", {"project": "falcon", "knowledge_base": "falcon"})
    aws.events.record("knowledge_curated", "bo", {"act": "merge", "project": "other", "knowledge_base": "x"})
    lines = run(capsys, "events", "--project", "falcon")[1].splitlines()
    assert [line.split("\t")[1] for line in lines] == ["knowledge_export_started", "knowledge_curated"]
    only = json.loads(run(capsys, "events", "--act", "merge", "--json")[1])
    assert [e["actor"] for e in only["events"]] == ["bo"]


def test_no_region_is_one_sentence_naming_the_fix(
    aws: Runtime, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from knowledge_service.storage import aws as clients

    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    clients.reset_clients()
    try:
        code, out, err = run(capsys, "project", "list")
    finally:
        clients.reset_clients()
    assert code == 1 and out == ""
    assert (
        err == "knowledge-admin: no AWS region is set: set AWS_REGION (the local stack's is us-east-1), "
        "or pass --local or --stack NAME.\n"
    )


def test_an_emulator_that_is_not_running_is_one_sentence_naming_make_run(
    aws: Runtime, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from botocore.exceptions import EndpointConnectionError

    from knowledge_service.storage.projects import ProjectStore

    def down(self: ProjectStore) -> None:
        raise EndpointConnectionError(endpoint_url="http://127.0.0.1:4566/")

    monkeypatch.setattr(ProjectStore, "all", down)
    code, _, err = run(capsys, "project", "list")
    assert code == 1
    assert "EndpointConnectionError" not in err and "Traceback" not in err
    assert err.startswith("knowledge-admin: nothing answers at http://127.0.0.1:4566/: is `make run` running")


def test_a_principal_made_with_no_flags_holds_both_knowledge_permissions(
    aws: Runtime, capsys: pytest.CaptureFixture[str]
) -> None:
    # Seed 000: "Both default to granted at the permission layer"; an agent's default is what an agent may hold
    human = principal_for(f"Bearer {run(capsys, 'principal', 'create', 'hana')[1].strip()}", aws.principals)
    agent = principal_for(
        f"Bearer {run(capsys, 'principal', 'create', 'bot', '--kind', 'agent')[1].strip()}", aws.principals
    )
    assert human is not None and agent is not None
    assert human.permissions == {Permission.READ_KNOWLEDGE, Permission.MANAGE_KNOWLEDGE}
    assert agent.permissions == {Permission.READ_KNOWLEDGE}
    withheld = run(capsys, "principal", "create", "wes", "--without", "manage_knowledge", "--without", "read_knowledge")
    assert principal_for(f"Bearer {withheld[1].strip()}", aws.principals).permissions == frozenset()  # type: ignore[union-attr]
    listing = run(capsys, "principal", "list")[1]
    assert "hana\thuman\tmanage_knowledge,read_knowledge\t" in listing
    assert "wes\thuman\t-\t" in listing
    clash = run(capsys, "principal", "create", "x", "--without", "read_knowledge", "--permission", "read_knowledge")
    assert clash[0] == 2 and "--without" in clash[2]
