"""FORAGER's answer models are one package of areas, each imported on first use
(``knowledge_service/upstream/models/__init__.py``): its map, the names type checkers read
and the areas themselves must agree, or a name would be missing at run time only."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge_service.upstream import models

PACKAGE = Path(models.__file__).parent


def _defined_in(area: str) -> set[str]:
    """The public names an area module binds itself (not the ones it imports)."""
    tree = ast.parse((PACKAGE / f"{area}.py").read_text())
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("_")}


def _read_by_type_checkers() -> dict[str, str]:
    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    return {
        alias.name: node.module.rsplit(".", 1)[1]
        for node in guarded.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def test_the_map_names_exactly_what_each_area_defines() -> None:
    areas = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in {"__init__", "base"})
    assert sorted(models.AREAS) == areas
    for area, names in models.AREAS.items():
        assert set(names) == _defined_in(area), area


def test_type_checkers_read_the_same_names_from_the_same_areas() -> None:
    mapped = {name: area for area, names in models.AREAS.items() for name in names}
    assert _read_by_type_checkers() == mapped


@pytest.mark.parametrize("area", sorted(models.AREAS))
def test_every_mapped_name_is_the_area_s_own_object(area: str) -> None:
    module = importlib.import_module(f"{models.__name__}.{area}")
    for name in models.AREAS[area]:
        assert getattr(models, name) is getattr(module, name)
        if inspect.isclass(getattr(module, name)):
            assert getattr(module, name).__module__ == module.__name__


def test_a_name_no_area_defines_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchAnswer"):
        _ = models.NoSuchAnswer


def test_given_a_fresh_interpreter_when_one_name_is_imported_then_only_its_area_is_loaded() -> None:
    script = (
        "import sys\n"
        "from knowledge_service.upstream.client import ForagerClient\n"
        "from knowledge_service.upstream.models import Job\n"
        "print(' '.join(sorted(n for n in sys.modules if n.startswith('knowledge_service.upstream.models.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["knowledge_service.upstream.models.base", "knowledge_service.upstream.models.ingestion"]
