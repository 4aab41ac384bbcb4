"""Cold-start import cost: each function's module beside the third-party libraries it needs.

For each function, in fresh interpreters with the function's directory first on the path
(as Lambda puts /var/task first):

1. ``import app`` once, to learn every third-party module it pulls in (``sys.modules``,
   less the standard library and this project's own packages);
2. ``python -X importtime -c "import app"``: the module's cumulative import time;
3. ``python -X importtime`` importing exactly those third-party modules and nothing else.

The difference is what this project's own code adds to a cold start. Each figure is the
median of several runs.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

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
_IMPORT_ALL = (
    "import importlib, json, sys\n"
    "for name in json.loads(sys.argv[1]):\n"
    "    try:\n"
    "        importlib.import_module(name)\n"
    "    except Exception:\n"
    "        pass\n"
)


def _run(function_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(function_dir)}
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, check=True)


def _depth0_cumulative_us(stderr: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for line in stderr.splitlines():
        match = _LINE.match(line)
        if match and len(match.group(3)) == 1:
            found[match.group(4)] = int(match.group(2))
    return found


def measure(runs: int = 7) -> list[dict[str, object]]:
    template = Template()
    rows = []
    for logical_id, function in template.functions().items():
        props = function["Properties"]
        function_dir = template.path.parent / props["CodeUri"]
        module = props["Handler"].rsplit(".", 1)[0]
        third_party = _run(function_dir, "-c", _LIST_MODULES.format(module=module, own=set(OWN_PACKAGES))).stdout
        module_us, library_us = [], []
        for _ in range(runs):
            whole = _depth0_cumulative_us(_run(function_dir, "-X", "importtime", "-c", f"import {module}").stderr)
            module_us.append(whole[module])
            libs = _depth0_cumulative_us(
                _run(function_dir, "-X", "importtime", "-c", _IMPORT_ALL, third_party.strip()).stderr
            )
            library_us.append(sum(v for k, v in libs.items() if k.split(".")[0] not in {"importlib", "json"}))
        module_ms = statistics.median(module_us) / 1000
        library_ms = statistics.median(library_us) / 1000
        rows.append(
            {
                "function": logical_id,
                "module_import_ms": round(module_ms, 1),
                "third_party_import_ms": round(library_ms, 1),
                "project_overhead_ms": round(module_ms - library_ms, 1),
                "third_party_modules": len(json.loads(third_party)),
                "runs": runs,
            }
        )
    return rows
