"""``python -m devstack invoke`` / ``make invoke``: every sample event in events/ runs its
function against the running local stack and prints the function's answer.

The events make a knowledge base, change the project map and the settings: they run
against a stack of this module's own, not the session's shared one."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devstack.invoke import InvokeError, invoke
from devstack.template import ROOT, Template
from tests.localstack import LocalStack, launch_stack

EVENTS = sorted((ROOT / "events").glob("*.json"))
FUNCTION_OF_PREFIX = Template().function_of_folder()  # a sample event's prefix is its function's folder
ENVELOPED = ("/knowledge", "/modules", "/settings")  # the other surfaces keep their own wire shapes


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    with launch_stack(tmp_path_factory.mktemp("invoke")) as running:
        yield running


def _function(event: Path) -> str:
    return FUNCTION_OF_PREFIX[event.name.split("_")[0]]


def test_every_function_of_the_template_has_an_event_to_invoke() -> None:
    assert {_function(e) for e in EVENTS} == set(Template().functions())


@pytest.mark.parametrize("event", EVENTS, ids=lambda p: p.stem)
def test_given_a_sample_event_when_invoked_against_the_stack_then_its_function_answers(
    stack: LocalStack, event: Path
) -> None:
    ok, answer = invoke(_function(event), json.loads(event.read_text()), stack.state_dir)

    if "httpMethod" in json.loads(event.read_text()):
        assert ok, answer
        assert isinstance(answer["statusCode"], int)
        assert answer["statusCode"] < 500, answer
        body: dict[str, Any] = json.loads(answer["body"])
        if json.loads(event.read_text())["path"].startswith(ENVELOPED):
            assert set(body) >= {"success", "data"}
        else:
            assert isinstance(body, dict | list), body
    else:
        assert ok, answer


def test_the_command_prints_the_answer_as_json(stack: LocalStack) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "devstack", "invoke", "ReadsFunction", "events/reads_search.json"],
        cwd=ROOT,
        env={"DEVSTACK_STATE_DIR": str(stack.state_dir), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["statusCode"] == 200
    assert json.loads(answer["body"])["success"] is True


def test_given_no_running_stack_then_the_command_says_to_start_one(tmp_path: Path) -> None:
    with pytest.raises(InvokeError, match="make run"):
        invoke("ReadsFunction", {}, tmp_path)


def test_given_an_unknown_function_then_it_names_the_ones_there_are(stack: LocalStack) -> None:
    with pytest.raises(InvokeError, match="ReadsFunction"):
        invoke("NoSuchFunction", {}, stack.state_dir)
