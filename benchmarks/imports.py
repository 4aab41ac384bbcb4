"""Cold-start import cost: each function's module beside the third-party libraries it needs.

Measured in a separate virtual environment holding the layer's dependencies only, at the
versions this checkout's lock installed (``.bench-floor/``, made once with uv): the dev
environment's extras (click, rich and pygments behind httpx's CLI) would inflate the floor.
Its site-packages are compiled to bytecode once, as ``sam build`` (pip) ships the layer's
dependencies (pip compiles what it installs); the project's own code is imported from
a fresh copy of its source with no bytecode, as ``sam build`` ships the layer
(``layers/common/``, copied as it is) — so its share includes compiling it.

For each function, in fresh interpreters with the function's directory first on the path
(as Lambda puts /var/task first) and the layer's code (/opt/python) after it:

1. ``import app`` once, to learn every third-party module it pulls in (``sys.modules``,
   less the standard library and this project's own packages);
2. ``python -X importtime``: the module's cumulative import time (the layer from source);
3. the same with the layer's bytecode beside its source, compiled in ``unchecked-hash`` mode
   as ``layers/common/Makefile`` ships it for ``sam build`` (the shipped figure; 2 is what a
   layer shipped as source would cost, as it did before 2026-12-01);
4. ``python -X importtime`` importing exactly those third-party modules and nothing else
   (the floor), each with ``__import__`` as an ``import`` statement does;
5. the same with the cyclic collector off, as a door runs the rest of init.

All start from the same interpreter state (``importlib``, ``json`` and ``sys`` already
imported). 2 to 5 alternate, round after round, so a busy machine slows them alike; each is
reported as its min and median, and the ratio of the medians is the function's import
against its floor (its own code's share is the difference, shown as 0 when noise puts it
below). A door turns the collector off for init, so the libraries the project imports after
it pay no collections while the floor's do: a function can import in less than its floor.
5 is the floor without them, and the function's import over it bounds what the project's
own code costs.

``python -m benchmarks.imports --against <another checkout>`` times this checkout's shipped
import, the other's and the floor in every round instead (:func:`compare`): on a machine
whose speed drifts, the way to tell whether a change moved an import.

Where ``strace`` is on the machine, one more run each counts the 16 KiB anonymous maps the
function's import and its floor make: CPython 3.11's frame-stack chunks
(python/cpython#142183). A library whose module code runs at a call depth where calls cross
a chunk's edge maps and unmaps one each time; a door that loads its libraries from the top of
the stack (``knowledge_service/door.py``) makes about as many as its floor.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from devstack.template import Template

OWN_PACKAGES = frozenset({"knowledge_service", "app"})
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")
_LIST_MODULES = (
    "import sys, json\n"
    "before = set(sys.modules)\n"
    "import {module}\n"
    "own = {own!r}\n"
    "names = [n for n in sys.modules if n not in before and n.split('.')[0] not in own\n"
    "         and n.split('.')[0] not in sys.stdlib_module_names and not n.startswith('_')]\n"
    "print(json.dumps(sorted(names)))\n"
)
_PRELUDE = "import importlib, json, sys\n"
_IMPORT_MODULE = _PRELUDE + "import {module}\n"
# ``__import__``, not ``importlib.import_module``: the latter imports through importlib's Python
# code, which ``-X importtime`` does not time, so each name's own module body went unreported
# (only what it imports in turn was): the floor came out ~4 % short of the same loop timed by
# the clock (``docs/benchmarks.md``). ``__import__`` is the path an ``import`` statement takes,
# as in the function's own import.
_IMPORT_LOOP = (
    "for name in json.loads(sys.argv[1]):\n    try:\n        __import__(name)\n    except Exception:\n        pass\n"
)
_IMPORT_ALL = _PRELUDE + _IMPORT_LOOP
# The same with the cyclic collector off, as a door runs the rest of init (knowledge_service/door.py):
# what the project costs over its libraries when neither pays for collections.
_IMPORT_ALL_COLLECTOR_OFF = _PRELUDE + "import gc\ngc.disable()\n" + _IMPORT_LOOP
_NOT_MEASURED = frozenset({"importlib", "json", "gc"})


FLOOR_DIR = Path(".bench-floor")
LAYER_DIST = "knowledge-service-common"


def layer_pins() -> list[str]:
    """The layer's dependencies, transitively (its extras followed), at the installed versions."""
    from importlib import metadata

    from packaging.requirements import Requirement

    seen: dict[str, tuple[str, set[str]]] = {}
    todo: list[tuple[str, tuple[str, ...]]] = [(LAYER_DIST, ())]
    while todo:
        name, extras = todo.pop()
        dist = metadata.distribution(name)
        key = dist.metadata["Name"].lower().replace("_", "-")
        if key in seen and set(extras) <= seen[key][1]:
            continue
        seen[key] = (dist.version, (seen[key][1] if key in seen else set()) | set(extras))
        for raw in dist.requires or []:
            requirement = Requirement(raw)
            markers = [{"extra": e} for e in extras] or [{"extra": ""}]
            if requirement.marker and not any(requirement.marker.evaluate(m) for m in markers):
                continue
            todo.append((requirement.name, tuple(requirement.extras)))
    return [f"{name}=={version}" for name, (version, _) in sorted(seen.items()) if name != LAYER_DIST]


