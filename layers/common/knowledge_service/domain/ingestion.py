"""Ingestion: jobs, uploads and preflight admission, relayed to FORAGER.

Asynchronous always: every call here answers as soon as FORAGER has queued, cancelled,
retried or measured; none waits on a document being parsed. A job's payload is FORAGER's
persisted stage state, relayed as it is: the edge never interpolates ``progress``.

- **Jobs by path.** Every path is held to the first fence (``workspace_paths.contain``)
  before anything is sent; one path outside refuses the whole request (403
  ``permission_denied``) and no request leaves. FORAGER's own allowed input roots are the
  second, independent fence.
- **Uploads.** Bytes, not paths (each file's name a relative name, held to the first fence's
  rules by ``workspace_paths.file_name`` on every route that forwards one): inline
  ``multipart/form-data`` for a batch that fits in one Lambda request, or an S3 upload
  session (create → presigned PUTs → commit by session id) whose parts are streamed from
  S3 to FORAGER a chunk at a time. FORAGER's transport caps (100 MB, 400 files) are held
  across the batch, with those numbers, before anything is sent.
- **Preflight.** FORAGER's admission gate asked on its own: a refusal is an answer
  (``admitted: false``, every integer intact); a producer failure is a failure.
- **Jobs by name.** FORAGER's payload names no path and no file, so the edge keeps what it
  queued (``storage/job_inputs.py``, :class:`JobBook`) and every answer that relays a job carries
  it: its ``kind`` (``import`` or ``upload``), its ``inputs`` (the paths an import named, relative
  to the workspace; the files an upload carried) and who queued it. A job queued past the edge
  has none of these.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal, TypeVar

from aws_lambda_powertools import Logger
from pydantic import ConfigDict, Field, StrictBool, field_validator

from knowledge_service import observability
from knowledge_service.base_model import Model
from knowledge_service.clock import Clock
from knowledge_service.domain import identifiers
from knowledge_service.domain.scope import held
from knowledge_service.domain.workspace_paths import PATH_MAX, PathRefused, contain, file_name, shown
from knowledge_service.errors import BadRequest, Conflict, NotFound, PayloadTooLarge, PermissionDenied, UpstreamRefused
from knowledge_service.storage.job_inputs import INPUTS_KEPT, JobInputs, JobInputStore, JobKind
from knowledge_service.storage.staging import StagingStore, part_key
from knowledge_service.upstream.client import ForagerClient
from knowledge_service.upstream.models import Admission, Job
from knowledge_service.upstream.multipart import FilePart

T = TypeVar("T")
logger = Logger(child=True)

MB = 1024 * 1024
UPLOAD_MAX_BYTES = 100 * MB
UPLOAD_MAX_FILES = 400
INLINE_MAX_BYTES = 4 * MB
"""An inline upload's whole body: base64 in the Lambda event keeps it inside Lambda's 6 MB."""
SESSION_SECONDS = 3600
PATHS_MAX = 100
JOBS_LIMIT_MAX = 100
JOB_ID = identifiers.JOB_ID_PATTERN
SESSION_ID = identifiers.SESSION_ID_PATTERN
ADMISSION_ID = identifiers.ADMISSION_ID_PATTERN
NO_SUCH_JOB = "There is no such job in this knowledge base."
NO_SUCH_SESSION = "There is no such upload session for this project."

ProjectField = Annotated[str | None, Field(max_length=63, pattern=identifiers.PROJECT_OR_DEFAULT_PATTERN)]
"""The project a body names; ``""`` (like leaving it out) names none: the query's, or the console default."""


class JobRequest(Model):
    """Queue an import of workspace folders or files."""

    model_config = ConfigDict(extra="forbid")

    project: ProjectField = None
    paths: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=PATH_MAX)]], Field(min_length=1, max_length=PATHS_MAX)
    ]
    force: StrictBool = False


class NamedJob(Job):
    """A job as the edge answers it: FORAGER's stage state, relayed as it is, and what the job was
    given as this edge queued it (none of these for a job queued past the edge)."""

    kind: JobKind | None = Field(default=None, description="import (workspace paths) or upload (files)")
    inputs: list[str] = Field(
        default_factory=list,
        max_length=INPUTS_KEPT,
        description=(
            "the paths an import named (relative to the workspace) or the files an upload carried; "
            f"the first {INPUTS_KEPT}"
        ),
    )
    input_count: int = Field(default=0, ge=0, description="how many inputs the job was given in all")
    queued_by: str | None = Field(default=None, description="the principal that queued it")


