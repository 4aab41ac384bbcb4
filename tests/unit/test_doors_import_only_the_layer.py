"""The doors (``functions/<group>/app.py``) sit above the layer's import contract.

import-linter holds the layer itself (``make lint``); the doors are not a package, so this
test holds them: a door imports the layer's door module and nothing else — never the FORAGER
simulator, the local stack, the kb client or a library. The libraries its function loads from
the top of the stack it names in ``door.api``/``door.bus``'s ``preload``
(``knowledge_service/door.py``), and never calls AWS or FORAGER itself.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOORS = sorted((ROOT / "functions").glob("*/app.py"))
ALLOWED = {"knowledge_service", "__future__"}


def imported_roots(source: str) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_there_are_doors_to_check() -> None:
    assert len(DOORS) >= 5


@pytest.mark.parametrize("door", DOORS, ids=lambda p: p.parent.name)
def test_a_door_imports_only_the_layer_and_the_standard_library(door: Path) -> None:
    foreign = {r for r in imported_roots(door.read_text()) if r not in ALLOWED and r not in sys.stdlib_module_names}
    assert foreign == set(), f"{door.relative_to(ROOT)} imports {sorted(foreign)}"


def test_the_check_sees_a_forbidden_import() -> None:
    assert imported_roots("from local_engine import Engine\nimport httpx\n") == {"local_engine", "httpx"}