def floor_python() -> Path:
    """The separate environment's interpreter, made (or brought up to the pins) with uv."""
    python = FLOOR_DIR / "bin" / "python"
    pins = layer_pins()
    marker = FLOOR_DIR / "pins.txt"
    wanted = "\n".join([*pins, "compiled"])
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python
    uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(FLOOR_DIR)], check=True)
    # --compile-bytecode: as pip installs the layer's dependencies for ``sam build``
    subprocess.run([uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", str(python), *pins], check=True)
    marker.write_text(wanted)
    return python


def _run(python: Path, function_dir: Path, layer: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(function_dir), str(layer)]),
        "PYTHONDONTWRITEBYTECODE": "1",  # the project's source stays uncompiled, round after round
    }
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    return subprocess.run([str(python), *args], env=env, capture_output=True, text=True, check=True)


def deployed_copy(root: Path, into: Path, *, compiled: bool = False) -> Path:
    """The layer's code as source only, without any ``__pycache__`` (``compiled``: with its
    unchecked-hash bytecode too, as ``layers/common/Makefile`` ships it for ``sam build``)."""
    layer = into / ("opt-python-compiled" if compiled else "opt-python")
    shutil.copytree(
        root / "layers" / "common" / "knowledge_service",
        layer / "knowledge_service",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    if compiled:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", str(layer)],
            check=True,
            capture_output=True,
        )
    return layer


_STACK_CHUNK_MAP = "mmap(NULL, 16384, "  # DATA_STACK_CHUNK_SIZE in CPython 3.11's pystate.c


def stack_chunk_maps(python: Path, function_dir: Path, layer: Path, *args: str) -> int | None:
    """The 16 KiB anonymous maps one run makes (``strace``); ``None`` where strace is missing."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    with tempfile.NamedTemporaryFile(mode="r", suffix=".strace") as trace:
        _run(Path(strace), function_dir, layer, "-f", "-qq", "-e", "trace=mmap", "-o", trace.name, str(python), *args)
        return sum(1 for line in trace if line.startswith(_STACK_CHUNK_MAP) or f" {_STACK_CHUNK_MAP}" in line)


def _depth0_cumulative_us(stderr: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for line in stderr.splitlines():
        match = _LINE.match(line)
        if match and len(match.group(3)) == 1:
            found[match.group(4)] = int(match.group(2))
    return found


def _function_copy(root: Path, props: dict[str, Any], into: Path) -> Path:
    """The function's own folder as ``sam build`` ships it (no bytecode), as Lambda's /var/task."""
    shutil.copytree(root / props["CodeUri"], into, ignore=shutil.ignore_patterns("__pycache__"))
    return into


def _third_party(python: Path, function_dir: Path, layer: Path, module: str) -> str:
    """The JSON list of third-party modules ``import <module>`` loads."""
    listing = _LIST_MODULES.format(module=module, own=set(OWN_PACKAGES))
    return _run(python, function_dir, layer, "-c", listing).stdout.strip()


def _module_us(python: Path, function_dir: Path, layer: Path, module: str) -> int:
    """One fresh interpreter's ``import <module>``, cumulative, by ``-X importtime``."""
    timed = _run(python, function_dir, layer, "-X", "importtime", "-c", _IMPORT_MODULE.format(module=module))
    return _depth0_cumulative_us(timed.stderr)[module]


def _floor_us(python: Path, function_dir: Path, layer: Path, third_party: str, script: str = _IMPORT_ALL) -> int:
    """One fresh interpreter importing those third-party modules alone, summed."""
    timed = _run(python, function_dir, layer, "-X", "importtime", "-c", script, third_party)
    return sum(v for k, v in _depth0_cumulative_us(timed.stderr).items() if k.split(".")[0] not in _NOT_MEASURED)


