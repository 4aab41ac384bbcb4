"""The ``anthill`` format (``archives.py``): the ANTHILL package, its manifest then
``records/<kind>.jsonl``, written as a tar in gzip."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Iterable
from typing import Any

from local_engine.exports.members import Member, line
from local_engine.exports.records import RECORD_KINDS, STAT_NAMES, Base, flags
from local_engine.exports.streams import BLOCK, FILL, LEVEL, PADDING_NAME, DigestFile, GzipMembers
from local_engine.serving.state import ANTHILL_PACKAGE_VERSION, ENGINE_VERSION

PACKAGE_MANIFEST = "anthill-package.json"


# ---------------------------------------------------------------------------- render


def _package(base: Base, options: dict[str, Any], revision: dict[str, Any] | None) -> list[Member]:
    wanted = flags(options)
    files = [
        Member(f"records/{STAT_NAMES[kind]}.jsonl", b"".join(line(r) for r in base.records[kind]))
        for kind in RECORD_KINDS
        if kind != "chunk" or wanted["include_chunks"]
    ]
    manifest = {
        "package_version": ANTHILL_PACKAGE_VERSION,
        "producer": {"engine": "forager-local-engine", "version": ENGINE_VERSION},
        "project": {"ref": base.ref, "name": base.name},
        "revision": revision,
        "options": wanted,
        "stats": base.stats(),
        "files": [
            {
                "path": f.name,
                "records": f.data.count(b"\n"),
                "bytes": len(f.data),
                "sha256": hashlib.sha256(f.data).hexdigest(),
            }
            for f in files
        ],
    }
    head = (json.dumps(manifest, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode("utf-8")
    return [Member(PACKAGE_MANIFEST, head), *files]


# ---------------------------------------------------------------------------- write


class _FillReader(io.RawIOBase):
    """The padding as a file to read (tarfile copies a member's bytes from one)."""

    def __init__(self, size: int) -> None:
        self.left = size
        self.offset = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        count = self.left if size is None or size < 0 else min(size, self.left)
        count = min(count, len(FILL) - self.offset)
        piece = FILL[self.offset : self.offset + count]
        self.offset = (self.offset + count) % len(FILL)
        self.left -= count
        return piece


def _tar_info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = 0
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _write_tar(out: DigestFile, members: Iterable[Member], padding_bytes: int) -> None:
    stream = GzipMembers(out)
    with tarfile.open(fileobj=stream, mode="w", format=tarfile.PAX_FORMAT, copybufsize=BLOCK) as package:  # type: ignore[call-overload]
        for member in members:
            package.addfile(_tar_info(member.name, len(member.data)), io.BytesIO(member.data))
        if padding_bytes > 0:
            stream.member(0)
            package.addfile(_tar_info(PADDING_NAME, padding_bytes), _FillReader(padding_bytes))
            stream.member(LEVEL)
    stream.close()
