"""A function imports only what its routes use, and no X-Ray SDK unless it traces."""

from __future__ import annotations

import ast
import json
import ssl
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any, get_args

import httpcore
import pytest

from devstack.template import Template
from knowledge_service import environment
from knowledge_service.door import Library, traced
from knowledge_service.environment import tracing_on
from knowledge_service.upstream.client import connection_pool

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


def test_given_the_status_function_when_imported_then_it_loads_no_feed_domain() -> None:
    # GET /knowledge/status reads one count from the dead letters; that route imports the feed
    # domain when it runs, so the function's other routes never load it.
    loaded = _loaded_by("status", AWS_LAMBDA_FUNCTION_NAME="status", POWERTOOLS_TRACE_DISABLED="true")
    feed = {
        name
        for name in loaded
        if name.startswith(("knowledge_service.domain.feed", "knowledge_service.domain.findings"))
        or name
        in {
            "knowledge_service.storage.dead_letter_store",
            "knowledge_service.storage.feed_store",
            "knowledge_service.storage.findings_store",
        }
    }
    assert "knowledge_service.edge.routes.status" in loaded
    assert feed == set()


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
    monkeypatch.setattr(environment, "tracing_on", lambda: tracing_on({}))

    def handler(event: object, context: object) -> object:
        return event

    assert traced(handler) is handler


def _pool_of(http: object) -> Any:
    return http._transport._pool  # type: ignore[attr-defined]


def test_given_a_plain_http_endpoint_when_the_pool_connects_then_no_ssl_context_is_made() -> None:
    pool = _pool_of(connection_pool(5.0))
    assert pool._ssl_context is None  # building the pool made none
    pool.create_connection(httpcore.Origin(b"http", b"forager.local", 8080))
    assert pool._ssl_context is None


def test_given_an_https_endpoint_when_the_pool_connects_then_it_verifies_with_one_shared_context() -> None:
    pool = _pool_of(connection_pool(5.0))
    first = pool.create_connection(httpcore.Origin(b"https", b"forager.example", 443))
    context = pool._ssl_context
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    pool.create_connection(httpcore.Origin(b"https", b"other.example", 443))
    assert pool._ssl_context is context  # made once per container, on the first https connection
    assert first._ssl_context is context


def test_given_a_door_when_it_loads_then_init_runs_without_collection_until_end_of_init_freezes_it() -> None:
    # Init makes only what lives as long as the container: no collection walks it, then or later.
    script = (
        "import gc, aws_lambda_powertools, pydantic\n"
        "on_before = gc.isenabled()\n"
        "from knowledge_service import door\n"
        "on_during = gc.isenabled()\n"
        "frozen_during = gc.get_freeze_count()\n"
        "import boto3, knowledge_service.edge.resolver\n"
        "door.end_of_init()\n"
        "print(on_before, on_during, frozen_during, gc.isenabled(), gc.get_freeze_count())\n"
    )
    base = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "layers" / "common")}
    out = subprocess.run([sys.executable, "-c", script], env=base, capture_output=True, text=True, check=True).stdout
    on_before, on_during, frozen_during, on_after, frozen_after = out.split()
    assert (on_before, on_during, on_after) == ("True", "False", "True")
    assert frozen_during == "0" and int(frozen_after) > 10_000  # the libraries and the project's init


def _over_every_door(script: str) -> Any:
    """``script`` run in one fresh interpreter, handed the functions' folder; its JSON answer."""
    base = {"PATH": "/usr/bin:/bin", "POWERTOOLS_TRACE_DISABLED": "true"}
    out = subprocess.run(
        [sys.executable, "-c", script, str(ROOT / "functions")], env=base, capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)


