"""The shipped layer's bytecode: `sam build` runs layers/common/Makefile, which compiles the
layer in unchecked-hash mode (so Lambda, on a read-only /opt, never compiles it at a cold
start), and `make template` checks the result with devstack.check_build."""

from __future__ import annotations

import py_compile
import re
from pathlib import Path

from devstack.check_build import modules_without_shipped_bytecode
from devstack.template import Template

ROOT = Path(__file__).resolve().parents[2]


def _layer(tmp_path: Path) -> Path:
    package = tmp_path / "python" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("A = 1\n")
    return tmp_path / "python"


def _compile(layer: Path, mode: py_compile.PycInvalidationMode) -> None:
    for source in layer.rglob("*.py"):
        py_compile.compile(str(source), doraise=True, invalidation_mode=mode)


def test_given_every_module_compiled_unchecked_hash_when_checked_then_nothing_is_reported(tmp_path: Path) -> None:
    layer = _layer(tmp_path)
    _compile(layer, py_compile.PycInvalidationMode.UNCHECKED_HASH)

    assert modules_without_shipped_bytecode(layer) == []


def test_given_timestamp_bytecode_when_checked_then_every_module_is_reported(tmp_path: Path) -> None:
    layer = _layer(tmp_path)
    _compile(layer, py_compile.PycInvalidationMode.TIMESTAMP)

    assert [line.split(":")[0] for line in modules_without_shipped_bytecode(layer)] == ["pkg/__init__.py", "pkg/a.py"]


def test_given_a_module_without_bytecode_or_changed_after_compiling_when_checked_then_it_is_reported(
    tmp_path: Path,
) -> None:
    layer = _layer(tmp_path)
    _compile(layer, py_compile.PycInvalidationMode.UNCHECKED_HASH)
    (layer / "pkg" / "b.py").write_text("B = 2\n")
    (layer / "pkg" / "a.py").write_text("A = 2\n")

    reported = modules_without_shipped_bytecode(layer)

    assert reported == ["pkg/a.py: a.cpython-311.pyc was compiled from other source", "pkg/b.py: no b.cpython-311.pyc"]


def test_given_the_template_when_the_layer_is_built_then_its_makefile_compiles_unchecked_hash_bytecode() -> None:
    layer = Template().resources["CommonLayer"]
    makefile = (ROOT / "layers" / "common" / "Makefile").read_text()

    assert layer["Metadata"]["BuildMethod"] == "makefile"
    assert re.search(r"^build-CommonLayer:", makefile, re.MULTILINE)
    assert "--invalidation-mode unchecked-hash" in makefile
    assert "--python-platform x86_64-manylinux2014 --python-version 3.11" in makefile
