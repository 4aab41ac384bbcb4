"""The test files ``make check`` runs: the tests that reach what changed since a base (``main``).

A selection by what reaches the changed files, read from git (``git diff --merge-base``, the
working tree and untracked files) and from the code itself, not a coverage database: it needs no
first full run and no tracing, and it sees what a coverage map of the pytest process would miss
(the end-to-end files run the code in the local stack's processes).

**What reaches what.** A graph over the project's Python files (``knowledge_service``,
``functions/``, ``devstack``, ``local_engine``, ``kb``, ``benchmarks`` and the helpers of
``tests/``), whose edges are:

- every import a file makes (``import a.b``, ``from a.b import c``, relative ones, and the
  package ``__init__`` each one runs), wherever it is made (inside a function too), except the
  ``if TYPE_CHECKING:`` ones, which never run;
- a package whose ``__init__`` loads its modules by name (``import_module(f"{__name__}.{area}")``,
  ``upstream/models``) reaches every module of the package;
- a function's door (``functions/<group>/app.py``) reaches the router it includes,
  ``door.api("reads")`` → ``edge/routes/reads.py``, or its bus handler, ``door.bus("kb_archive")``
  → ``edge/bus/kb_archive.py``;
- a test file reaches the door of every function whose route it calls: an API path it writes
  (``"/knowledge/project-map"``, ``f"/knowledge/items/{item}"``, ``f"{url}/modules"``), matched
  against ``template.yaml``'s routes (a path of two segments or more that begins a route's path,
  ``"/api/v1/projects/falcon/kb"``, reaches every route under it), or a function it names by its
  logical id (``ReadsFunction``) or its folder (``functions/reads``). The paths a ``conftest.py``
  writes count for the tests beside and below it (its fixtures call them); its imports do not
  (every fixture's imports would make every test reach nearly every module).

So ``domain/bindings.py``, which no test imports, is reached by ``tests/unit/test_bindings_routes.py``
through ``"/knowledge/project-map"`` → ``functions/bindings/app.py`` → ``edge/routes/bindings.py``
→ ``domain/bindings.py``.

**The rules**, from each changed file:

- a test file (``tests/**/test_*.py``): itself;
- a Python file of the product (``layers/common/knowledge_service``, ``functions/``,
  ``devstack``, ``local_engine``, ``kb``) or a helper of ``tests/``: the test files nearest to
  it that start no local stack or browser of their own (``FAR``: ``tests/e2e/``,
  ``tests/browser/``, and ``tests/devstack/`` unless the change is the stack's), those that reach
  it in the fewest steps or one more (a module most routes import, ``edge/access.py``, is reached
  by nearly every test in a few steps; the nearest are the ones that test it; ``--every``,
  ``make check CHECK_REACH=every``: all that reach it); when none does, the far files that reach
  it; when none of those either, it says so (on stderr) and runs the tier the file belongs to
  (``TIERS``);
- a file of the console (``functions/console/static/``, ``console.lock.json``): the browser tier
  (``tests/browser/``) and the console's unit files (``tests/unit/test_console_*.py``);
- ``template.yaml``: the unit files that read the template, and for each function whose
  resource changed (an ``Api`` event, its environment, its policies) the test files nearest to
  its door, as for a change to the door itself;
- a tier's ``conftest.py``: every test file beside and below it; the root ``tests/conftest.py``,
  ``pyproject.toml``, ``uv.lock`` or a function's other files (``requirements.txt``): every test
  file of ``tests/unit/`` (they build on all of these).

``make test`` stays the net: a test that reaches a changed file only from far away runs there.

A product module is never left with no test: ``tests/unit/test_changed.py`` holds that every one
is reached or has its tier, and that a one-line change to five of them selects a test that fails
when the change breaks what it does.

Usage: ``python -m tests.changed [BASE]`` prints one path a line, nothing when nothing did;
``python -m tests.changed --reach PATH`` prints the test files that reach ``PATH``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from devstack.template import Template

ROOT = Path(__file__).resolve().parents[1]
WIDE = ("pyproject.toml", "uv.lock")
TEMPLATE = "template.yaml"
CONSOLE = "functions/console/static/"
LAYER = "layers/common/"
PACKAGES = ("knowledge_service", "devstack", "local_engine", "kb", "benchmarks", "tests")
"""Where the project's Python lives: ``knowledge_service`` under ``layers/common/``, the rest at the root."""

