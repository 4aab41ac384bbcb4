"""Export archives: a knowledge base read from the store and written as one of the three formats
the contract names (docs/upstream-contract.md, "Exports").

Three steps, each a function of its own (the benchmark times each, ``benchmarks/archives.py``):

1. **read** (:func:`read_base`): the base's rows as the options ask, fetched in one hold of the
   engine's lock (:func:`fetch`: a consistent cut, no stage commits between two of its queries),
   then made into plain records sorted by id outside it (:func:`assemble`). What is read:

   - sources: the base's ``completed`` sources (failed ones and byte-for-byte copies are not
     knowledge); their text only with ``include_sources``;
   - chunks: only with ``include_chunks``, those of the sources above;
   - statements: the indexed ones; ``Superseded`` and ``Archived`` (a rejected statement) only
     with ``include_superseded``; each with its entities, disagreements and evidence ids;
   - evidence: of the statements above, each excerpt read from the stored text at its offsets
     (``missing_excerpt`` when its hash no longer matches, as the reads answer it);
   - entities: the canonical ones (``merged_into`` null) with aliases, mentions and
     relationships; those merged into another only with ``include_superseded``;
   - conflicts: every disagreement of the base with its sides (each side's words, whether or
     not the side is exported) and its decision.

   ``include_general_learning`` and ``include_mission_fixtures`` are taken and recorded: this
   engine holds neither, so they add nothing.

2. **render** (:func:`render`): the archive's members as ``(name, bytes)``, sorted, with no
   clock in them, so the same knowledge (and options) gives the same bytes:

   - ``obsidian``: a vault of markdown notes, ``Statements/<id>.md``, ``Entities/<id>.md``,
     ``Sources/<id>.md``, ``Conflicts/<id>.md`` and ``Index.md``, linked with
     ``[[id|label]]`` wikilinks (a statement links its entities, sources and disagreements; an
     entity, a source and a disagreement link back), each with YAML frontmatter (its
     ``aliases`` carry the record's name, so a vault finds it by name);
   - ``jsonl``: one member, one JSON record a line (``record_type``: ``manifest`` first, then
     ``source``, ``chunk``, ``statement``, ``evidence``, ``entity``, ``conflict``);
   - ``anthill``: the ANTHILL package, version 7: ``anthill-package.json`` (the package version,
     the base, the **revision object** the package was cut from — ``id``,
     ``publication_sequence``, ``logical_content_hash``, ``publication_status``,
     ``producer_instance_id``, ``producer_generation``, ``published_at``, null for a base that
     published none —, the options, the counts and each record file's size and SHA-256), then
     ``records/<kind>.jsonl``.

3. **write** (:func:`write`): to a file on disk, each byte hashed (SHA-256) and counted as it is
   written, so the digest and size are known when the file is; a temporary name renamed at the end,
   so a half-written archive is never served. ``obsidian`` is a zip (deflate level 6, entries at
   1980-01-01 with mode 0644, data descriptors since the output is a stream); ``jsonl`` and
   ``anthill`` are gzip (level 6, ``mtime`` 0, no name) over the JSON lines or a tar (PAX, owner 0,
   ``mtime`` 0, mode 0644).

**Padding** (the control port's ``padding_bytes``, for a test that needs a large download without a
GiB of knowledge): one more entry of that many bytes of hex text, **stored** (not compressed) and
streamed to disk a block at a time: ``padding.bin`` in the zip (stored, zip64 past 2 GiB); for the
gzip formats, a gzip member of its own written with deflate's stored blocks (RFC 1952 lets members
follow one another; every reader reads them as one stream), holding a ``padding`` record line of that
length (``jsonl``) or ``padding.bin`` with its tar header (``anthill``; it is no part of the package
and its manifest does not name it).

**Where each part is**: the read in ``records.py``; each format's render and write in a module of
its own (``obsidian.py``, ``jsonl.py``, ``anthill.py``), on what they share: ``members.py`` (an
archive's members, its JSON lines) and ``streams.py`` (the file that hashes what it is given, gzip
members, the padding's bytes). This module picks the format: :func:`render`, :func:`write` and
:func:`build`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local_engine.exports.anthill import _package, _write_tar
from local_engine.exports.jsonl import _jsonl, _write_jsonl
from local_engine.exports.members import Member
from local_engine.exports.obsidian import _vault, _write_zip
from local_engine.exports.records import Base
from local_engine.exports.streams import DigestFile

FORMATS = {"obsidian": ".zip", "jsonl": ".jsonl.gz", "anthill": ".anthill.tar.gz"}


# ---------------------------------------------------------------------------- render


def render(fmt: str, base: Base, options: dict[str, Any], revision: dict[str, Any] | None = None) -> list[Member]:
    """The archive's members (see the module's docstring), sorted as they are written."""
    if fmt == "jsonl":
        return [Member(f"{base.ref}.jsonl", b"".join(_jsonl(base, options)))]
    if fmt == "anthill":
        return _package(base, options, revision)
    if fmt == "obsidian":
        return sorted(_vault(base, options), key=lambda m: m.name)
    raise ValueError(f"no export format {fmt!r}")


# ---------------------------------------------------------------------------- write


@dataclass(frozen=True)
class Written:
    sha256: str
    size: int


def write(fmt: str, members: Iterable[Member], path: Path, padding_bytes: int = 0) -> Written:
    """The archive to ``path`` (through a temporary name beside it), hashed as it is written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.part")
    writer = WRITERS.get(fmt)
    if writer is None:
        raise ValueError(f"no export format {fmt!r}")
    try:
        with temporary.open("wb") as handle:
            out = DigestFile(handle)
            writer(out, members, padding_bytes)
            out.flush()
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return Written(sha256=out.digest.hexdigest(), size=out.size)


WRITERS: dict[str, Callable[[DigestFile, Iterable[Member], int], None]] = {
    "obsidian": _write_zip,
    "jsonl": _write_jsonl,
    "anthill": _write_tar,
}


def build(
    fmt: str,
    base: Base,
    options: dict[str, Any],
    revision: dict[str, Any] | None,
    path: Path,
    padding_bytes: int = 0,
) -> Written:
    """Render and write: the archive of ``base`` at ``path``, its SHA-256 and size."""
    return write(fmt, render(fmt, base, options, revision), path, padding_bytes)
