"""No module imports one that imports it back, through any chain: held over every package of
the repository with grimp, the import graph import-linter builds its contracts on.

Every import counts, ``TYPE_CHECKING`` and function-level ones included: a circle broken only
at run time is still two modules that cannot be read, or moved, one without the other. (The
three this test found when written: ``admin/cli.py`` ↔ ``admin/missions.py``, the consumer ↔ its
recovery, ``benchmarks/__main__.py`` ↔ ``benchmarks/load.py``.) import-linter's own
``acyclic_siblings`` contract squashes each package's descendants into one node, so it reports
circles between packages that no two modules form; this is the module-level rule.
"""

from __future__ import annotations

import sys
from pathlib import Path

import grimp
import pytest

PACKAGES = ("knowledge_service", "devstack", "local_engine", "kb", "benchmarks", "tests")


def import_cycles(*packages: str) -> list[list[str]]:
    """Each circle once: an import, then the shortest chain from what it imports back to the importer."""
    graph = grimp.build_graph(*packages, cache_dir=None)
    cycles: dict[frozenset[str], list[str]] = {}
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back:
                cycles.setdefault(frozenset(back), [importer, *back])
    return list(cycles.values())


def test_no_module_imports_one_that_imports_it_back() -> None:
    assert import_cycles(*PACKAGES) == []


def test_the_check_sees_a_circle_through_a_function_level_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "circle"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from circle import b\n")
    (package / "b.py").write_text("def late():\n    from circle.c import x\n")
    (package / "c.py").write_text("from circle.a import b\nx = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "circle", raising=False)
    assert import_cycles("circle") == [["circle.a", "circle.b", "circle.c", "circle.a"]]
