"""The test files ``make check`` runs: the tests of what changed since a base (``main``).

A selection by changed files, read from git (``git diff --merge-base``, the working tree and
untracked files), not a coverage database: it needs no first full run and no tracing, and it
sees what a coverage map of the pytest process would miss (the end-to-end files run the code
in the local stack's processes). The rules, from each changed file:

- a test file (``tests/**/test_*.py``): itself;
- a module of ``knowledge_service``, ``devstack``, ``forager_simulator``, ``kb`` or a helper
  of ``tests/``: every test file outside ``tests/e2e/`` that imports it by name
  (``import a.b.c``, ``from a.b.c import``, ``from a.b import c``);
- a file of the console (``functions/console/static/``, ``console.lock.json``): the browser tier
  (``tests/browser/``) and the console's unit files (``tests/unit/test_console_*.py``);
- a ``conftest.py``, ``template.yaml``, a door under ``functions/`` or ``pyproject.toml``:
  every test file of ``tests/unit/`` (they build on all of these);

Usage: ``python -m tests.changed [BASE]`` prints one path a line, nothing when nothing did."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDE = ("template.yaml", "pyproject.toml", "uv.lock")
CONSOLE = "functions/console/static/"


def _git(*args: str) -> list[str]:
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line]


def changed_files(base: str) -> set[str]:
    files = set(_git("diff", "--name-only", "--merge-base", base))
    files |= set(_git("diff", "--name-only", "HEAD"))
    files |= set(_git("ls-files", "--others", "--exclude-standard"))
    return {f for f in files if (ROOT / f).exists()}


def module_of(path: str) -> str | None:
    """The dotted name a changed ``.py`` file is imported by, or None."""
    if not path.endswith(".py"):
        return None
    relative = path.removeprefix("layers/common/")
    if not relative.startswith(("knowledge_service/", "devstack/", "forager_simulator/", "kb/", "tests/")):
        return None
    parts = relative.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def importers(module: str, candidates: list[Path]) -> set[Path]:
    parent, _, last = module.rpartition(".")
    pattern = re.compile(
        rf"^\s*(import {re.escape(module)}\b|from {re.escape(module)} import\b"
        + (rf"|from {re.escape(parent)} import \(?[^)]*\b{re.escape(last)}\b" if parent else "")
        + ")",
        re.MULTILINE,
    )
    return {path for path in candidates if pattern.search(path.read_text())}


def selection(base: str) -> list[str]:
    tests = sorted(ROOT.glob("tests/**/test_*.py"))
    importable = [p for p in tests if "tests/e2e/" not in p.as_posix()]
    unit = [p for p in tests if p.is_relative_to(ROOT / "tests/unit")]
    chosen: set[Path] = set()
    for name in changed_files(base):
        path = ROOT / name
        if path in tests:
            chosen.add(path)
        elif name.startswith(CONSOLE) or name == "console.lock.json":
            chosen.update(
                p for p in tests if p.is_relative_to(ROOT / "tests/browser") or p.name.startswith("test_console_")
            )
        elif name in WIDE or path.name == "conftest.py" or name.startswith("functions/"):
            chosen.update(unit)
        elif (module := module_of(name)) is not None:
            chosen.update(importers(module, importable))
    return sorted(str(p.relative_to(ROOT)) for p in chosen)


if __name__ == "__main__":
    print("\n".join(selection(sys.argv[1] if len(sys.argv) > 1 else "main")))
