"""`make install` on a fresh Debian 12 / Ubuntu 24.04 machine: the system Python refuses
`pip install --user uv` (PEP 668), and `.ci/bootstrap-uv` installs uv all the same.

Runs against this machine's real externally managed system Python (Debian's
/usr/bin/python3 carries the EXTERNALLY-MANAGED marker); skipped where there is none.
It downloads uv from the package index (~15 MB, ~10 s)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOTSTRAP = ROOT / ".ci" / "bootstrap-uv"


def _externally_managed_python() -> Path | None:
    for candidate in sorted(Path("/usr/bin").glob("python3*")):
        if not candidate.name.replace("python3", "").replace(".", "").isdigit() and candidate.name != "python3":
            continue
        found = subprocess.run(
            [str(candidate), "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"],
            capture_output=True,
            text=True,
            check=False,
        )
        if found.returncode == 0 and (Path(found.stdout.strip()) / "EXTERNALLY-MANAGED").exists():
            return candidate
    return None


SYSTEM_PYTHON = _externally_managed_python()


@pytest.mark.skipif(SYSTEM_PYTHON is None, reason="no externally managed (PEP 668) system Python on this machine")
def test_given_a_pep_668_system_python_then_bootstrap_installs_a_working_uv(tmp_path: Path) -> None:
    assert SYSTEM_PYTHON is not None
    refused = subprocess.run(
        [str(SYSTEM_PYTHON), "-m", "pip", "install", "--user", "--dry-run", "uv"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode != 0
    assert "externally-managed-environment" in refused.stderr  # what `make install` met before

    done = subprocess.run(
        [str(BOOTSTRAP)],
        env={"PATH": "/usr/bin:/bin", "PYTHON": str(SYSTEM_PYTHON), "UV_TOOLS_DIR": str(tmp_path / "tools")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    uv = Path(done.stdout.strip().splitlines()[-1])
    assert uv == tmp_path / "tools" / "bin" / "uv"
    version = subprocess.run([str(uv), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("uv ")


def test_make_install_bootstraps_uv_with_the_script_not_pip_user() -> None:
    makefile = (ROOT / "Makefile").read_text()
    install = makefile.split("\ninstall:", 1)[1].split("\n\n", 1)[0]

    assert "./.ci/bootstrap-uv" in install
    assert "--user" not in install
    assert "$(CURDIR)/.tools/bin" in makefile.split("\nexport PATH", 1)[1].split("\n", 1)[0]