class JobsAnswer(Model):
    jobs: list[NamedJob]


def named(job: Job, given: JobInputs | None) -> NamedJob:
    """``job`` with what it was given (or without, when the edge kept nothing of it)."""
    fields = job.model_dump()
    if given is not None:
        fields.update(
            kind=given.kind, inputs=list(given.inputs), input_count=given.input_count, queued_by=given.queued_by
        )
    return NamedJob.model_validate(fields)


@dataclass(frozen=True)
class JobBook:
    """Where the edge keeps what each job it queues was given, and who is asking."""

    store: JobInputStore
    actor: str
    clock: Clock

    def keep(self, knowledge_base: str, job: Job, kind: JobKind, inputs: Iterable[str]) -> NamedJob:
        """FORAGER has queued ``job``: keep what it was given. A write that fails is logged, not
        answered: the job stands, named by its id."""
        try:
            given = self.store.remember(knowledge_base, job.job_id, kind, inputs, self.actor, self.clock())
        except Exception:  # FORAGER has the job: it stands, unnamed
            logger.exception("a job's inputs were not kept", extra={"job_id": job.job_id})
            return named(job, None)
        return named(job, given)

    def name(self, knowledge_base: str, jobs: list[Job]) -> list[NamedJob]:
        given = self.store.recall(knowledge_base, [job.job_id for job in jobs])
        return [named(job, given.get(job.job_id)) for job in jobs]


def _json_number(value: Any) -> Any:
    """A JSON number, as the document's ``integer`` means: ``false`` or ``"12"`` is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be an integer")  # noqa: TRY004 - pydantic turns only ValueError into a 400
    return value


class SessionFile(Model):
    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(min_length=1, max_length=1024)]
    size_bytes: Annotated[int, Field(ge=0, le=UPLOAD_MAX_BYTES)]

    _size_is_a_number = field_validator("size_bytes", mode="before")(_json_number)

    @field_validator("name")
    @classmethod
    def _relative_name(cls, value: str) -> str:
        return _file_name(value)


def _file_name(name: str) -> str:
    """A file's name as FORAGER is sent it: the one rule every upload route holds names to."""
    try:
        return file_name(name)
    except PathRefused as refused:
        raise ValueError(f"'{shown(name)}' is refused: {refused.reason}") from refused


class UploadSessionRequest(Model):
    """Open an upload session for a batch too large to send inline."""

    model_config = ConfigDict(extra="forbid")

    project: ProjectField = None
    files: Annotated[list[SessionFile], Field(min_length=1, max_length=10 * UPLOAD_MAX_FILES)]


class UploadPart(Model):
    name: str
    size_bytes: int
    method: Literal["PUT"] = "PUT"
    url: str
    headers: dict[str, str]


class UploadSession(Model):
    session_id: str
    project: str
    expires_at: str
    parts: list[UploadPart]


class UploadCommit(Model):
    """Commit an upload session: its staged parts go to FORAGER as one upload."""

    model_config = ConfigDict(extra="forbid")

    project: ProjectField = None
    session_id: Annotated[str, Field(pattern=SESSION_ID)]
    force: StrictBool = False
    admission_job_id: Annotated[str | None, Field(pattern=ADMISSION_ID)] = None


class PreflightSession(Model):
    """Measure a staged batch (an upload session) before it is committed."""

    model_config = ConfigDict(extra="forbid")

    project: ProjectField = None
    session_id: Annotated[str, Field(pattern=SESSION_ID)]


# ---------------------------------------------------------------------- jobs
def queue_job(
    client: ForagerClient, workspace_root: str, knowledge_base: str, request: JobRequest, key: str, book: JobBook
) -> NamedJob:
    """Every path through the first fence, then one request to FORAGER; none if any is refused."""
    absolute: list[str] = []
    relative: list[str] = []
    for path in request.paths:
        try:
            found = contain(path, workspace_root)
        except PathRefused as refused:
            raise PermissionDenied(f"paths: '{shown(path)}' is refused: {refused.reason}.") from refused
        if found.absolute not in absolute:
            absolute.append(found.absolute)
            relative.append(found.relative)
    job = _relay(lambda: client.queue_job(knowledge_base, absolute, force=request.force, idempotency_key=key))
    observability.count("IngestionJobsQueued")
    return book.keep(knowledge_base, job, "import", relative)


