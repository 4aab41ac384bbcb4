"""A function imports only what its routes use, and no X-Ray SDK unless it traces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge_service import door
from knowledge_service.door import traced
from knowledge_service.environment import tracing_on

ROOT = Path(__file__).resolve().parents[2]
_LOADED = (
    "import json, sys\n"
    "import app\n"
    "print(json.dumps(sorted(n for n in sys.modules if n.split('.')[0] in {'aws_xray_sdk', 'knowledge_service'}"
    " or n.startswith('aws_lambda_powertools.utilities.idempotency'))))\n"
)


def _loaded_by(group: str, **env: str) -> set[str]:
    base = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "functions" / group)}
    out = subprocess.run(
        [sys.executable, "-c", _LOADED], env={**base, **env}, capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out))


def test_given_the_reads_function_when_imported_then_it_loads_no_store_a_read_never_uses() -> None:
    loaded = _loaded_by("reads", AWS_LAMBDA_FUNCTION_NAME="reads", POWERTOOLS_TRACE_DISABLED="true")
    unused = {
        "knowledge_service.storage.feed_store",
        "knowledge_service.storage.findings_store",
        "knowledge_service.storage.page_store",
        "knowledge_service.domain.findings",
        "aws_lambda_powertools.utilities.idempotency",
    }
    assert loaded & unused == set()
    assert not any(name.startswith("aws_xray_sdk") for name in loaded)


def test_given_tracing_on_when_imported_then_the_xray_sdk_is_loaded() -> None:
    loaded = _loaded_by("reads", AWS_LAMBDA_FUNCTION_NAME="reads", AWS_DEFAULT_REGION="us-east-1")
    assert any(name.startswith("aws_xray_sdk") for name in loaded)


@pytest.mark.parametrize(
    ("environ", "on"),
    [
        ({"AWS_LAMBDA_FUNCTION_NAME": "f"}, True),
        ({"AWS_LAMBDA_FUNCTION_NAME": "f", "POWERTOOLS_TRACE_DISABLED": "true"}, False),
        ({"AWS_LAMBDA_FUNCTION_NAME": "f", "AWS_SAM_LOCAL": "true"}, False),
        ({}, False),
    ],
)
def test_tracing_is_on_only_in_lambda_unless_disabled(environ: dict[str, str], on: bool) -> None:
    assert tracing_on(environ) is on


def test_given_tracing_off_when_a_handler_is_traced_then_it_is_the_handler_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Outside Lambda (an environment of its own: the local stack's warm containers set
    AWS_LAMBDA_FUNCTION_NAME in this process's environment while they run an invocation)."""
    monkeypatch.setattr(door, "tracing_on", lambda: tracing_on({}))

    def handler(event: object, context: object) -> object:
        return event

    assert traced(handler) is handler
