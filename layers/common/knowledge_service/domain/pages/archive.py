"""The whole knowledge base as one archive: built in the background, handed over by URL.

``GET /api/v1/projects/{id}/kb/archive`` (``handover``) reads the base's write generation and
looks for the archive built at it (``storage/kb_archives.py``: one key per project and
generation). Found, it is handed over as a 303 to a presigned URL valid for five minutes. Not
found, the base is held to one folder export's limits (seed 001, Limits: 10,000 pages and
256 MiB; over them is 413 ``payload_too_large``), its build is asked for on the knowledge bus,
and the answer is 409 ``not_ready`` with a ``Retry-After`` sized to the base. Every GET that
finds no archive asks again; the builder (``build``, run by ``KbArchiveFunction``) does nothing
for an archive that exists or that another build holds the lease of, so a lost event or a
failed build is asked for again by the next GET. A write to the base moves its generation, so
the next GET asks for a new build and never hands over the old state.

The archive is a gzip-compressed tar (POSIX pax, UTF-8 names), chosen over zip because a tar
is read front to back: ``kb export`` writes each page to disk as its bytes arrive, with nothing
to seek (zip keeps its directory at the end). Its members, in order:

- ``manifest.json``: ``{format, project, generation, built_at, page_count, size_bytes, pages}``,
  each page ``{path, version, sha256, size_bytes}`` in path order;
- then each page's bytes (frontmatter and body, exactly as stored) at its path without the
  leading slash (``/fs/notes/a.md`` is ``fs/notes/a.md``), in the manifest's order.

The build reads a consistent list of the pages (the generation read before and after the heads'
query is the same, so no write landed between), then streams: the manifest, then each page's
bytes (read eight at a time, in order, each checked against its SHA-256 version) through gzip
into the parts of one multipart upload. Memory holds the list, one S3 part being filled, one
being sent and the pages read ahead — never the base.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import time
import uuid
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from knowledge_service.errors import Conflict, InternalError, PayloadTooLarge
from knowledge_service.storage.kb_archives import PART_BYTES, PartSink, archive_key

if TYPE_CHECKING:
    from knowledge_service.storage.archives import ArchiveStore
    from knowledge_service.storage.kb_archives import KbArchiveStore
    from knowledge_service.storage.page_store import PageStore

FORMAT = 1
MANIFEST = "manifest.json"
MAX_PAGES = 10_000  # seed 001, Limits: "One folder export or import: 10,000 pages and 256 MiB"
MAX_BYTES = 256 * 1024 * 1024
READ_AHEAD = 8  # pages read from S3 at once, in order
LEASE_SECONDS = 900  # a build holds its lease at most this long (the function's timeout)
SNAPSHOT_ATTEMPTS = 5
PAGES_PER_SECOND = 250  # the builder's pace the Retry-After is sized from (measured: docs/benchmarks.md)
MAX_RETRY_AFTER = 60


@dataclass(frozen=True)
class Entry:
    path: str
    version: str
    size_bytes: int

    @property
    def sha256(self) -> str:
        return self.version.removeprefix("sha256:")

    @property
    def member(self) -> str:
        return self.path.lstrip("/")


@dataclass(frozen=True)
class HandedOver:
    url: str
    file_name: str
    generation: int
    size_bytes: int


def within_limits(pages: int, size: int) -> None:
    """Seed 001's bound on one folder export, inclusive."""
    if pages > MAX_PAGES:
        raise PayloadTooLarge(
            f"archive: the knowledge base holds {pages} pages, over one export's limit of {MAX_PAGES:,}."
        )
    if size > MAX_BYTES:
        raise PayloadTooLarge(
            f"archive: the knowledge base holds {size} bytes of pages, over one export's limit of 256 MiB."
        )


