"""A client generated from the API's own document, as an API consumer makes one: no model lost.

``openapi-python-client`` at a pinned version, run the way a consumer runs it (``uv tool run``);
every warning it prints is a schema it dropped, and with it an answer of the API. The names it
generates (modules, classes, functions) come from the operationIds and the schemas' names, and a
consumer types them: each reads like the API (``api/reads/search_knowledge.py``) and is at most
40 characters long.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
GENERATOR = "openapi-python-client==0.29.1"
NAME_MAX = 40


def test_a_client_generated_from_the_document_keeps_every_answer(tmp_path: Path) -> None:
    uv = shutil.which("uv") or shutil.which("uv", path=str(DOCUMENT.parents[1] / ".tools" / "bin"))
    assert uv, "uv is on the PATH under make test"
    generate = [uv, "tool", "run", "--from", GENERATOR, "openapi-python-client", "generate"]
    run = subprocess.run(
        [*generate, "--path", str(DOCUMENT), "--meta", "none", "--output-path", str(tmp_path / "client")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    printed = run.stdout + run.stderr
    assert run.returncode == 0, printed
    assert "Warning" not in printed and "Unable to process" not in printed, printed
    models = {p.stem for p in (tmp_path / "client" / "models").glob("*.py")}
    assert {"knowledge_status", "assertion_reviewed", "item_reviewed"} <= models
    operations = {p.stem for p in (tmp_path / "client" / "api").glob("*/*.py")}
    assert {"search_knowledge", "review_page", "bind_project", "knowledge_distil"} <= operations
    long = sorted(name for name in generated_names(tmp_path / "client") if len(name) > NAME_MAX)
    assert long == [], f"names longer than {NAME_MAX} characters: {long}"


def generated_names(client: Path) -> set[str]:
    """Every name a consumer of the generated client reads: its modules, classes and functions."""
    names: set[str] = set()
    for module in client.rglob("*.py"):
        names.add(module.stem)
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
    return names