def list_jobs(client: ForagerClient, knowledge_base: str, limit: int, book: JobBook) -> JobsAnswer:
    jobs = _relay(lambda: held(lambda: client.jobs(knowledge_base, limit=limit)))
    return JobsAnswer(jobs=book.name(knowledge_base, jobs))


def get_job(client: ForagerClient, knowledge_base: str, job_id: str, book: JobBook) -> NamedJob:
    return book.name(knowledge_base, [_relay(lambda: client.job(knowledge_base, job_id))])[0]


JobAct = Literal["cancel", "retry"]


def act_on_job(
    client: ForagerClient, knowledge_base: str, job_id: str, act: JobAct, key: str, book: JobBook
) -> NamedJob:
    """Cancel a job (it stops at the next stage boundary) or retry one from its checkpoints."""
    send = client.cancel_job if act == "cancel" else client.retry_job
    return book.name(knowledge_base, [_relay(lambda: send(knowledge_base, job_id, idempotency_key=key))])[0]


# ---------------------------------------------------------------------- uploads
def check_caps(count: int, total: int) -> None:
    """FORAGER's transport caps, quoted: refused here, with those numbers, not sent to fail there."""
    if count > UPLOAD_MAX_FILES or total > UPLOAD_MAX_BYTES:
        raise PayloadTooLarge(
            f"One upload is at most 100 MB ({UPLOAD_MAX_BYTES} bytes) and {UPLOAD_MAX_FILES} files; this batch "
            f"is {count} files and {total} bytes. Split it into batches within both."
        )


def upload_inline(
    client: ForagerClient,
    knowledge_base: str,
    files: list[tuple[str, bytes]],
    *,
    force: bool,
    admission_job_id: str | None,
    key: str,
    book: JobBook,
) -> NamedJob:
    check_caps(len(files), sum(len(data) for _, data in files))
    parts = [FilePart(name, len(data), lambda data=data: [data]) for name, data in files]  # type: ignore[misc]
    job = _relay(
        lambda: client.upload(
            knowledge_base, parts, force=force, admission_job_id=admission_job_id, idempotency_key=key
        )
    )
    return book.keep(knowledge_base, job, "upload", [name for name, _ in files])


def preflight_inline(client: ForagerClient, knowledge_base: str, files: list[tuple[str, bytes]], key: str) -> Admission:
    check_caps(len(files), sum(len(data) for _, data in files))
    parts = [FilePart(name, len(data), lambda data=data: [data]) for name, data in files]  # type: ignore[misc]
    return _admission(_relay(lambda: client.preflight(knowledge_base, parts, idempotency_key=key)))


def open_session(
    staging: StagingStore, project: str, knowledge_base: str, request: UploadSessionRequest, actor: str
) -> UploadSession:
    """Caps first, then a manifest and one presigned PUT per file (its length signed)."""
    check_caps(len(request.files), sum(f.size_bytes for f in request.files))
    session_id = "ups_" + secrets.token_hex(16)
    expires = datetime.now(UTC) + timedelta(seconds=SESSION_SECONDS)
    expires_at = expires.strftime("%Y-%m-%dT%H:%M:%SZ")
    entries: list[dict[str, Any]] = [
        {"name": f.name, "size_bytes": f.size_bytes, "key": part_key(session_id, i)}
        for i, f in enumerate(request.files)
    ]
    staging.save_manifest(
        session_id,
        {
            "session_id": session_id,
            "project": project,
            "knowledge_base": knowledge_base,
            "created_by": actor,
            "expires_at": expires_at,
            "files": entries,
        },
    )
    parts = [
        UploadPart(
            name=e["name"],
            size_bytes=e["size_bytes"],
            url=staging.presigned_put(e["key"], e["size_bytes"], SESSION_SECONDS),
            headers={"Content-Length": str(e["size_bytes"])},
        )
        for e in entries
    ]
    return UploadSession(session_id=session_id, project=project, expires_at=expires_at, parts=parts)


