"""Exports: FORAGER's export history, starting one, and taking its archive away verified.

Exporting is ``read_knowledge`` and ``knowledge.export`` — never gated: a lapsed subscription
still takes away what it has. Every export is held to the resolved knowledge base (FORAGER's
``/api/exports/{id}`` is not project-scoped upstream), so another base's export is
``not_found`` in the words an id that does not exist gets.

The archive (``download``) cannot travel through the function (Lambda answers at most 6 MB,
API Gateway waits at most 29 s), so it is received into S3 and handed over as a short-lived
presigned URL — only after it was verified:

1. the export must be completed (409 ``not_ready``), built as an archive (409
   ``written_to_folder``), still kept (410 ``gone``) and carry a recorded digest and size;
2. a verified archive already kept at ``exports/<export_id>/<sha256>`` is handed over at once
   (a second download does not fetch it again);
3. otherwise the request takes the export's verification lease (another request meanwhile is
   answered 409 ``not_ready`` with ``Retry-After``), streams the archive from FORAGER into a
   multipart upload to that key while hashing it (:class:`ArchiveDigest`), never holding more
   than one part in memory and never touching /tmp, and completes the upload only when the
   SHA-256 equals the recorded one and the one FORAGER sent beside the bytes and the size
   equals the recorded size. On any failure the upload is aborted: nothing is at the key, no
   part is kept, and the caller is answered 502 ``upstream_mismatch`` (or the transport's
   own code).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Literal, TypeVar

from pydantic import ConfigDict, Field, StrictBool

from knowledge_service import observability
from knowledge_service.base_model import Model
from knowledge_service.domain.archive_digest import ArchiveDigest
from knowledge_service.domain.reads import Reader, missing
from knowledge_service.domain.scope import held
from knowledge_service.errors import BadRequest, Conflict, Gone, UpstreamMismatch, UpstreamRefused
from knowledge_service.identity.principal import Principal
from knowledge_service.storage.archives import ArchiveStore, archive_key
from knowledge_service.storage.event_log import EventLog
from knowledge_service.upstream import models as upstream_models

T = TypeVar("T")

VAULT_NAME_MAX = 80
PART_BYTES = 8 * 1024 * 1024
"""One multipart part: the most of an archive held in memory at once (S3's minimum is 5 MiB)."""
LEASE_SECONDS = 900
"""How long one request may hold an archive's verification (the exports function's timeout)."""
RETRY_AFTER_SECONDS = 5
IDEMPOTENCY_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")
SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


class ExportOptions(Model):
    """FORAGER's own export options, every one optional."""

    model_config = ConfigDict(extra="forbid")

    include_sources: StrictBool | None = None
    include_chunks: StrictBool | None = None
    include_superseded: StrictBool | None = None
    include_general_learning: StrictBool | None = None
    include_mission_fixtures: StrictBool | None = None
    vault_name: str | None = Field(default=None, min_length=1, max_length=VAULT_NAME_MAX)


class StartExportRequest(Model):
    """``POST /knowledge/exports``."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["obsidian", "jsonl", "anthill"]
    options: ExportOptions = Field(default_factory=ExportOptions)


class ExportHistory(Model):
    exports: list[upstream_models.ExportRow]


@dataclass(frozen=True)
class HandedOver:
    """A verified archive, ready to be taken away."""

    url: str
    sha256: str
    size_bytes: int
    file_name: str


# ------------------------------------------------------------------------------ history
def history(reader: Reader) -> ExportHistory:
    answer = held(lambda: reader.forager.exports(reader.knowledge_base))
    return ExportHistory(exports=[row for row in answer.exports if row.project_ref == reader.knowledge_base])


def one(reader: Reader, export_id: str) -> upstream_models.ExportRow:
    try:
        row = reader.forager.export(export_id)
    except UpstreamRefused as refused:
        if refused.upstream_status == 404:
            raise missing("export", export_id) from None
        raise
    if row.project_ref != reader.knowledge_base:
        raise missing("export", export_id)
    return row


def start(
    reader: Reader, request: StartExportRequest, idempotency_key: str | None, principal: Principal, events: EventLog
) -> upstream_models.ExportRow:
    """Ask FORAGER for an export; its 409 while the base is being processed is relayed in its words."""
    if idempotency_key is not None and not IDEMPOTENCY_KEY.match(idempotency_key):
        raise BadRequest("Idempotency-Key", "must be 1 to 255 visible ASCII characters.")
    options = request.options.model_dump(exclude_none=True)
    body: dict[str, object] = {"format": request.format}
    if options:
        body["options"] = options
    try:
        row = held(lambda: reader.forager.start_export(reader.knowledge_base, body, idempotency_key=idempotency_key))
    except UpstreamRefused as refused:
        if refused.upstream_status == 409:
            raise Conflict(refused.upstream_message) from None
        raise
    events.record(
        "knowledge_export_started",
        principal.name,
        {
            "project": reader.scope.project,
            "knowledge_base": reader.knowledge_base,
            "record": row.export_id,
            "format": row.format,
        },
    )
    return row


# ------------------------------------------------------------------------------ the archive
def download(
    reader: Reader,
    archives: ArchiveStore,
    events: EventLog,
    principal: Principal,
    export_id: str,
    *,
    part_bytes: int | None = None,
) -> HandedOver:
    row = one(reader, export_id)
    if row.status != "completed":
        raise Conflict(
            "This export is still being built; try again shortly.",
            code="not_ready",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    if row.written_to_folder:
        raise Conflict(
            "This export was written into a folder on FORAGER's machine; there is no archive to take away.",
            code="written_to_folder",
        )
    if row.archive_expired_at is not None or not row.downloadable:
        if row.sha256:  # the colony's verified copy expires with the export, whatever S3's rule has done yet
            archives.remove(archive_key(export_id, row.sha256.lower()))
        raise Gone("This export's archive is no longer kept (archive_expired); start a new export.")
    if not row.sha256 or row.size_bytes is None:
        raise UpstreamMismatch("FORAGER recorded no digest or size for this archive; nothing was handed over.")
    sha256, size = row.sha256.lower(), row.size_bytes
    key = archive_key(export_id, sha256)
    if archives.size_of(key) != size:
        _verify_into(reader, archives, row, key, sha256, size, part_bytes or PART_BYTES)
    file_name = safe_file_name(row.file_name, export_id)
    events.record(
        "knowledge_export_downloaded",
        principal.name,
        {
            "project": reader.scope.project,
            "knowledge_base": reader.knowledge_base,
            "record": export_id,
            "format": row.format,
            "sha256": sha256,
            "size_bytes": size,
        },
    )
    return HandedOver(archives.presigned_url(key, file_name), sha256, size, file_name)


def _verify_into(
    reader: Reader,
    archives: ArchiveStore,
    row: upstream_models.ExportRow,
    key: str,
    sha256: str,
    size: int,
    part_bytes: int,
) -> None:
    owner = uuid.uuid4().hex
    if not archives.claim(row.export_id, owner, LEASE_SECONDS):
        raise Conflict(
            "This export's archive is being received and verified; try again shortly.",
            code="not_ready",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    try:
        if archives.size_of(key) != size:  # another request may have finished meanwhile
            receive(reader, archives, row.export_id, key, sha256, size, part_bytes)
    finally:
        archives.release(row.export_id, owner)


def receive(
    reader: Reader, archives: ArchiveStore, export_id: str, key: str, sha256: str, size: int, part_bytes: int
) -> str:
    """Stream the archive into a multipart upload while hashing it; complete only when verified.

    Whatever fails — the digest, the size, the transport, S3 — the upload is aborted, so the
    key holds nothing and no part is kept.
    """
    upload = archives.begin(key)
    try:
        with reader.forager.download_archive(export_id) as arriving:
            check = ArchiveDigest(sha256, size, arriving.announced_sha256)
            buffer = bytearray()
            parts = 0
            for chunk in arriving.chunks:
                check.update(chunk)
                buffer += chunk
                while len(buffer) >= part_bytes:
                    upload.part(bytes(memoryview(buffer)[:part_bytes]))
                    del buffer[:part_bytes]
                    parts += 1
            try:
                digest = check.verify()
            except UpstreamMismatch:
                observability.count("ExportDigestMismatches")
                raise
            observability.count("ExportsVerified")
            if buffer or parts == 0:
                upload.part(bytes(buffer))
            del buffer
        upload.complete()
    except BaseException:
        upload.abort()
        raise
    return digest


def safe_file_name(name: str | None, export_id: str) -> str:
    """FORAGER's file name reduced to letters, digits, '-', '_' and '.' (never a dot file)."""
    reduced = SAFE_NAME.sub("", name or "").lstrip(".")[:200]
    return reduced or f"{export_id}.archive"