def retry_after(pages: int) -> int:
    """Seconds a caller waits before asking again: about how long a build of ``pages`` takes."""
    return min(MAX_RETRY_AFTER, 1 + pages // PAGES_PER_SECOND)


def file_name(project: str, generation: int) -> str:
    return f"{project}-kb-{generation}.tar.gz"


# ------------------------------------------------------------------ the route
def handover(store: PageStore, kb: KbArchiveStore, archives: ArchiveStore, project: str) -> HandedOver:
    """The archive of the base as it is now, or why not yet (409 not_ready) or never (413)."""
    generation, _used = store.generation(project)
    key = archive_key(project, generation)
    size = kb.size_of(key)
    if size is not None:
        name = file_name(project, generation)
        return HandedOver(archives.presigned_url(key, name), name, generation, size)
    pages = store.current(project)
    within_limits(len(pages), sum(size for _p, _v, size in pages))
    kb.request(project, generation)
    raise Conflict(
        f"The knowledge base's archive (generation {generation}) is being built; try again shortly.",
        code="not_ready",
        headers={"Retry-After": str(retry_after(len(pages)))},
    )


# ------------------------------------------------------------------ the builder
def snapshot(store: PageStore, project: str) -> tuple[int, list[Entry]]:
    """The pages at one generation: read between two equal readings of the generation."""
    for _attempt in range(SNAPSHOT_ATTEMPTS):
        before, _used = store.generation(project)
        rows = store.current(project)
        after, _used = store.generation(project)
        if before == after:
            return before, [Entry(path, version, size) for path, version, size in rows]
    raise Conflict("The knowledge base kept changing while its pages were read; the build is asked for again.")


def build(
    store: PageStore, kb: KbArchiveStore, archives: ArchiveStore, project: str, *, part_bytes: int | None = None
) -> dict[str, Any]:
    """Build the archive of ``project``'s base as it is now, unless it exists or is being built."""
    generation, entries = snapshot(store, project)
    key = archive_key(project, generation)
    outcome: dict[str, Any] = {"project": project, "generation": generation, "key": key, "built": False}
    if kb.size_of(key) is not None:
        return outcome | {"reason": "already built"}
    within_limits(len(entries), sum(e.size_bytes for e in entries))
    owner, lease = uuid.uuid4().hex, f"kb#{project}#{generation}"
    if not archives.claim(lease, owner, LEASE_SECONDS):
        return outcome | {"reason": "another build holds the lease"}
    try:
        upload = kb.begin(key)
        sink = PartSink(upload, part_bytes or PART_BYTES)
        try:
            write_archive(sink, manifest(project, generation, entries), _contents(store, project, entries))
            sink.finish()
        except BaseException:
            upload.abort()
            raise
    finally:
        archives.release(lease, owner)
    return outcome | {"built": True, "pages": len(entries), "size_bytes": sink.size}


def manifest(project: str, generation: int, entries: list[Entry]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "project": project,
        "generation": generation,
        "built_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "page_count": len(entries),
        "size_bytes": sum(e.size_bytes for e in entries),
        "pages": [
            {"path": e.path, "version": e.version, "sha256": e.sha256, "size_bytes": e.size_bytes} for e in entries
        ],
    }


def _contents(store: PageStore, project: str, entries: list[Entry]) -> Iterator[tuple[Entry, bytes]]:
    """Each page's bytes in order, ``READ_AHEAD`` reads in flight, each checked against its version."""

    def read(entry: Entry) -> bytes:
        data = store.read_bytes(project, entry.version)
        if data is None:
            raise InternalError(f"The kept bytes of {entry.path} ({entry.version}) are missing.")
        if hashlib.sha256(data).hexdigest() != entry.sha256 or len(data) != entry.size_bytes:
            raise InternalError(f"The kept bytes of {entry.path} do not match its version {entry.version}.")
        return data

    with ThreadPoolExecutor(max_workers=READ_AHEAD, thread_name_prefix="kb-archive-read") as pool:
        pending: deque[tuple[Entry, Future[bytes]]] = deque()
        try:
            for entry in entries:
                pending.append((entry, pool.submit(read, entry)))
                if len(pending) >= READ_AHEAD:
                    done, future = pending.popleft()
                    yield done, future.result()
            while pending:
                done, future = pending.popleft()
                yield done, future.result()
        finally:
            for _entry, future in pending:
                future.cancel()


def write_archive(sink: Any, listed: dict[str, Any], contents: Iterator[tuple[Entry, bytes]]) -> None:
    """The archive's bytes into ``sink`` (anything with ``write``), streamed: the manifest, then
    each page as ``contents`` yields it."""
    mtime = time.time()
    with tarfile.open(fileobj=sink, mode="w|gz", format=tarfile.PAX_FORMAT, encoding="utf-8") as tar:
        _add(tar, MANIFEST, json.dumps(listed, ensure_ascii=False).encode("utf-8"), mtime)
        for entry, data in contents:
            _add(tar, entry.member, data, mtime)


def _add(tar: tarfile.TarFile, name: str, data: bytes, mtime: float) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(mtime)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))