def test_given_each_door_when_its_init_ends_then_the_collector_is_on_again_and_init_is_frozen() -> None:
    # The door turns collection off for init; a door that never called end_of_init would
    # leave its container without a cyclic collector for good.
    script = (
        "import gc, importlib.util, json, sys\n"
        "from pathlib import Path\n"
        "seen = {}\n"
        "for app in sorted(Path(sys.argv[1]).glob('*/app.py')):\n"
        "    frozen = gc.get_freeze_count()\n"
        "    gc.disable()  # what loading the door module does in a container's own process\n"
        "    spec = importlib.util.spec_from_file_location(f'app_{app.parent.name}', app)\n"
        "    spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "    seen[app.parent.name] = [gc.isenabled(), gc.get_freeze_count() > frozen]\n"
        "print(json.dumps(seen))\n"
    )
    seen = _over_every_door(script)
    assert len(seen) == len(list((ROOT / "functions").glob("*/app.py"))) > 10
    assert {name: state for name, state in seen.items() if state != [True, True]} == {}


def test_a_door_is_its_docstring_and_one_call_of_the_door_module() -> None:
    # The door module comes first of all (it turns the collector off before the first library
    # is loaded), and its one call does the whole of init in door.py's order.
    for app_file in sorted((ROOT / "functions").glob("*/app.py")):
        tree = ast.parse(app_file.read_text())
        docstring, door_import, handler = tree.body
        assert isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant), app_file
        assert ast.unparse(door_import) == "from knowledge_service import door", app_file
        assert isinstance(handler, ast.Assign) and ast.unparse(handler.targets[0]) == "lambda_handler", app_file
        assert isinstance(handler.value, ast.Call) and ast.unparse(handler.value.func) in {"door.api", "door.bus"}


_LIBRARIES = sorted(get_args(Library))  # what a door may preload
# Which of the libraries each first import came from: the module frames on the stack when the
# import system first looked for it (outermost first), one list per library the door loaded.
_FIRST_IMPORTS = (
    "import json, sys\n"
    "libraries = set(json.loads(sys.argv[1]))\n"
    "chains = {}\n"
    "class Watch:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name in libraries and name not in chains:\n"
    "            frame, chain = sys._getframe(1), []\n"
    "            while frame is not None:\n"
    "                if frame.f_code.co_name == '<module>':\n"
    "                    chain.append(frame.f_globals.get('__name__'))\n"
    "                frame = frame.f_back\n"
    "            chains[name] = chain[::-1]\n"
    "        return None\n"
    "sys.meta_path.insert(0, Watch())\n"
    "import app\n"
    "print(json.dumps(chains))\n"
)
# The door run with its preload emptied: the libraries it asked for, and those its function loads anyway.
_LOADED_WITHOUT_PRELOAD = (
    "import json, sys\n"
    "from knowledge_service import door\n"
    "asked = []\n"
    "def without(real):\n"
    "    def call(target, *, preload):\n"
    "        asked.extend(preload)\n"
    "        return real(target, preload=())\n"
    "    return call\n"
    "door.api, door.bus = without(door.api), without(door.bus)\n"
    "import app\n"
    "loaded = [name for name in json.loads(sys.argv[1]) if name in sys.modules]\n"
    "print(json.dumps([sorted(asked), loaded]))\n"
)


_FORAGER_CLIENT = {"httpcore", "httpx"}


@cache
def _talks_to_forager() -> frozenset[str]:
    """The functions' folders whose template policies read the FORAGER credential."""
    folders = set()
    for function in Template().functions().values():
        props = function["Properties"]
        if "forager/credential" in json.dumps(props.get("Policies", []), default=str):
            folders.add(Path(props["CodeUri"]).name)
    return frozenset(folders)


def test_the_functions_that_talk_to_forager_are_every_one_but_the_pages_verbs_bus_and_console_ones() -> None:
    doors = {path.parent.name for path in (ROOT / "functions").glob("*/app.py")}
    assert doors - _talks_to_forager() == {"verbs", "pages", "missions", "search", "kbarchive", "console"}