def measure(runs: int = 11, only: Iterable[str] = ()) -> list[dict[str, object]]:
    template = Template()
    python = floor_python()
    wanted = set(only)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-imports-") as scratch:
        layer = deployed_copy(template.path.parent, Path(scratch))
        compiled = deployed_copy(template.path.parent, Path(scratch), compiled=True)
        for logical_id, function in template.functions().items():
            if wanted and logical_id not in wanted:
                continue
            props = function["Properties"]
            function_dir = _function_copy(template.path.parent, props, Path(scratch) / logical_id)
            module = props["Handler"].rsplit(".", 1)[0]
            third_party = _third_party(python, function_dir, layer, module)
            module_us: list[int] = []
            compiled_us: list[int] = []
            library_us: list[int] = []
            quiet_us: list[int] = []
            for _ in range(runs):  # alternating: the module, then its floor, round after round
                module_us.append(_module_us(python, function_dir, layer, module))
                compiled_us.append(_module_us(python, function_dir, compiled, module))
                library_us.append(_floor_us(python, function_dir, layer, third_party))
                quiet_us.append(_floor_us(python, function_dir, layer, third_party, _IMPORT_ALL_COLLECTOR_OFF))
            chunk_maps = stack_chunk_maps(python, function_dir, compiled, "-c", _IMPORT_MODULE.format(module=module))
            floor_chunk_maps = stack_chunk_maps(python, function_dir, layer, "-c", _IMPORT_ALL, third_party)
            module_ms, library_ms = statistics.median(module_us) / 1000, statistics.median(library_us) / 1000
            compiled_ms = statistics.median(compiled_us) / 1000
            quiet_ms = statistics.median(quiet_us) / 1000
            rows.append(
                {
                    "function": logical_id,
                    "module_import_ms": round(module_ms, 1),
                    "module_import_min_ms": round(min(module_us) / 1000, 1),
                    "third_party_import_ms": round(library_ms, 1),
                    "third_party_import_min_ms": round(min(library_us) / 1000, 1),
                    "over_floor": round(module_ms / library_ms, 3) if library_ms else None,
                    "project_overhead_ms": round(max(0.0, module_ms - library_ms), 1),
                    "compiled_layer_import_ms": round(compiled_ms, 1),
                    "compiled_layer_import_min_ms": round(min(compiled_us) / 1000, 1),
                    "compiled_layer_over_floor": round(compiled_ms / library_ms, 3) if library_ms else None,
                    "third_party_collector_off_ms": round(quiet_ms, 1),
                    "compiled_layer_over_collector_off_floor": round(compiled_ms / quiet_ms, 3) if quiet_ms else None,
                    "stack_chunk_maps": chunk_maps,
                    "floor_stack_chunk_maps": floor_chunk_maps,
                    "third_party_modules": len(json.loads(third_party)),
                    "runs": runs,
                    "environment": str(FLOOR_DIR),
                }
            )
    return rows


def compare(other: Path, runs: int = 11, only: Iterable[str] = ()) -> list[dict[str, object]]:
    """This checkout's shipped import beside ``other``'s (another checkout, ``before``) and the
    floor, all three in each round, so a slower or faster spell of the machine falls on both
    trees alike: the way to tell whether a change moved a function's import."""
    template = Template()
    here = template.path.parent
    python = floor_python()
    wanted = set(only)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-imports-") as scratch:
        trees = {"before": Path(scratch) / "before", "now": Path(scratch) / "now"}
        layers = {
            name: deployed_copy(root, trees[name], compiled=True) for name, root in (("before", other), ("now", here))
        }
        for logical_id, function in template.functions().items():
            if wanted and logical_id not in wanted:
                continue
            props = function["Properties"]
            module = props["Handler"].rsplit(".", 1)[0]
            dirs = {
                name: _function_copy(root, props, trees[name] / logical_id)
                for name, root in (("before", other), ("now", here))
            }
            third_party = _third_party(python, dirs["now"], layers["now"], module)
            samples: dict[str, list[int]] = {"before": [], "now": [], "floor": []}
            for _ in range(runs):
                for name in ("before", "now"):
                    samples[name].append(_module_us(python, dirs[name], layers[name], module))
                samples["floor"].append(_floor_us(python, dirs["now"], layers["now"], third_party))
            median = {name: statistics.median(values) / 1000 for name, values in samples.items()}
            row: dict[str, object] = {"function": logical_id, "runs": runs}
            for name, values in samples.items():
                row[f"{name}_ms"] = round(median[name], 1)
                row[f"{name}_min_ms"] = round(min(values) / 1000, 1)
            row["before_over_floor"] = round(median["before"] / median["floor"], 3)
            row["now_over_floor"] = round(median["now"] / median["floor"], 3)
            rows.append(row)
    return rows


def _main(argv: list[str]) -> None:
    if argv[:1] == ["--against"]:  # python -m benchmarks.imports --against ../other-checkout [Function ...]
        for row in compare(Path(argv[1]), only=argv[2:]):
            print(
                f"{row['function']:<22} before {row['before_ms']:>7} (min {row['before_min_ms']:>7})"
                f"  now {row['now_ms']:>7} (min {row['now_min_ms']:>7})"
                f"  floor {row['floor_ms']:>7} (min {row['floor_min_ms']:>7})"
                f"  x floor: before {row['before_over_floor']}, now {row['now_over_floor']}",
                flush=True,
            )
        return
    for row in measure(only=argv):
        print(
            f"{row['function']:<22} module {row['module_import_ms']:>7} (min {row['module_import_min_ms']:>7})"
            f"  floor {row['third_party_import_ms']:>7} (min {row['third_party_import_min_ms']:>7})"
            f"  x{row['over_floor']}  with the layer's bytecode {row['compiled_layer_import_ms']:>7}"
            f" (min {row['compiled_layer_import_min_ms']:>7}) x{row['compiled_layer_over_floor']}"
            f"  floor, collector off {row['third_party_collector_off_ms']:>7}"
            f" x{row['compiled_layer_over_collector_off_floor']}"
            f"  16 KiB stack-chunk maps {row['stack_chunk_maps']} (floor {row['floor_stack_chunk_maps']})",
            flush=True,
        )


if __name__ == "__main__":  # python -m benchmarks.imports [--against <checkout>] [Function ...]
    _main(sys.argv[1:])
