"""The documentation sets: public sdists from PyPI, pinned by version and SHA-256, fetched once.

Each set is one project's documentation folder as its source distribution ships it. The sdist is
downloaded with pip (``pip download --no-deps --no-binary :all:``; through ``uv run --no-project
--with pip`` when this interpreter has no pip), checked against the SHA-256 written here, and the
documentation files (the set's one suffix, hidden folders left out) are unpacked once into
``.cache/eval/<name>-<version>/docs/``, which git ignores. Everything the evaluation reads (the
engine, both baselines, the question files' ``files``) is relative to that folder, so every system
sees the same files.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "eval"
"""Where the sdists and the unpacked sets are kept: the repository's ``.cache/eval/``, which git ignores."""

DONE = ".complete"
"""Written last into a set's folder: a folder without it is a fetch that was cut short."""


@dataclass(frozen=True)
class DocSet:
    """One documentation set: which sdist, which folder of it, which files."""

    name: str
    package: str
    version: str
    sha256: str
    folder: str
    """The documentation folder inside the sdist's top folder (``docs``)."""
    suffix: str
    """The files of the set: ``.rst`` or ``.md``."""
    markup: str
    held_out: bool
    """True for the set the engine is not tuned on (reported last)."""

    @property
    def sdist(self) -> str:
        return f"{self.package}-{self.version}.tar.gz"


SETS: dict[str, DocSet] = {
    "flask": DocSet(
        name="flask",
        package="flask",
        version="3.1.3",
        sha256="0ef0e52b8a9cd932855379197dd8f94047b359ca0a78695144304cb45f87c9eb",
        folder="docs",
        suffix=".rst",
        markup="reStructuredText",
        held_out=False,
    ),
    "hatch": DocSet(
        name="hatch",
        package="hatch",
        version="1.18.2",
        sha256="7f365f1a5b8f1a8162813daed9bf9fce83f15dc933fc99c6d04cbb942e64f4d0",
        folder="docs",
        suffix=".md",
        markup="Markdown",
        held_out=True,
    ),
}
"""The sets, the tuning set first and the held-out set last (the order reports use)."""


class FetchError(RuntimeError):
    """A set could not be fetched or did not match its pinned digest."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _pip_command() -> list[str]:
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    uv = shutil.which("uv")
    if uv is None:
        raise FetchError("neither pip nor uv is on this machine: cannot fetch the documentation sets")
    return [uv, "run", "--no-project", "--with", "pip", "python", "-m", "pip"]


def download(docset: DocSet, into: Path) -> Path:
    """The set's sdist in ``into``, downloaded unless a copy with the pinned digest is there."""
    into.mkdir(parents=True, exist_ok=True)
    target = into / docset.sdist
    if target.is_file() and sha256_of(target) == docset.sha256:
        return target
    target.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(dir=into, prefix=".download-") as scratch:
        command = [
            *_pip_command(),
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"{docset.package}=={docset.version}",
            "-d",
            scratch,
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        fetched = Path(scratch) / docset.sdist
        if done.returncode != 0 or not fetched.is_file():
            raise FetchError(f"pip could not download {docset.sdist}: {done.stderr.strip()[-2000:]}")
        found = sha256_of(fetched)
        if found != docset.sha256:
            raise FetchError(f"{docset.sdist} has SHA-256 {found}, not the pinned {docset.sha256}")
        fetched.replace(target)
    return target


def members(docset: DocSet, names: list[str]) -> dict[str, str]:
    """Which archive members are the set's files: member name -> path relative to the set's root.

    Only regular files under ``<package>-<version>/<folder>/`` with the set's suffix, none in a
    hidden folder or hidden itself, none whose path could leave the root."""
    top = PurePosixPath(f"{docset.package}-{docset.version}", docset.folder)
    chosen: dict[str, str] = {}
    for name in names:
        path = PurePosixPath(name)
        if path.suffix != docset.suffix or not path.is_relative_to(top):
            continue
        relative = path.relative_to(top)
        if any(part.startswith(".") or part in ("", "..") for part in relative.parts):
            continue
        chosen[name] = relative.as_posix()
    return chosen


def root_of(docset: DocSet, cache: Path = CACHE) -> Path:
    return cache / f"{docset.name}-{docset.version}" / "docs"


def ensure(docset: DocSet, cache: Path = CACHE) -> Path:
    """The set's unpacked folder, fetched and unpacked the first time only."""
    root = root_of(docset, cache)
    if (root.parent / DONE).is_file():
        return root
    archive = download(docset, cache / "sdists")
    if root.parent.exists():
        shutil.rmtree(root.parent)
    staging = Path(tempfile.mkdtemp(dir=cache, prefix=f".{docset.name}-"))
    try:
        with tarfile.open(archive, "r:gz") as tar:
            regular = {m.name: m for m in tar.getmembers() if m.isfile()}
            for name, relative in sorted(members(docset, list(regular)).items()):
                source = tar.extractfile(regular[name])
                assert source is not None
                target = staging / "docs" / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(source.read())
        (staging / DONE).write_text(f"{docset.sdist} {docset.sha256}\n")
        staging.replace(root.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return root


def files_of(root: Path, suffix: str) -> list[str]:
    """The set's files, relative to its root, in path order."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob(f"*{suffix}") if p.is_file())