def _in_door(door: Path, script: str) -> Any:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(door.parent), "POWERTOOLS_TRACE_DISABLED": "true"}
    out = subprocess.run(
        [sys.executable, "-c", script, json.dumps(_LIBRARIES)],
        cwd=door.parent,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


@pytest.mark.parametrize("door", sorted((ROOT / "functions").glob("*/app.py")), ids=lambda p: p.parent.name)
def test_a_door_loads_exactly_the_libraries_its_function_uses_before_the_project(door: Path) -> None:
    # Imported from deep inside the project's own imports, a library runs its module code at a
    # call depth where CPython 3.11 maps and unmaps a frame-stack chunk over and over
    # (python/cpython#142183): ~1,000 mmap/munmap pairs per cold start (door.py). So each door
    # preloads its libraries first, from the top of the stack; this holds its list true both ways:
    # those its import loads, and the FORAGER client's wherever the function talks to FORAGER
    # (the template grants it the FORAGER credential), even where only a request loads them.
    asked, loaded = _in_door(door, _LOADED_WITHOUT_PRELOAD)
    uses = set(loaded) | (_FORAGER_CLIENT if door.parent.name in _talks_to_forager() else set())
    assert sorted(asked) == sorted(uses), door
    # and each is first imported from the door's own call: inside no module but the door's
    first_imports = _in_door(door, _FIRST_IMPORTS)
    assert set(first_imports) == uses, door
    assert {name: chain for name, chain in first_imports.items() if chain != ["__main__", "app"]} == {}, door


def test_given_the_reads_function_when_imported_then_no_model_is_built_and_only_its_forager_areas_exist() -> None:
    script = (
        "import json, sys\n"
        "import app\n"
        "from knowledge_service.base_model import Model\n"
        "def family(cls):\n"
        "    for sub in cls.__subclasses__():\n"
        "        yield sub\n"
        "        yield from family(sub)\n"
        "models_defined = len(list(family(Model)))\n"
        "built = sorted(c.__qualname__ for c in family(Model) if c.__pydantic_complete__)\n"
        "areas = sorted(n for n in sys.modules if n.startswith('knowledge_service.upstream.models.'))\n"
        "from knowledge_service.upstream import models\n"
        "status = models.EngineStatus.model_validate(\n"
        "    {'version': '1', 'schema_version': 1, 'search_backend': 'x', 'model_provider': 'y'})\n"
        "after = sorted(n for n in sys.modules if n.startswith('knowledge_service.upstream.models.'))\n"
        "print(json.dumps([models_defined > 10, built, areas, after, models.EngineStatus.__pydantic_complete__]))\n"
    )
    base = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(ROOT / "functions" / "reads"),
        "POWERTOOLS_TRACE_DISABLED": "true",
    }
    out = subprocess.run([sys.executable, "-c", script], env=base, capture_output=True, text=True, check=True).stdout
    some_defined, built, areas, after, status_built = json.loads(out)
    assert some_defined
    assert built == []  # every model the function defines is built on first use (base_model.Model)
    # Only the FORAGER areas its own answer models name (retrieval, evidence, entities) are
    # defined at import; the areas only other functions read never are.
    assert {area.rsplit(".", 1)[1] for area in areas} <= {
        "base",
        "conflicts",
        "entities",
        "retrieval",
        "search",
        "statements",
    }
    # the first answer of another area read defines that area, and builds only that model
    assert set(after) - set(areas) == {"knowledge_service.upstream.models.engine"}
    assert status_built is True


def test_every_model_any_function_defines_is_built_on_first_use() -> None:
    # Every door loaded in one interpreter; every pydantic model the package then holds,
    # written as a class or made with create_model, derives from base_model.Model (defer_build).
    script = (
        "import importlib.util, json, sys\n"
        "from pathlib import Path\n"
        "from pydantic import BaseModel\n"
        "for app in sorted(Path(sys.argv[1]).glob('*/app.py')):\n"
        "    spec = importlib.util.spec_from_file_location(f'app_{app.parent.name}', app)\n"
        "    spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "def family(cls):\n"
        "    for sub in cls.__subclasses__():\n"
        "        yield sub\n"
        "        yield from family(sub)\n"
        "ours = {c for c in family(BaseModel) if c.__module__.startswith('knowledge_service')}\n"
        "eager = sorted(c.__qualname__ for c in ours if not c.model_config.get('defer_build'))\n"
        "print(json.dumps([len(ours), eager]))\n"
    )
    defined, not_deferred = _over_every_door(script)
    assert defined > 150
    assert not_deferred == []
