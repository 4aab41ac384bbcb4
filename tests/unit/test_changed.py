"""``make check``'s selection (``tests/changed.py``): every product module has tests, and a one-line
change that breaks a module selects a test that fails on it.

The five changes are made in a copy of this working tree that is a git repository of its own (its
one commit is the base), so the selection is read the way ``make check`` reads it (``python -m
tests.changed BASE``), and the test that must catch each change runs against the changed copy.
Each change is in a module of its own and each catching test reaches only its own: the five are
made together, selected once and their tests run in one process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.changed import ROOT, Reach, build_graph, is_product, python_files, select_for, tier_of


@dataclass(frozen=True)
class Breakage:
    module: str
    line: str  # exactly as the module has it
    broken: str
    catches: str  # the test (a pytest node) that fails on the broken line


BREAKAGES = [
    # tested only through its routes: no test file imports it
    Breakage(
        "layers/common/knowledge_service/domain/bindings.py",
        '        default_project=visible.console_default.knowledge_base if visible.console_default else "",',
        '        default_project="",',
        "tests/unit/test_bindings_routes.py::test_the_console_default_is_bound_and_cleared_with_empty_project",
    ),
    Breakage(
        "layers/common/knowledge_service/domain/curation.py",
        "    text = value.strip(identifiers.BLANK)",
        "    text = value",
        "tests/unit/test_curation_routes.py::test_a_note_of_2000_characters_after_trimming_is_taken",
    ),
    Breakage(
        "layers/common/knowledge_service/domain/reads.py",
        "    clamped = max(SEARCH_LIMIT_MIN, min(SEARCH_LIMIT_MAX, limit))",
        "    clamped = limit",
        "tests/unit/test_reads_routes.py::test_search_limit_is_clamped_not_refused",
    ),
    Breakage(
        "layers/common/knowledge_service/domain/pages/paths.py",
        '        if part in ("", "."):',
        '        if part == "":',
        "tests/unit/test_pages_rules.py::test_several_spellings_name_one_page",
    ),
    Breakage(
        "kb/plan.py",
        "            return Step(Kind.HUB_NEWER, path)",
        "            return Step(Kind.UPDATE, path, guard=m)",
        "tests/unit/test_kb_plan.py::test_each_line_reads_as_the_table_says",
    ),
]


@pytest.fixture(scope="module")
def reach() -> Reach:
    """The graph of what reaches what in this tree, built once (a few seconds of CPU)."""
    return Reach(build_graph())


def test_every_product_module_selects_some_test(reach: Reach) -> None:
    # Given the graph of what reaches what, and every Python file of the product
    for path in (p for p in python_files() if is_product(p) and not p.startswith("tests/")):
        # Then a change to any one selects test files: those that reach it, or its tier, said so
        said: list[str] = []
        assert select_for(path, reach, said), path
        if not reach.tests_reaching(path):  # devstack/__main__.py: started as a process, imported by none
            assert said == [f"{path}: no test file reaches it; running its tier ({len(tier_of(path))} files)"]


def test_a_module_tested_only_through_its_routes_is_reached_through_its_door(reach: Reach) -> None:
    # Given domain/bindings.py, which no test file imports
    bindings = "layers/common/knowledge_service/domain/bindings.py"
    steps = reach.by_test["tests/unit/test_bindings_routes.py"]
    # Then the route tests reach it: their path, the function's door, its router, the domain
    assert steps["functions/bindings/app.py"] == 1
    assert steps["layers/common/knowledge_service/edge/routes/bindings.py"] == 2
    assert steps[bindings] == 3
    assert "tests/unit/test_bindings_routes.py" in select_for(bindings, reach, [])


def _git(copy: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=check", "-c", "user.email=check@localhost", "-c", "commit.gpgsign=false", *args],
        cwd=copy,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This working tree (its tracked and untracked files) as a repository of its own."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    target = tmp_path_factory.mktemp("repo")
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).write_bytes(source.read_bytes())
    _git(target, "init", "-q", "-b", "main")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "base")
    return target


def _in(copy: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """``command`` run in the copy, importing the copy's code (not this tree's editable install)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYTEST_", "COV_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(copy / "layers" / "common"), str(copy)])
    return subprocess.run(
        [sys.executable, *command], cwd=copy, env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def broken(copy: Path) -> Iterator[tuple[list[str], dict[str, str]]]:
    """The copy with all five one-line changes made (each in its own module): what ``make check``
    selects for them, read once as it reads it, and how each catching test ended, run once in one
    pytest process (the selection and a pytest start were ~8 s of CPU each, five times over)."""
    texts = {b.module: (copy / b.module).read_text() for b in BREAKAGES}
    for b in BREAKAGES:
        assert texts[b.module].count(b.line + "\n") == 1, f"{b.module} no longer has the line; choose another"
        (copy / b.module).write_text(texts[b.module].replace(b.line + "\n", b.broken + "\n"))
    try:
        selected = _in(copy, "-m", "tests.changed", "main")
        assert selected.returncode == 0, selected.stderr
        ran = _in(
            copy, "-m", "pytest", "-q", "-rA", "-n", "0", "-p", "no:cacheprovider", *(b.catches for b in BREAKAGES)
        )
        outcomes = {
            words[1]: words[0].lower()
            for words in (line.split() for line in ran.stdout.splitlines())
            if len(words) > 1 and words[0] in ("PASSED", "FAILED", "ERROR")
        }
        yield selected.stdout.split(), outcomes
    finally:
        for module, text in texts.items():
            (copy / module).write_text(text)


@pytest.mark.parametrize("breakage", BREAKAGES, ids=lambda b: Path(b.module).stem)
def test_a_one_line_break_selects_a_test_that_fails_on_it(
    reach: Reach, broken: tuple[list[str], dict[str, str]], breakage: Breakage
) -> None:
    files, outcomes = broken
    catching = breakage.catches.split("::")[0]
    # Given a one-line change that breaks the module, make check selects the test that catches it:
    # for this change alone (the graph is the tree's: a one-line change moves no import),
    assert catching in select_for(breakage.module, reach, []), breakage.module
    # and among what it selects for the changes since the base, read from git as make check reads them
    assert catching in files, f"{breakage.module}: selected {files}"
    # And that test (one of its cases, when it has several) fails on the changed module
    ran = {case: outcome for case, outcome in outcomes.items() if case.split("[")[0] == breakage.catches}
    assert "failed" in ran.values(), f"{breakage.catches}: {ran or outcomes}"