TIERS = (
    (LAYER, ("tests/unit/",)),
    ("functions/", ("tests/unit/",)),
    ("devstack/", ("tests/devstack/",)),
    ("local_engine/", ("tests/engine/", "tests/contract/")),
    ("kb/", ("tests/pages/",)),
    ("tests/pages/", ("tests/pages/",)),
    ("tests/contract/", ("tests/contract/",)),
    ("tests/devstack/", ("tests/devstack/",)),
    ("tests/browser/", ("tests/browser/",)),
    ("tests/e2e/", ("tests/e2e/",)),
    ("tests/", ("tests/unit/",)),
)
"""The tier a file belongs to, by the folder it is in (the first that matches): what runs when
no test file reaches it."""

API_PATH = re.compile(r"""(?:["'}]|\d)(/(?:knowledge|modules|settings|api/v1|v|mcp|console)\b[^\s"'?#\\]*)""")
"""A path of the API written in a test: after a quote, an f-string's ``}`` or a URL's port."""


def _git(*args: str) -> list[str]:
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line]


def changed_files(base: str) -> set[str]:
    files = set(_git("diff", "--name-only", "--merge-base", base))
    files |= set(_git("diff", "--name-only", "HEAD"))
    files |= set(_git("ls-files", "--others", "--exclude-standard"))
    return {f for f in files if (ROOT / f).exists()}


def _resources(text: str) -> dict[str, Any]:
    from cfn_tools import load_yaml

    loaded = load_yaml(text) if text.strip() else {}
    return dict(loaded.get("Resources") or {}) if isinstance(loaded, dict) else {}


