"""Schema fuzzing: schemathesis over every operation of the API's own OpenAPI document,
against the local stack over loopback, with an admin token.

Every answer must be one the document declares, in the shape it declares; invalid data
(unknown fields, wrong types, a value outside a declared pattern or bound) must be refused,
and valid data never refused with a 400; and no answer may be a 5xx: with FORAGER
healthy none of the documented 502/503/504 applies, and a 500 is a bug. The run is bounded
for CI: ``FUZZ_EXAMPLES`` per operation (5 by default), a fixed seed, the examples, coverage and
fuzzing phases once over every operation, and no time budget, so the run ends when every
operation has had its cases. ``make fuzz`` (and ``make deep``) runs deeper: 50 examples and
``FUZZ_MAX_SECONDS``, a budget schemathesis spends in full (its fuzzing phase draws new cases
until the budget is gone). The stack is this module's own: fuzzing changes bindings
and settings, which no other test should see (``fuzz_hooks.py`` restores them after each
such call).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.fuzz_hooks import restore_bindings
from tests.localstack import ROOT, LocalStack, bearer, launch_stack

pytestmark = pytest.mark.e2e

EXAMPLES = os.environ.get("FUZZ_EXAMPLES", "5")
PHASES = os.environ.get("FUZZ_PHASES", "examples,coverage,fuzzing")
MAX_SECONDS = os.environ.get("FUZZ_MAX_SECONDS", "")
"""Empty: no budget, one pass. A number: schemathesis keeps fuzzing until that many seconds are spent."""
SAFETY_SECONDS = 1800
"""A pass that has not ended by then is a hung run, not a slow one."""
CHECKS = (
    "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,"
    "negative_data_rejection,positive_data_acceptance"
)
"""The document declares every shape the code enforces (patterns, lengths, bounds, enums), so
schema-valid data is never refused (``positive_data_acceptance``, ST202) and schema-invalid data
is never taken (``negative_data_rejection``) — on every operation, with no exception: the rules
that once went beyond the schema are declared exactly (``POST /settings``' input roots, the
curation acts' notes) or made total over their declared shape (the cursors of
``GET /knowledge/events`` and ``GET /knowledge/feed`` are positions: every well-formed one reads
a page)."""


@pytest.fixture(scope="module")
def fuzz_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    with launch_stack(tmp_path_factory.mktemp("fuzz")) as running:
        yield running


def test_every_operation_answers_what_its_document_says(fuzz_stack: LocalStack, tmp_path: Path) -> None:
    with httpx.Client(base_url=fuzz_stack.url, headers=bearer(fuzz_stack.admin_token), timeout=30) as client:
        restore_bindings(client)
    env = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "tests.e2e.fuzz_hooks",
        "FUZZ_BASE_URL": fuzz_stack.url,
        "FUZZ_TOKEN": fuzz_stack.admin_token,
        "FUZZ_FORAGER_TOKEN": (fuzz_stack.state_dir / "simulator.token").read_text().strip(),
        "FUZZ_FORAGER_ENDPOINT": fuzz_stack.env["KNOWLEDGE_FORAGER_ENDPOINT"],
        "FUZZ_MISSION_CREDENTIAL": fuzz_stack.admin("mission", "start", "falcon", "--role", "researcher").strip(),
        "PYTHONPATH": str(ROOT),
        "NO_COLOR": "1",
    }
    run_schemathesis(env, fuzz_stack, tmp_path)


def fetch_document(fuzz_stack: LocalStack, tmp_path: Path) -> Path:
    """The stack's own ``/openapi.json``, read once with the deadline a cold function needs.

    Schemathesis reads a schema URL with a fixed 10 s deadline; on two cores busy with the other
    workers a cold function rendering the whole document took longer (CI, 2026-12-05), so the
    run failed before its first case. The file it fuzzes is exactly what the stack served."""
    answer = httpx.get(f"{fuzz_stack.url}/openapi.json", timeout=120)
    answer.raise_for_status()
    document = tmp_path / "openapi.json"
    document.write_bytes(answer.content)
    return document


def run_schemathesis(env: dict[str, str], fuzz_stack: LocalStack, tmp_path: Path) -> None:
    document = fetch_document(fuzz_stack, tmp_path)
    env = {**env, "FUZZ_DOCUMENT": str(document)}
    command = [
        str(Path(sys.executable).parent / "schemathesis"),
        "run",
        str(document),
        "--url",
        fuzz_stack.url,
        "--header",
        f"Authorization: Bearer {fuzz_stack.admin_token}",
        "--checks",
        CHECKS,
        "--max-examples",
        EXAMPLES,
        "--seed",
        "20261130",
        "--workers",
        "1",
        "--mode",
        "all",
        "--phases",
        PHASES,
        "--request-timeout",
        "30",
        *(["--max-time", MAX_SECONDS] if MAX_SECONDS else []),
        "--report",
        "junit",
        "--report-dir",
        str(tmp_path / "report"),
    ]
    result = subprocess.run(
        command,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=int(MAX_SECONDS or SAFETY_SECONDS) + 240,
    )
    summary = result.stdout[-6000:]
    assert result.returncode == 0, summary
    assert "No issues found" in summary or "passed" in summary.lower(), summary
