"""Exports: FORAGER's export history, starting one, and taking its archive away verified.

Exporting is ``read_knowledge`` and ``knowledge.export`` — never gated: a lapsed subscription
still takes away what it has. Every export is held to the resolved knowledge base (FORAGER's
``/api/exports/{id}`` is not project-scoped upstream), so another base's export is
``not_found`` in the words an id that does not exist gets.

The archive (``download``) cannot travel through the function (Lambda answers at most 6 MB,
API Gateway waits at most 29 s), so it is received into S3 and handed over as a short-lived
presigned URL — only after it was verified, and never inside the request that asks for it:

1. the export must be completed (409 ``not_ready``), built as an archive (409
   ``written_to_folder``), still kept (410 ``gone``) and carry a recorded digest and size;
2. a verified archive already kept at ``exports/<export_id>/<sha256>`` is handed over at once
   (303; a second download does not fetch it again);
3. otherwise, while the last verification's permanent failure stands
   (:data:`FAILURE_HOLD_SECONDS`), the download answers it (502 ``upstream_mismatch``, 410
   ``gone``); else it asks the verifier (an event on the bus, at most once per
   :data:`REQUEST_WINDOW_SECONDS`: ``ArchiveStore.ask``) and answers 409 ``not_ready`` with
   ``Retry-After`` at once, having read none of the archive;
4. the verifier (:func:`verify`, the export verifier function, on that event) takes the export's
   lease and streams the archive from FORAGER into a multipart upload to that key while hashing
   it (:func:`receive`, :class:`ArchiveDigest`): reading and hashing one part overlap with
   sending the one before, memory holds at most three parts and /tmp is never touched; the
   upload is completed only when the SHA-256 equals the recorded one and the one FORAGER sent
   beside the bytes and the size equals the recorded size. On any failure the upload is aborted:
   nothing is at the key, no part is kept. A mismatch, or FORAGER saying the archive is gone, is
   recorded for the downloads to answer; any other failure is raised for the invocation to be
   retried.
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
from knowledge_service.errors import (
    BadRequest,
    Conflict,
    Gone,
    InternalError,
    ServiceError,
    UpstreamMismatch,
    UpstreamRefused,
)
from knowledge_service.identity.principal import Principal
from knowledge_service.storage.archives import ArchiveStore, VerificationFailure, VerificationNotAsked, archive_key
from knowledge_service.storage.event_log import EventLog
from knowledge_service.upstream import models as upstream_models
from knowledge_service.upstream.client import ForagerClient

T = TypeVar("T")

VAULT_NAME_MAX = 80
PART_BYTES = 8 * 1024 * 1024
"""One multipart part: the most of an archive held in memory at once (S3's minimum is 5 MiB)."""
LEASE_SECONDS = 900
"""How long one verifier may hold an archive's receipt (the verifier function's timeout)."""
REQUEST_WINDOW_SECONDS = LEASE_SECONDS
"""A download asks the verifier at most once in this window; a request no verifier settled
(its retries spent, its event in the dead-letter queue) is asked again after it."""
FAILURE_HOLD_SECONDS = 300
"""How long every download answers a verification's permanent failure; the first one after
asks for a new verification."""
GONE_STATUSES = frozenset({404, 410})
"""FORAGER's answers that say the export or its archive is no longer there."""
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
    now: int,
) -> HandedOver:
    """The verified archive handed over, or why not yet: never a byte of it read here."""
    row = one(reader, export_id)
    if (
        _expired(row) and row.sha256
    ):  # the colony's verified copy expires with the export, whatever S3's rule has done yet
        archives.remove(archive_key(export_id, row.sha256.lower()))
    sha256, size = _archive_of(row)
    key = archive_key(export_id, sha256)
    if archives.size_of(key) != size:
        _not_yet(reader, archives, principal, row, now)
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


def _expired(row: upstream_models.ExportRow) -> bool:
    return (
        row.status == "completed"
        and not row.written_to_folder
        and (row.archive_expired_at is not None or not row.downloadable)
    )


def _archive_of(row: upstream_models.ExportRow) -> tuple[str, int]:
    """The recorded digest and size of an export that has an archive to take away; the refusals
    of one that has none (not built yet, written into a folder, expired, nothing recorded)."""
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
    if _expired(row):
        raise Gone("This export's archive is no longer kept (archive_expired); start a new export.")
    if not row.sha256 or row.size_bytes is None:
        raise UpstreamMismatch("FORAGER recorded no digest or size for this archive; nothing was handed over.")
    return row.sha256.lower(), row.size_bytes


