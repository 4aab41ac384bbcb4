"""The ``jsonl`` format (``archives.py``): one JSON record a line, the manifest first, written as
gzip."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from local_engine.exports.members import Member, line
from local_engine.exports.records import RECORD_KINDS, Base, flags
from local_engine.exports.streams import BLOCK, DigestFile, GzipMembers, fill

PADDING_HEAD = b'{"fill":"'
PADDING_TAIL = b'","record_type":"padding"}\n'


# ---------------------------------------------------------------------------- render


def _jsonl(base: Base, options: dict[str, Any]) -> Iterator[bytes]:
    yield line(
        {"record_type": "manifest", "format": "jsonl", "project_ref": base.ref, "name": base.name,
         "options": flags(options), "stats": base.stats()}
    )  # fmt: skip
    for kind in RECORD_KINDS:
        for record in base.records[kind]:
            yield line(record)


# ---------------------------------------------------------------------------- write


def _write_jsonl(out: DigestFile, members: Iterable[Member], padding_bytes: int) -> None:
    stream = GzipMembers(out)
    for member in members:
        for start in range(0, len(member.data), BLOCK):
            stream.write(member.data[start : start + BLOCK])
    if padding_bytes > 0:
        stream.member(0)
        stream.write(PADDING_HEAD)
        for piece in fill(max(0, padding_bytes - len(PADDING_HEAD) - len(PADDING_TAIL))):
            stream.write(piece)
        stream.write(PADDING_TAIL)
    stream.close()
