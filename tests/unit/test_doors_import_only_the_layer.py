"""The doors (``functions/<group>/app.py``) sit above the layer's import contract.

import-linter holds the layer itself (``make lint``); the doors are not a package, so this
test holds them: a door imports the standard library, Powertools and the layer's
``knowledge_service`` — never the FORAGER simulator, the local stack or the kb client. It may
*load* a library the layer uses (boto3, httpcore and httpx, markdown-it, the MCP SDK) with a bare
``import``, so it loads from the top of the stack (``knowledge_service/door.py``), but never
names it again: a door never calls AWS or FORAGER itself.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOORS = sorted((ROOT / "functions").glob("*/app.py"))
ALLOWED = {"knowledge_service", "aws_lambda_powertools", "__future__"}
LOADED_ONLY = {"boto3", "httpcore", "httpx", "markdown_it", "mcp"}


def imported_roots(source: str) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def used_names(source: str) -> set[str]:
    return {node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name)}


def loaded_only(source: str) -> set[str]:
    """The roots a door only loads: a bare ``import`` (no ``as``, no submodule), never a ``from``."""
    tree = ast.parse(source)
    bare = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.asname is None and "." not in alias.name
    }
    imported_from = {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    return bare - imported_from - _dotted_or_renamed(tree)


def _dotted_or_renamed(tree: ast.AST) -> set[str]:
    return {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.asname is not None or "." in alias.name
    }


def test_there_are_doors_to_check() -> None:
    assert len(DOORS) >= 5


@pytest.mark.parametrize("door", DOORS, ids=lambda p: p.parent.name)
def test_a_door_imports_only_the_layer_powertools_and_the_standard_library(door: Path) -> None:
    source = door.read_text()
    foreign = {r for r in imported_roots(source) if r not in ALLOWED and r not in sys.stdlib_module_names}
    assert foreign <= LOADED_ONLY, f"{door.relative_to(ROOT)} imports {sorted(foreign - LOADED_ONLY)}"
    assert foreign <= loaded_only(source), f"{door.relative_to(ROOT)} imports from {sorted(foreign)}"
    assert foreign & used_names(source) == set(), f"{door.relative_to(ROOT)} uses {sorted(foreign)}"


def test_the_check_sees_a_forbidden_import() -> None:
    assert imported_roots("from forager_simulator import Simulator\nimport httpx\n") == {"forager_simulator", "httpx"}


def test_the_check_sees_a_loaded_library_used_or_imported_from() -> None:
    assert loaded_only("import boto3\nfrom httpx import Client\nimport mcp.types\n") == {"boto3"}
    assert loaded_only("import boto3\nfrom boto3 import client\n") == set()
    assert loaded_only("import httpx\nimport httpx as h\n") == set()
    assert "boto3" in used_names("import boto3\nboto3.client('s3')\n")