def _not_yet(
    reader: Reader, archives: ArchiveStore, principal: Principal, row: upstream_models.ExportRow, now: int
) -> None:
    """No verified copy: the failure the last verification recorded while it stands, or ask the
    verifier (once a window) and answer 409 ``not_ready`` at once."""
    failed = archives.failure(row.export_id, now)
    if failed is not None:
        raise _refusal(failed)
    request = VerificationRequest(
        export_id=row.export_id,
        project=reader.scope.project,
        knowledge_base=reader.knowledge_base,
        requester=principal.name,
    )
    try:
        archives.ask(row.export_id, request.model_dump(), now, REQUEST_WINDOW_SECONDS)
    except VerificationNotAsked as error:
        raise InternalError(
            "The archive's verification could not be asked for (the event bus refused it); try again."
        ) from error
    raise Conflict(
        "This export's archive is being received from FORAGER and verified; try again shortly.",
        code="not_ready",
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def _refusal(failed: VerificationFailure) -> ServiceError:
    if failed.code == "gone":
        return Gone(failed.message)
    return UpstreamMismatch(failed.message)


# ------------------------------------------------------------------------------ the verifier
class VerificationRequest(Model):
    """The detail of the bus event a download puts when it finds no verified copy."""

    model_config = ConfigDict(extra="ignore")

    export_id: str = Field(pattern=r"^exp_[0-9a-f]{16}$")
    project: str
    knowledge_base: str = Field(min_length=1)
    requester: str


Outcome = Literal["verified", "already_verified", "being_verified", "mismatch", "gone", "not_this_base", "no_archive"]


def verify(
    forager: ForagerClient,
    archives: ArchiveStore,
    request: VerificationRequest,
    *,
    now: int,
    part_bytes: int | None = None,
) -> Outcome:
    """Receive and verify the archive a download asked for (the verifier function's whole work).

    A permanent failure — the bytes do not match what the export recorded, or FORAGER no longer
    holds the archive — is recorded (:meth:`ArchiveStore.record_failure`) so downloads answer it
    for :data:`FAILURE_HOLD_SECONDS`; anything else that fails (FORAGER unreachable or slow, S3)
    is raised, for the invocation to be retried, and downloads keep answering ``not_ready``.
    """
    export_id = request.export_id
    try:
        row = forager.export(export_id)
        if row.project_ref != request.knowledge_base:  # held to the base the download resolved
            archives.settle(export_id)
            return "not_this_base"
        try:
            sha256, size = _archive_of(row)
        except (Conflict, Gone):  # nothing to verify: the next download answers the row's own refusal
            archives.settle(export_id)
            return "no_archive"
        key = archive_key(export_id, sha256)
        if archives.size_of(key) == size:
            archives.settle(export_id)
            return "already_verified"
        owner = uuid.uuid4().hex
        if not archives.claim(export_id, owner, LEASE_SECONDS):
            return "being_verified"
        try:
            if archives.size_of(key) != size:  # another verifier may have finished meanwhile
                receive(forager, archives, export_id, key, sha256, size, part_bytes or PART_BYTES)
        finally:
            archives.release(export_id, owner)
    except UpstreamMismatch as mismatch:
        archives.record_failure(export_id, "upstream_mismatch", mismatch.message, now, FAILURE_HOLD_SECONDS)
        return "mismatch"
    except UpstreamRefused as refused:
        if refused.upstream_status not in GONE_STATUSES:
            raise
        message = "FORAGER no longer holds this export's archive (archive_expired); start a new export."
        archives.record_failure(export_id, "gone", message, now, FAILURE_HOLD_SECONDS)
        return "gone"
    archives.settle(export_id)
    return "verified"


def receive(
    forager: ForagerClient, archives: ArchiveStore, export_id: str, key: str, sha256: str, size: int, part_bytes: int
) -> str:
    """Stream the archive into a multipart upload while hashing it; complete only when verified.

    Reading and hashing overlap with sending: each full part is handed to the upload, which
    sends it on its one sender thread while the next part is read and hashed, and waits for the
    part before it first — so memory holds at most the part being sent, the part being filled
    and the copy being handed over (three parts, 24 MiB at the default size, plus one chunk).
    A digest FORAGER sends beside the bytes that is not the recorded one fails before a byte is
    read. Whatever fails — the digest, the size, the transport, S3 — the upload is aborted, so
    the key holds nothing and no part is kept.
    """
    upload = archives.begin(key)
    try:
        with forager.download_archive(export_id) as arriving:
            check = ArchiveDigest(sha256, size, arriving.announced_sha256)
            try:
                check.announced()
                buffer = bytearray()
                parts = 0
                for chunk in arriving.chunks:
                    check.update(chunk)
                    buffer += chunk
                    while len(buffer) >= part_bytes:
                        upload.part(bytes(memoryview(buffer)[:part_bytes]))
                        del buffer[:part_bytes]
                        parts += 1
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