def staged_parts(
    staging: StagingStore, project: str, knowledge_base: str, session_id: str
) -> tuple[list[FilePart], list[str]]:
    """The session's parts as FORAGER will be sent them, each read from S3 as it streams.

    The session must be this project's and this knowledge base's and unexpired, and every
    part must be staged at the length its manifest declared; the caps are held again on
    what is really there.
    """
    manifest = staging.manifest(session_id)
    if manifest is None or manifest.get("project") != project or manifest.get("knowledge_base") != knowledge_base:
        raise NotFound(NO_SUCH_SESSION)
    if str(manifest.get("expires_at", "")) < datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"):
        raise NotFound(NO_SUCH_SESSION)
    parts: list[FilePart] = []
    keys: list[str] = []
    for entry in manifest["files"]:
        size = staging.size_of(entry["key"])
        if size is None:
            raise Conflict(f"files: '{shown(entry['name'])}' has not been uploaded to the session yet.")
        if size != entry["size_bytes"]:
            raise Conflict(f"files: '{shown(entry['name'])}' is {size} bytes, not the {entry['size_bytes']} declared.")
        keys.append(entry["key"])
        try:  # a manifest written before names were held to the rule is held to it now
            name = file_name(entry["name"])
        except PathRefused as refused:
            raise BadRequest("files", f"'{shown(entry['name'])}' is refused: {refused.reason}.") from refused
        parts.append(FilePart(name, size, lambda key=entry["key"]: staging.chunks(key)))  # type: ignore[misc]
    check_caps(len(parts), sum(p.size for p in parts))
    return parts, keys


def commit_session(
    client: ForagerClient,
    staging: StagingStore,
    project: str,
    knowledge_base: str,
    commit: UploadCommit,
    key: str,
    book: JobBook,
) -> NamedJob:
    """Stream the staged batch to FORAGER; once it has answered, remove what was staged.

    A failed commit keeps the session (its parts stay staged until the lifecycle rule
    removes them), so the caller can commit it again under the same Idempotency-Key. Once
    FORAGER has the batch the job stands: a removal that fails is logged, not answered.
    """
    parts, keys = staged_parts(staging, project, knowledge_base, commit.session_id)
    job = _relay(
        lambda: client.upload(
            knowledge_base, parts, force=commit.force, admission_job_id=commit.admission_job_id, idempotency_key=key
        )
    )
    try:
        staging.discard(commit.session_id, keys)
    except Exception:  # FORAGER has the batch: the job stands, and the lifecycle rule clears staged/
        logger.exception("staged parts not removed", extra={"session_id": commit.session_id})
    return book.keep(knowledge_base, job, "upload", [part.filename for part in parts])


def preflight_session(
    client: ForagerClient, staging: StagingStore, project: str, knowledge_base: str, session_id: str, key: str
) -> Admission:
    """Measure a staged batch; the session stays, for the upload the admission authorises."""
    parts, _ = staged_parts(staging, project, knowledge_base, session_id)
    return _admission(_relay(lambda: client.preflight(knowledge_base, parts, idempotency_key=key)))


# ---------------------------------------------------------------------- idempotency
def upstream_key(actor: str, project: str, supplied: str) -> str:
    """The caller's Idempotency-Key as FORAGER is sent it: derived per caller and project,
    so two callers' keys can never name the same intent upstream."""
    digest = hashlib.sha256(f"{actor}\x00{project}\x00{supplied}".encode()).hexdigest()
    return f"ks1-{digest[:48]}"


def _relay(call: Callable[[], T]) -> T:
    """FORAGER's refusals of an ingestion call, in the envelope's codes and FORAGER's words."""
    try:
        return call()
    except UpstreamRefused as refused:
        if refused.upstream_status == 404:
            raise NotFound(NO_SUCH_JOB) from refused
        if refused.upstream_status == 409:
            raise Conflict(f"FORAGER refused: {refused.upstream_message}") from refused
        if refused.upstream_status == 413:
            raise PayloadTooLarge(f"FORAGER refused the batch: {refused.upstream_message}") from refused
        if refused.upstream_status == 403:
            raise PermissionDenied(f"FORAGER's own fence refused a path: {refused.upstream_message}") from refused
        raise


def _admission(answer: Admission) -> Admission:
    """FORAGER's measurement, counted when it refused the batch (``PreflightsRefused``)."""
    if not answer.admitted:
        observability.count("PreflightsRefused")
    return answer
