"""The console's vendored browser code is byte for byte what ``console.lock.json`` pins
(``make vendor`` wrote it; nobody edits it by hand)."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

import pytest

from tests.browser import vendoring


def test_every_served_vendored_file_matches_the_lock() -> None:
    lock = vendoring.read_lock()

    assert vendoring.mismatches(lock, served_only=True) == []


def test_the_console_serves_only_what_the_lock_names_under_vendor() -> None:
    lock = vendoring.read_lock()
    served = {file.target for file in vendoring.vendored_files(lock, served_only=True)}
    on_disk = set((vendoring.ROOT / "functions/console/static/vendor").iterdir())

    assert on_disk == served


def test_an_edited_vendored_file_is_named(tmp_path: Path) -> None:
    lock = copy.deepcopy(vendoring.read_lock())
    entry = lock["packages"][0]["files"][0]
    original = (vendoring.ROOT / entry["to"]).read_bytes()
    edited = tmp_path / "preact-htm.module.js"
    edited.write_bytes(original + b"\n// a local fix\n")
    entry["to"] = str(edited)

    [problem] = vendoring.mismatches(lock, served_only=True)

    assert problem.startswith(f"{edited} has sha256 ")
    assert hashlib.sha256(original).hexdigest() in problem


def test_a_tarball_that_is_not_the_pinned_one_is_refused() -> None:
    with pytest.raises(vendoring.VendorError, match="the lock pins"):
        vendoring.check_integrity(b"not the tarball", vendoring.read_lock()["packages"][0]["integrity"], "htm@3.1.1")


def test_a_tarball_off_the_registry_is_refused() -> None:
    with pytest.raises(vendoring.VendorError, match="not on the npm registry"):
        vendoring.download("https://example.com/htm-3.1.1.tgz")
