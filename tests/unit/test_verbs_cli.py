"""knowledge-admin for the verbs: agent autonomy, the workspace AI budget, and the CLI door
(``knowledge-admin verb ...``), which is the same front door as HTTP with the caller's token."""

from __future__ import annotations

import json

import pytest

from knowledge_service.admin.cli import main
from knowledge_service.runtime import Runtime

pytestmark = pytest.mark.prints_tokens


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def falcon(aws: Runtime, capsys: pytest.CaptureFixture[str]) -> Runtime:
    assert run(capsys, "project", "create", "falcon", "--organization", "colony")[0] == 0
    return aws


def token(capsys: pytest.CaptureFixture[str], name: str, *options: str) -> str:
    code, out, err = run(capsys, "principal", "create", name, *options)
    assert code == 0, err
    return out.strip()


def test_a_human_has_no_autonomy_to_set(falcon: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "principal", "create", "hal", "--autonomy", "L2")
    assert code == 2
    assert "only an agent has an autonomy level" in err
    with pytest.raises(SystemExit):
        main(["principal", "create", "bot", "--kind", "agent", "--autonomy", "L9"])


def test_an_agents_autonomy_is_set_and_changed(falcon: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    token(capsys, "bot", "--kind", "agent", "--autonomy", "L0")
    assert run(capsys, "principal", "autonomy", "bot", "L2")[0] == 0
    assert falcon.principals.active_by_name("bot").autonomy == "L2"


def test_the_budget_is_set_and_shown(falcon: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    assert json.loads(run(capsys, "budget", "show", "falcon")[1])["limit"] is None
    assert run(capsys, "budget", "set", "falcon", "--limit", "10", "--spent", "10")[0] == 0
    shown = json.loads(run(capsys, "budget", "show", "falcon")[1])
    assert (shown["limit"], shown["spent"], shown["exceeded"]) == ("10", "10", True)
    assert run(capsys, "budget", "set", "falcon", "--limit", "-1")[0] == 2
    assert run(capsys, "budget", "set", "ghost", "--limit", "1")[0] == 2


def test_the_cli_door_is_the_front_door_with_the_callers_token(
    falcon: Runtime, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ada = token(
        capsys, "ada", "--permission", "read_knowledge", "--permission", "write_knowledge", "--role", "falcon=admin"
    )
    bot = token(
        capsys,
        "bot",
        "--kind",
        "agent",
        "--permission",
        "write_knowledge",
        "--role",
        "falcon=admin",
        "--autonomy",
        "L0",
    )
    monkeypatch.setenv("KNOWLEDGE_TOKEN", ada)
    code, out, _ = run(
        capsys, "verb", "capture.create", "--workspace", "falcon", "--json", '{"body": "ants dig north"}'
    )
    assert code == 0, out
    capture_id = json.loads(out)["captureId"]
    distil = json.dumps({"subject": "s", "assertion": "a", "captureId": capture_id, "evidenceQuote": "dig north"})
    code, out, _ = run(capsys, "verb", "knowledge.distil", "--workspace", "falcon", "--json", distil)
    assert (code, json.loads(out)["status"]) == (0, "DISTILLED")

    monkeypatch.setenv("KNOWLEDGE_TOKEN", bot)
    code, out, _ = run(capsys, "verb", "knowledge.distil", "--workspace", "falcon", "--json", distil)
    assert (code, json.loads(out)["code"]) == (2, "Forbidden")
    monkeypatch.setenv("KNOWLEDGE_TOKEN", "ks_" + "x" * 43)
    code, out, _ = run(capsys, "verb", "knowledge.list", "--workspace", "falcon")
    assert (code, json.loads(out)["code"]) == (2, "Unauthenticated")
    rows = falcon.verb_audit.rows("falcon")
    assert [(r["door"], r["principal"], r["decision"]) for r in rows] == [
        ("cli", "ada", "allowed"),
        ("cli", "ada", "allowed"),
        ("cli", "bot", "refused"),
        ("cli", "-", "refused"),
    ]
