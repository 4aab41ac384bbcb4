"""Proves `sam build`'s output is what Lambda will run: each function imports from its own
directory and the built layer alone (no dev environment, no site-packages), with no
environment variables set; and the built layer ships bytecode Lambda will use as it is (every
module beside an unchecked-hash .pyc of its current source: /opt is read-only, so a module
without one is compiled on every cold start). Usage: python -m devstack.check_build .aws-sam/build
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from devstack.template import Template

# What the python3.11 Lambda runtime itself provides, besides the standard library.
LAMBDA_RUNTIME_PACKAGES = ("boto3", "botocore", "s3transfer", "jmespath", "dateutil", "urllib3", "six")


def main(build_dir: str) -> int:
    with tempfile.TemporaryDirectory() as runtime_dir:
        _lambda_runtime(Path(runtime_dir))
        return _check(Path(build_dir), Path(runtime_dir))


def _lambda_runtime(target: Path) -> None:
    for package in LAMBDA_RUNTIME_PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin)
        source = origin.parent if origin.name == "__init__.py" else origin
        (target / source.name).symlink_to(source)


# A .pyc's flags word (PEP 552): bit 0 set = hash-based, bit 1 set = check the source.
UNCHECKED_HASH = 0b01


def modules_without_shipped_bytecode(layer: Path) -> list[str]:
    """Every module under ``layer`` whose bytecode Lambda would not use as it is: no .pyc for
    this interpreter, a timestamp or checked-hash one, or one compiled from other source."""
    tag = sys.implementation.cache_tag
    missing = []
    for source in sorted(layer.rglob("*.py")):
        pyc = source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"
        try:
            header = pyc.read_bytes()[:16]
        except FileNotFoundError:
            missing.append(f"{source.relative_to(layer)}: no {pyc.name}")
            continue
        flags = int.from_bytes(header[4:8], "little")
        if header[:4] != importlib.util.MAGIC_NUMBER or flags != UNCHECKED_HASH:
            missing.append(f"{source.relative_to(layer)}: {pyc.name} is not unchecked-hash bytecode")
        elif header[8:16] != importlib.util.source_hash(source.read_bytes()):
            missing.append(f"{source.relative_to(layer)}: {pyc.name} was compiled from other source")
    return missing


def _check(build: Path, runtime: Path) -> int:
    layer = build / "CommonLayer" / "python"
    stale = modules_without_shipped_bytecode(layer)
    own = [line for line in stale if line.startswith("knowledge_service")]
    print(f"{'CommonLayer':<22} ships unchecked-hash bytecode for every module: {'FAILED' if stale else 'ok'}")
    for line in (own or stale)[:20]:
        print(f"  {line}", file=sys.stderr)
    interpreter = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    failures = 0
    for logical_id, function in Template().functions().items():
        module = function["Properties"]["Handler"].rsplit(".", 1)[0]
        env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": f"{build / logical_id}:{layer}:{runtime}"}
        result = subprocess.run(
            [str(interpreter), "-S", "-c", f"import {module}"], env=env, capture_output=True, text=True, check=False
        )
        state = "ok" if result.returncode == 0 else "FAILED"
        print(f"{logical_id:<22} imports from the built artifact: {state}")
        if result.returncode:
            failures += 1
            print(result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "", file=sys.stderr)
    return 1 if failures or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ".aws-sam/build"))
