"""Proves `sam build`'s output is what Lambda will run: each function imports from its own
directory and the built layer alone (no dev environment, no site-packages), with no
environment variables set. Usage: python -m devstack.check_build .aws-sam/build
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


def _check(build: Path, runtime: Path) -> int:
    layer = build / "CommonLayer" / "python"
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
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ".aws-sam/build"))
