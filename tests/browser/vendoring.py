"""``make vendor``: the console's third-party browser code, from the npm registry at the versions
``console.lock.json`` pins.

Each package's tarball is downloaded, checked against the lock's ``integrity`` (the registry's
Subresource-Integrity sha512, exactly as ``npm`` checks it), and each file the lock names is taken
out of it, checked against its ``sha256`` and written where the lock says. Nothing is run, nothing
is built: the files are served (or, for test-only packages, injected) as published.

    python -m tests.browser.vendoring           # write every file (downloads what is not there yet)
    python -m tests.browser.vendoring --check   # only compare the files on disk with the lock
    python -m tests.browser.vendoring --only axe-core

``--pin`` writes the sha256 of each extracted file into the lock instead of checking it: for a
version bump, after the new tarball's ``integrity`` has been copied from the registry's metadata.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import sys
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "console.lock.json"
REGISTRY = "https://registry.npmjs.org/"


class VendorError(Exception):
    """A tarball or a file that is not what the lock pins."""


@dataclass(frozen=True)
class VendoredFile:
    package: str
    source: str
    target: Path
    sha256: str


def read_lock(path: Path = LOCK) -> dict[str, Any]:
    lock: dict[str, Any] = json.loads(path.read_text())
    return lock


def vendored_files(lock: dict[str, Any], *, served_only: bool = False) -> list[VendoredFile]:
    return [
        VendoredFile(package["name"], entry["from"], ROOT / entry["to"], entry["sha256"])
        for package in lock["packages"]
        if package["served"] or not served_only
        for entry in package["files"]
    ]


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_integrity(data: bytes, integrity: str, name: str) -> None:
    """The registry's SRI string (``sha512-<base64>``), as npm checks a tarball."""
    algorithm, _, expected = integrity.partition("-")
    if algorithm != "sha512" or not expected:
        raise VendorError(f"{name}: integrity must be an SRI sha512 string, got {integrity!r}")
    actual = base64.b64encode(hashlib.sha512(data).digest()).decode()
    if actual != expected:
        raise VendorError(f"{name}: the tarball's sha512 is {actual}, the lock pins {expected}")


def download(url: str) -> bytes:
    if not url.startswith(REGISTRY):
        raise VendorError(f"tarball {url} is not on the npm registry ({REGISTRY})")
    with urllib.request.urlopen(url, timeout=60) as answer:
        data: bytes = answer.read()
    return data


def extract(tarball: bytes, member: str, name: str) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        try:
            info = archive.getmember(member)
        except KeyError:
            raise VendorError(f"{name}: the tarball holds no {member}") from None
        handle = archive.extractfile(info) if info.isfile() else None
        if handle is None:
            raise VendorError(f"{name}: {member} is not a regular file")
        return handle.read()


def vendor(lock: dict[str, Any], *, only: str | None = None, pin: bool = False) -> list[Path]:
    """Write every file of every package (or of ``only``); returns the paths written."""
    written: list[Path] = []
    for package in lock["packages"]:
        name = package["name"]
        if only is not None and name != only:
            continue
        tarball = download(package["tarball"])
        check_integrity(tarball, package["integrity"], f"{name}@{package['version']}")
        for entry in package["files"]:
            data = extract(tarball, entry["from"], name)
            digest = sha256_of(data)
            if pin:
                entry["sha256"] = digest
            elif digest != entry["sha256"]:
                raise VendorError(f"{name}: {entry['from']} has sha256 {digest}, the lock pins {entry['sha256']}")
            target = ROOT / entry["to"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written.append(target)
    return written


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def mismatches(lock: dict[str, Any], *, served_only: bool = False) -> list[str]:
    """Each vendored file that is missing or differs from the lock, as a sentence."""
    problems: list[str] = []
    for file in vendored_files(lock, served_only=served_only):
        if not file.target.is_file():
            problems.append(f"{shown(file.target)} is missing (make vendor)")
        elif (digest := sha256_of(file.target.read_bytes())) != file.sha256:
            problems.append(
                f"{shown(file.target)} has sha256 {digest}, console.lock.json pins {file.sha256} "
                "(a vendored file is never edited: make vendor writes it back)"
            )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.browser.vendoring", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="compare the files on disk with the lock, download nothing"
    )
    parser.add_argument("--only", help="one package by name")
    parser.add_argument("--pin", action="store_true", help="write each extracted file's sha256 into the lock")
    args = parser.parse_args(argv)
    lock = read_lock()
    if args.check:
        problems = mismatches(lock)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    try:
        written = vendor(lock, only=args.only, pin=args.pin)
    except VendorError as error:
        print(f"make vendor: {error}", file=sys.stderr)
        return 1
    if args.pin:
        LOCK.write_text(json.dumps(lock, indent=2) + "\n")
    for path in written:
        print(f"{shown(path)}  {sha256_of(path.read_bytes())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