def template_selection(base: str, reach: Reach, say: list[str]) -> set[str]:
    """The tests for a change to ``template.yaml``: the unit files that read it, and the tests of
    each function whose resource the change touched (through its door)."""
    merge_base = _git("merge-base", base, "HEAD")[0]
    before = subprocess.run(
        ["git", "show", f"{merge_base}:{TEMPLATE}"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout
    old, new = _resources(before), _resources((ROOT / TEMPLATE).read_text())
    chosen = {t for t in test_files() if t.startswith("tests/unit/") and READS_TEMPLATE.search((ROOT / t).read_text())}
    for name in sorted(old.keys() | new.keys()):
        resource = new.get(name) or old.get(name) or {}
        if old.get(name) == new.get(name) or resource.get("Type") != "AWS::Serverless::Function":
            continue
        door = f"{str((resource.get('Properties') or {}).get('CodeUri', '')).rstrip('/')}/app.py"
        if (ROOT / door).is_file():
            say.append(f"{TEMPLATE}: {name} changed; the tests nearest to {door}")
            chosen |= select_for(door, reach, say)
    return chosen


READS_TEMPLATE = re.compile(r"template\.yaml|\bTemplate\(|devstack\.template")
"""A test file that reads the template itself (its resources, routes, alarms, environment)."""


def module_of(path: str) -> str | None:
    """The dotted name a ``.py`` file is imported by, or None (a door, a file outside the packages)."""
    if not path.endswith(".py"):
        return None
    relative = path.removeprefix(LAYER)
    if not relative.startswith(tuple(f"{p}/" for p in PACKAGES)):
        return None
    parts = relative.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def file_of(module: str) -> str | None:
    """The file (relative to the root) that ``module`` is, or None when it is not the project's."""
    parts = module.split(".")
    if parts[0] not in PACKAGES:
        return None
    base = (LAYER if parts[0] == "knowledge_service" else "") + "/".join(parts)
    for candidate in (f"{base}.py", f"{base}/__init__.py"):
        if (ROOT / candidate).is_file():
            return candidate
    return None


def _segments(path: str) -> list[str]:
    return [s for s in path.strip("/").split("/") if s]


def _is_parameter(segment: str) -> bool:
    return segment.startswith("{") and segment.endswith("}")


@dataclass(frozen=True)
class Route:
    path: str  # API Gateway form: /knowledge/items/{id}, /api/v1/projects/{id}/kb/pages/{path+}
    door: str  # functions/<folder>/app.py


def _matches(mention: list[str], route: list[str]) -> bool:
    """``mention`` names ``route``: the same path, or (two segments or more) the start of it; a
    parameter on either side matches any one segment, a greedy ``{path+}`` the rest."""
    if len(mention) < 2 and len(mention) != len(route):
        return False
    for index, written in enumerate(mention):
        if index >= len(route):
            return False
        declared = route[index]
        if declared.endswith("+}"):
            return True
        if not (_is_parameter(declared) or _is_parameter(written) or written == declared):
            return False
    return True


@dataclass
class Graph:
    """What each of the project's Python files reaches directly."""

    root: Path = ROOT
    edges: dict[str, set[str]] = field(default_factory=dict)

    @cached_property
    def template(self) -> Template:
        return Template(path=self.root / "template.yaml")

    @cached_property
    def routes(self) -> list[Route]:
        return [
            Route(r.path, f"{r.handler_dir.relative_to(self.root).as_posix()}/app.py") for r in self.template.routes()
        ]

    @cached_property
    def doors_by_name(self) -> dict[str, str]:
        """Each door by the names a test calls its function: logical id and folder."""
        names = {}
        for folder, logical_id in self.template.function_of_folder().items():
            names[logical_id] = names[f"functions/{folder}"] = f"functions/{folder}/app.py"
        return names

    def doors_called_in(self, text: str) -> set[str]:
        doors: set[str] = set()
        for mention in {m.rstrip("/") for m in API_PATH.findall(text)}:
            written = _segments(re.sub(r"\{[^}]*\}", "{}", mention))
            doors.update(r.door for r in self.routes if _matches(written, _segments(r.path)))
        for name, door in self.doors_by_name.items():
            if re.search(rf"\b{re.escape(name)}\b", text):
                doors.add(door)
        return doors

    def add(self, path: str) -> None:
        text = (self.root / path).read_text()
        reached = imports_of(path, text)
        if path.startswith("functions/") and path.endswith("/app.py"):
            reached |= _door_targets(text)
        name = Path(path).name
        if path.startswith("tests/") and (name.startswith("test_") or name == "conftest.py"):
            reached |= self.doors_called_in(text)
        self.edges[path] = {r for r in reached if r != path}

    def distances(self, start: str, conftests: Iterable[str] = ()) -> dict[str, int]:
        """Every file ``start`` reaches, with the fewest steps it takes (itself: 0); a test's
        ``conftest.py`` files add the doors their paths call (one step, as the test's own), not
        their imports."""
        steps = {start: 0}
        frontier = [start]
        for conftest in conftests:
            for door in self.edges.get(conftest, ()):
                if door.startswith("functions/") and door not in steps:
                    steps[door] = 1
                    frontier.append(door)
        while frontier:  # breadth first: a file's steps are its fewest
            following = []
            for here in frontier:
                for nxt in self.edges.get(here, ()):
                    if nxt not in steps:
                        steps[nxt] = steps[here] + 1
                        following.append(nxt)
            frontier = following
        return steps


def _door_targets(text: str) -> set[str]:
    """What a door's one call includes: its router or its bus handler."""
    found = set()
    for kind, name in re.findall(r"door\.(api|bus)\(\s*[\"'](\w+)[\"']", text):
        module = f"knowledge_service.edge.{'routes' if kind == 'api' else 'bus'}.{name}"
        if (target := file_of(module)) is not None:
            found.add(target)
    return found


def _package_of(path: str) -> str:
    module = module_of(path) or ""
    return module if path.endswith("__init__.py") else module.rpartition(".")[0]


def imports_of(path: str, text: str) -> set[str]:
    """The project's files ``path`` imports (and the packages' ``__init__`` each import runs)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    package = _package_of(path)
    modules: set[str] = set()
    skipped = _type_checking_only(tree)
    for node in ast.walk(tree):
        if id(node) not in skipped:
            modules |= _imported(node, package)
    files = set()
    for module in modules:
        parts = module.split(".")
        for end in range(1, len(parts) + 1):  # a.b.c runs a/__init__.py and a/b/__init__.py first
            if (target := file_of(".".join(parts[:end]))) is not None:
                files.add(target)
    return files


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The nodes under an ``if TYPE_CHECKING:`` (imports that never run)."""
    return {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _is_type_checking(node.test)
        for child in node.body
        for n in ast.walk(child)
    }


def _imported(node: ast.AST, package: str) -> set[str]:
    """The modules one node imports: ``import a.b``, ``from .c import d`` (resolved against
    ``package``), or a package's ``__init__`` loading its modules by name."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parent = package.split(".")
            parent = parent[: len(parent) - (node.level - 1)] if node.level > 1 else parent
            base = ".".join([*parent, base] if base else parent)
        return {base, *(f"{base}.{alias.name}" for alias in node.names)}
    if isinstance(node, ast.Call) and _loads_its_own_modules(node):
        return _modules_under(package)
    return set()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _loads_its_own_modules(call: ast.Call) -> bool:
    """``import_module(f"{__name__}.…")``: a package loading its modules by name."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name != "import_module" or not call.args or not isinstance(call.args[0], ast.JoinedStr):
        return False
    first = call.args[0].values[0] if call.args[0].values else None
    return isinstance(first, ast.FormattedValue) and getattr(first.value, "id", "") == "__name__"


def _modules_under(package: str) -> set[str]:
    folder = file_of(package)
    if folder is None:
        return set()
    directory = (ROOT / folder).parent
    return {f"{package}.{p.stem}" for p in directory.glob("*.py") if p.stem != "__init__"}


def python_files(root: Path = ROOT) -> list[str]:
    """The project's Python files the graph is made of."""
    found = []
    for folder in ("layers/common/knowledge_service", "functions", *PACKAGES[1:]):
        for path in (root / folder).rglob("*.py"):
            relative = path.relative_to(root).as_posix()
            if "/static/" not in relative and "__pycache__" not in relative:
                found.append(relative)
    return sorted(found)


def build_graph(root: Path = ROOT) -> Graph:
    graph = Graph(root)
    for path in python_files(root):
        graph.add(path)
    return graph


def _conftests_of(test: str) -> list[str]:
    """The ``conftest.py`` files of ``test``'s tier that pytest loads for it (its folder's and its
    parents' up to the tier's; the root ``tests/conftest.py`` serves every tier and calls no route
    for them)."""
    found = []
    folder = Path(test).parent
    while folder.as_posix().startswith("tests/"):
        candidate = folder / "conftest.py"
        if (ROOT / candidate).is_file():
            found.append(candidate.as_posix())
        folder = folder.parent
    return found


def test_files() -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("tests/**/test_*.py"))


@dataclass
class Reach:
    """Which test files reach each file of the project, and in how many steps."""

    graph: Graph

    @cached_property
    def by_test(self) -> dict[str, dict[str, int]]:
        return {test: self.graph.distances(test, _conftests_of(test)) for test in test_files()}

    def tests_reaching(self, path: str) -> dict[str, int]:
        return {test: steps[path] for test, steps in self.by_test.items() if path in steps}


def tier_of(path: str) -> list[str]:
    for prefix, folders in TIERS:
        if path.startswith(prefix):
            return [t for t in test_files() if t.startswith(folders)]
    return []


NEAR = 1
"""How many steps beyond the nearest a test may reach a changed file and still be chosen."""


ENGINE_TIERS = ("tests/engine/", "tests/contract/")
"""The engine's own tiers: they exercise its rules through its HTTP API, many imports away from
the module that holds a rule, so a change to the engine runs every one of them that reaches it."""


FAR = ("tests/e2e/", "tests/browser/", "tests/devstack/")
"""The tiers whose files start a local stack (or a browser): a minute or more a file on two cores.
A change reaches them through a route's path as near as the route's own unit tests do, so they are
chosen only when nothing nearer reaches it (the console's files pick the browser tier by their own
rule, and a change to ``devstack/`` counts the stack's own tier as near); ``make test`` runs them all."""


def _is_far(test: str, path: str) -> bool:
    return test.startswith(FAR) and not (test.startswith("tests/devstack/") and path.startswith("devstack/"))


def select_for(path: str, reach: Reach, say: list[str], *, every: bool = False) -> set[str]:
    """The test files for one changed product or helper file (the second rule above): those that
    reach it in the fewest steps, and in one more (``every``: all that reach it), far files only
    when no near one does; for a module of the engine, every file of its own tiers that reaches it too."""
    reaching = reach.tests_reaching(path)
    near = {t: n for t, n in reaching.items() if not _is_far(t, path)}
    chosen = near or reaching
    if chosen:
        if not near:
            say.append(f"{path}: only files that start a local stack reach it; running those ({len(reaching)})")
        nearest = min(chosen.values())
        engine = {t for t in near if t.startswith(ENGINE_TIERS)} if path.startswith("local_engine/") else set()
        return engine | {t for t, n in chosen.items() if every or n <= nearest + NEAR}
    tier = tier_of(path)
    say.append(f"{path}: no test file reaches it; running its tier ({len(tier)} files)")
    return set(tier)


def is_product(path: str) -> bool:
    """A Python file of the product or a helper of the tests (what the graph selects for)."""
    return (
        path.endswith(".py")
        and Path(path).name != "conftest.py"
        and (
            path.startswith((LAYER, "functions/", "devstack/", "local_engine/", "kb/"))
            or (path.startswith("tests/") and not Path(path).name.startswith("test_"))
        )
    )


def selection(base: str, say: list[str] | None = None, *, every: bool = False) -> list[str]:
    say = [] if say is None else say
    tests = test_files()
    chosen: set[str] = set()
    graph: list[Reach] = []  # built once, when a file needs it

    def reach() -> Reach:
        if not graph:
            graph.append(Reach(build_graph()))
        return graph[0]

    for name in sorted(changed_files(base)):
        chosen |= _selected_by(name, base, tests, reach, say, every=every)
    return sorted(chosen)


def _selected_by(
    name: str, base: str, tests: list[str], reach: Callable[[], Reach], say: list[str], *, every: bool
) -> set[str]:
    """The test files one changed file selects (the rules above, in their order)."""
    if name in tests:
        return {name}
    if name.startswith(CONSOLE) or name == "console.lock.json":
        return {t for t in tests if t.startswith("tests/browser/") or Path(t).name.startswith("test_console_")}
    if Path(name).name == "conftest.py" and name != "tests/conftest.py":
        folder = Path(name).parent.as_posix() + "/"
        return {t for t in tests if t.startswith(folder)}
    if name == TEMPLATE:
        return template_selection(base, reach(), say)
    if name in WIDE or name == "tests/conftest.py" or (name.startswith("functions/") and not is_product(name)):
        return {t for t in tests if t.startswith("tests/unit/")}
    if is_product(name):
        return select_for(name, reach(), say, every=every)
    return set()


def main(argv: list[str]) -> int:
    say: list[str] = []
    every = "--every" in argv
    argv = [a for a in argv if a != "--every"]
    if argv[:1] == ["--reach"]:
        reach = Reach(build_graph())
        for path in argv[1:]:
            print("\n".join(sorted(select_for(path, reach, say, every=every))))
    else:
        print("\n".join(selection(argv[0] if argv else "main", say, every=every)))
    for line in say:
        print(f"make check: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
