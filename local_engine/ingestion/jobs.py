"""Ingestion: jobs through the eleven stages, uploads and preflight admission
(docs/upstream-contract.md, "Ingestion").

A job's stage rows are its persisted state; ``progress`` is derived from them (the stages
completed over eleven) and nothing else. Jobs move on the engine's clock — a stage every
``stage_seconds``, caught up whenever the job is read — or, in ``poll`` pace, one step each
time the job is read, so a test can walk a job stage by stage.

Steering (control port or in-process): ``fail_at`` a stage for one job or the next one
queued; a cancel stops at the next stage boundary and keeps the stages completed; a retry
resumes a failed or cancelled job from its first stage not completed; the admission tier
the preflight measures against.
"""

from __future__ import annotations

import copy
import dataclasses
import errno
import logging
import os
import secrets
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, NamedTuple, Self
from urllib.parse import parse_qsl

from local_engine.ingestion import pipeline
from local_engine.serving import feed, multipart
from local_engine.serving.routing import ApiError, Handler, Request, Response, json_response, streamed
from local_engine.serving.state import EngineState, IdempotencyConflict
from local_engine.store.database import Emptied

logger = logging.getLogger("local_engine")
MESSAGE_MAX = 300
"""The most of a library's own words a job's sentence carries."""

STAGES = (
    "source_registration",
    "parsing_extraction",
    "normalization",
    "chunking",
    "semantic_extraction",
    "entity_resolution",
    "dedup_conflict",
    "provenance",
    "validation",
    "indexing",
    "export_availability",
)
TERMINAL = ("completed", "failed", "cancelled")
MB = 1024 * 1024
UPLOAD_MAX_BYTES = 100 * MB
UPLOAD_MAX_FILES = 400
DEFAULT_LIMIT_BYTES = 500 * MB
DEFAULT_ENTRY_LIMIT_BYTES = 100 * MB
REFUSED_SUFFIXES = (".exe", ".dll", ".so", ".dylib", ".bin")
STAGING = ".staging"  # under the upload root: uploads on their way in, each in a folder of its own
REF = r"(?P<ref>[a-z0-9_]{1,64})"
JOB = r"(?P<job>job_[0-9a-f]{16})"


def _now_text(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def megabytes(count: int) -> str:
    """Bytes in FORAGER's words: whole MB where exact, one decimal otherwise."""
    if count < MB // 10:
        return f"{count} bytes"
    value = count / MB
    return f"{int(value)} MB" if value == int(value) else f"{value:.1f} MB"


class Ticked(NamedTuple):
    """What one beat of the engine's clock did: ``moved``, a job went on to its next stage or ended
    (the next may be due at once: the clock beats again without a pause); ``moving``, a job is
    still on its way."""

    moved: bool
    moving: bool


@dataclass
class Job:
    job_id: str
    project_ref: str
    kind: str  # paths | upload
    inputs: list[str]
    force: bool
    created_at: float
    entries: int
    status: str = "queued"
    stage_index: int = 0  # the stage running, failed or stopped at
    stage_started_at: float = 0.0
    stage_status: list[str] = field(default_factory=lambda: ["pending"] * len(STAGES))
    cancel_requested: bool = False
    fail_at: str | None = None
    error: dict[str, Any] | None = None
    admission_job_id: str | None = None
    counts: list[dict[str, int] | None] = field(default_factory=lambda: [None] * len(STAGES))

    def kept(self) -> dict[str, Any]:
        """What the store keeps of the job (its checkpoint)."""
        return dataclasses.asdict(self)

    def to_json(self) -> dict[str, Any]:
        completed = sum(1 for s in self.stage_status if s == "completed")
        current = None if self.status in ("queued", "completed") else STAGES[self.stage_index]
        stages = []
        for name, status, ran in zip(STAGES, self.stage_status, self.counts, strict=True):
            counts = ran
            if counts is None:  # a stage not run (or the demo's own record): what it was given
                done = status in ("completed", "failed")
                failed = self.entries if status == "failed" else 0
                counts = {
                    "processed": self.entries - failed if done else 0,
                    "skipped": 0,
                    "failed": failed,
                    "warnings": 0,
                }
            stages.append({"name": name, "status": status, **counts})
        return {
            "job_id": self.job_id,
            "status": self.status,
            "current_stage": current,
            "progress": round(completed / len(STAGES), 4),
            "terminal": self.status in TERMINAL,
            "cancel_requested": self.cancel_requested,
            "created_at": _now_text(self.created_at),
            "error": copy.deepcopy(self.error),
            "stages": stages,
        }


@dataclass
class Admission:
    limit_bytes: int = DEFAULT_LIMIT_BYTES
    entry_limit_bytes: int = DEFAULT_ENTRY_LIMIT_BYTES
    entitled: bool = True
    working_storage_fails: bool = False


class IngestionBook:
    """Every project's jobs, the pace they move at, and the admission tier."""

    def __init__(self, state: EngineState) -> None:
        self.state = state
        # An upload the engine stopped under (a crash, a kill) left its staging folder: no job's.
        shutil.rmtree(state.upload_root / STAGING, ignore_errors=True)
        self.reset()

    def reset(self) -> None:
        with self.state.lock:
            self.jobs: dict[str, Job] = {}
            self.mode = "clock"
            self.stage_seconds = self.state.stage_seconds
            self.next_failure: dict[str, str] = {}
            self.admission = Admission()
            self.admissions: dict[str, tuple[str, int, int]] = {}  # id -> (ref, bytes, entries)
            store = self.state.store
            if store is not None:
                for kept in store.jobs():
                    self.jobs[kept["job_id"]] = Job(**kept)

    # -- the clock -----------------------------------------------------------------

    def _step(self, job: Job, now: float) -> None:
        """One step: queued → first stage, or the running stage ends (and the next begins)."""
        if job.status == "queued":
            job.status = "running"
            job.stage_index = 0
            job.stage_status[0] = "running"
            job.stage_started_at = now
            return
        if job.status != "running":
            return
        index = job.stage_index
        name = STAGES[index]
        if job.fail_at == name:
            job.stage_status[index] = "failed"
            job.status = "failed"
            job.error = {"stage": name, "code": "stage_failed", "message": f"The {name} stage failed."}
            return
        try:
            with self.state.store.bound():
                job.counts[index] = pipeline.STAGE_WORK[name](self.state.store, self._work(job)).to_json()
        except pipeline.Stopping:
            return  # the stage stays running: the next start runs it again from its sources' states
        except Emptied:
            return  # a reset emptied the store under the stage: the job is gone, and so is its work
        except pipeline.StageFailure as failure:
            self._failed(job, index, failure.code, failure.message)
            return
        except Exception as error:  # not a source's failure (a full disk, a locked store, a bug): the job's
            logger.exception("job %s failed at %s", job.job_id, name)
            self._failed(job, index, *stage_error(name, error))
            return
        job.stage_status[index] = "completed"
        if index == len(STAGES) - 1:
            job.status = "completed"
            return
        if job.cancel_requested:  # the boundary: completed work is kept, nothing more starts
            job.status = "cancelled"
            return
        job.stage_index = index + 1
        job.stage_status[index + 1] = "running"
        job.stage_started_at = now

    @staticmethod
    def _failed(job: Job, index: int, code: str, message: str) -> None:
        job.stage_status[index] = "failed"
        job.status = "failed"
        job.counts[index] = {"processed": 0, "skipped": 0, "failed": 1, "warnings": 0}
        job.error = {"stage": STAGES[index], "code": code, "message": message}

    def _work(self, job: Job) -> pipeline.Work:
        def publish(status: str, failed: int) -> dict[str, Any]:
            return feed.ledger(self.state).publish_revision(job.project_ref, status, failed, job.job_id)

        return pipeline.Work(
            job.job_id,
            job.project_ref,
            job.kind,
            list(job.inputs),
            job.force,
            upload_dir=self.state.upload_root / job.job_id,
            allowed_roots=list(self.state.allowed_roots),
            publish=publish,
            stopping=self.state.stopping,
            workers=self.state.workers,
            vectors=self.state.vectors,
        )

    def _checkpointed_step(self, job: Job, now: float) -> None:
        """One step, then the job's stage rows. A stage commits its output source by source, each
        taking only the sources the stage before left, so a stage run again after a crash does
        the rest of its work and nothing twice; the heavy part (reading and converting a file)
        runs outside the engine's lock, so the engine answers while a large job works."""
        self._step(job, now)
        with self.state.lock:
            if self.jobs.get(job.job_id) is job:  # not a job a reset dropped meanwhile
                try:
                    self._save(job)
                except (sqlite3.Error, OSError):  # the store cannot take it now (a full disk): kept in memory
                    logger.exception("job %s: its stage rows could not be saved", job.job_id)

    def _advance(self, job: Job, *, read: bool) -> None:
        """``poll`` pace: a read moves the job one step. ``clock``: :meth:`tick` moves it."""
        if self.mode == "poll" and read:
            self._checkpointed_step(job, time.time())

    def tick(self) -> Ticked:
        """The engine's own clock (a thread of the server): every job due moves one stage."""
        with self.state.lock:
            if self.mode != "clock":
                return Ticked(moved=False, moving=False)
            now = time.time()
            moving = [job for job in self.jobs.values() if job.status in ("queued", "running")]
            due = [
                job
                for job in moving
                if now >= (job.created_at if job.status == "queued" else job.stage_started_at) + self.stage_seconds
            ]
        moved = False
        for job in due:
            was = (job.status, job.stage_index)
            self._checkpointed_step(job, time.time())
            moved = moved or (job.status, job.stage_index) != was  # not a stage the engine's stop broke off
        return Ticked(moved=moved, moving=bool(moving))

    # -- the contract ----------------------------------------------------------------

    def _project(self, ref: str) -> None:
        if ref not in self.state.projects:
            raise ApiError(404, "not_found", f"There is no project '{ref}'.")

    def _job(self, ref: str, job_id: str) -> Job:
        self._project(ref)
        job = self.jobs.get(job_id)
        if job is None or job.project_ref != ref:
            raise ApiError(404, "not_found", f"There is no job '{job_id}'.")
        return job

    def _save(self, job: Job) -> None:
        self.state.store.save_job(job.job_id, job.project_ref, job.created_at, job.kept())

    def queue(
        self,
        ref: str,
        kind: str,
        inputs: list[str],
        force: bool,
        entries: int,
        staged: Staging | None = None,
        admission_job_id: str | None = None,
    ) -> dict[str, Any]:
        with self.state.lock:
            self._project(ref)
            job_id = "job_" + secrets.token_hex(8)
            if staged is not None:  # the files land before the job is acknowledged
                staged.move_to(self.state.upload_root / job_id)
            job = Job(job_id, ref, kind, list(inputs), force, time.time(), entries)
            job.fail_at = self.next_failure.pop(ref, None)
            job.admission_job_id = admission_job_id
            self.jobs[job_id] = job
            self._save(job)
            return job.to_json()

    def listing(self, ref: str, limit: int) -> list[dict[str, Any]]:
        with self.state.lock:
            self._project(ref)
            mine = sorted((j for j in self.jobs.values() if j.project_ref == ref), key=lambda j: -j.created_at)
            for job in mine[:limit]:
                self._advance(job, read=False)
            return [j.to_json() for j in mine[:limit]]

    def read(self, ref: str, job_id: str) -> dict[str, Any]:
        with self.state.lock:
            job = self._job(ref, job_id)
            self._advance(job, read=True)
            return job.to_json()

    def cancel(self, ref: str, job_id: str) -> dict[str, Any]:
        with self.state.lock:
            job = self._job(ref, job_id)
            self._advance(job, read=False)
            if job.status in TERMINAL:
                raise ApiError(409, "job_terminal", f"Job {job_id} is already {job.status}.")
            job.cancel_requested = True
            if job.status == "queued":
                job.status = "cancelled"
            self._save(job)
            return job.to_json()

    def retry(self, ref: str, job_id: str) -> dict[str, Any]:
        with self.state.lock:
            job = self._job(ref, job_id)
            self._advance(job, read=False)
            if job.status not in ("failed", "cancelled"):
                raise ApiError(
                    409,
                    "job_not_retryable",
                    f"Job {job_id} is {job.status}: only a failed or cancelled job is retried.",
                )
            resume = next(i for i, s in enumerate(job.stage_status) if s != "completed")
            job.fail_at = None
            job.error = None
            job.cancel_requested = False
            job.status = "running"
            job.stage_index = resume
            job.stage_status[resume] = "running"
            job.stage_started_at = time.time()
            self._save(job)
            return job.to_json()

    def fail_at(self, ref: str, stage: str, job_id: str | None = None) -> dict[str, Any]:
        if stage not in STAGES:
            raise ApiError(400, "bad_request", f"fail_at must be one of the eleven stages, not {stage!r}.")
        with self.state.lock:
            if job_id is None:
                self._project(ref)
                self.next_failure[ref] = stage
                return {"project_ref": ref, "fail_at": stage, "job_id": None}
            self._job(ref, job_id).fail_at = stage
            return {"project_ref": ref, "fail_at": stage, "job_id": job_id}

    def set_pace(self, mode: str, stage_seconds: float | None) -> dict[str, Any]:
        if mode not in ("clock", "poll"):
            raise ApiError(400, "bad_request", "mode must be clock or poll.")
        with self.state.lock:
            for job in self.jobs.values():  # settle the clock before the pace changes
                self._advance(job, read=False)
            self.mode = mode
            if stage_seconds is not None:
                self.stage_seconds = float(stage_seconds)
            return {"mode": self.mode, "stage_seconds": self.stage_seconds}

    def set_admission(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.state.lock:
            for name in ("limit_bytes", "entry_limit_bytes", "entitled", "working_storage_fails"):
                if name in body:
                    setattr(self.admission, name, body[name])
            return dict(self.admission.__dict__)

    def held(self, ref: str) -> list[dict[str, Any]]:
        with self.state.lock:
            self._project(ref)
            return [
                {
                    **j.to_json(),
                    "kind": j.kind,
                    "inputs": list(j.inputs),
                    "force": j.force,
                    "admission_job_id": j.admission_job_id,
                }
                for j in self.jobs.values()
                if j.project_ref == ref
            ]

    # -- uploads and admission -------------------------------------------------------

    def measure(self, ref: str, files: list[tuple[str, int]]) -> dict[str, Any]:
        """The admission gate, asked on its own: the bytes are measured and forgotten."""
        with self.state.lock:
            self._project(ref)
            tier = copy.copy(self.admission)
            if tier.working_storage_fails:
                self.admission.working_storage_fails = False
                raise ApiError(503, "working_storage", "Working storage could not take the batch to measure it.")
        measured = sum(size for _, size in files)
        rejected = [{"path": n, "reason": "type_refused"} for n, _ in files if n.lower().endswith(REFUSED_SUFFIXES)]
        oversized = [{"path": n, "bytes": s} for n, s in files if s > tier.entry_limit_bytes]
        largest = [{"path": n, "bytes": s} for n, s in sorted(files, key=lambda f: -f[1])[:5]]
        code = message = None
        if not tier.entitled:
            code, message = "no_entitlement", "This installation holds no import entitlement."
        elif measured > tier.limit_bytes:
            over = measured - tier.limit_bytes
            code = "over_tier_limit"
            message = (
                f"The batch measures {megabytes(measured)}, {megabytes(over)} over the plan's "
                f"{megabytes(tier.limit_bytes)}."
            )
        elif oversized:
            code = "entry_exceeds_grant"
            message = (
                f"{len(oversized)} of the batch's entries exceed the per-entry grant of "
                f"{megabytes(tier.entry_limit_bytes)}."
            )
        admitted = code is None
        admission_job_id = None
        if admitted:
            admission_job_id = "adm_" + secrets.token_hex(8)
            with self.state.lock:
                self.admissions[admission_job_id] = (ref, measured, len(files))
        admitted_count = len(files) - len(rejected) if admitted else 0
        return {
            "admitted": admitted,
            "measured_bytes": measured,
            "measured": megabytes(measured),
            "limit_bytes": tier.limit_bytes,
            "limit": megabytes(tier.limit_bytes),
            "admission_job_id": admission_job_id,
            "code": code,
            "message": message,
            "entry_count": len(files),
            "admitted_count": admitted_count,
            "rejected_count": len(files) - admitted_count,
            "measurement_truncated": False,
            "provisional": False,
            "largest": largest,
            "oversized": oversized,
            "rejected": rejected,
        }

    def upload(
        self,
        ref: str,
        files: list[tuple[str, int]],
        force: bool,
        admission_job_id: str | None,
        staged: Staging | None = None,
    ) -> dict[str, Any]:
        total = sum(size for _, size in files)
        if len(files) > UPLOAD_MAX_FILES or total > UPLOAD_MAX_BYTES:
            raise ApiError(413, "payload_too_large", "One upload is at most 100 MB and 400 files.")
        if not files:
            raise ApiError(400, "bad_request", "An upload needs at least one file part.")
        with self.state.lock:
            if admission_job_id is not None:
                admitted = self.admissions.get(admission_job_id)
                if admitted is None or admitted[0] != ref:
                    raise ApiError(
                        409, "admission_unknown", f"No admission {admission_job_id} was made for this project."
                    )
                if admitted[1:] != (total, len(files)):
                    raise ApiError(409, "admission_mismatch", "This batch is not the one the admission measured.")
            return self.queue(ref, "upload", [n for n, _ in files], force, len(files), staged, admission_job_id)


class Staging:
    """An upload's files written to disk as they arrive (a :class:`multipart.FileSink`), each to
    its own file named by its number, as a job's upload folder holds them, in a folder of its own
    under the upload root. When the job is made the folder becomes the job's (a rename on the
    same disk: nothing copied, nothing in memory); on a refusal, a replay or any failure —
    the body broke off, a name is refused — leaving the ``with`` removes it, so nothing
    half-written stays behind."""

    def __init__(self, upload_root: Path) -> None:
        self.folder = upload_root / STAGING / secrets.token_hex(8)
        self._handle: BinaryIO | None = None

    def __enter__(self) -> Self:
        self.folder.mkdir(parents=True)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._handle is not None:
            self._handle.close()
        shutil.rmtree(self.folder, ignore_errors=True)  # gone already once it is a job's

    def begin(self, number: int) -> None:
        self._handle = (self.folder / str(number)).open("wb")

    def write(self, data: bytes) -> None:
        assert self._handle is not None
        self._handle.write(data)

    def end(self) -> None:
        handle, self._handle = self._handle, None
        assert handle is not None
        with handle:
            handle.flush()
            os.fsync(handle.fileno())

    def move_to(self, folder: Path) -> None:
        """The staged files become ``folder``'s (a job's upload folder)."""
        self.folder.rename(folder)


class _Measured:
    """A preflight's file parts: the reader counts their bytes, and they are dropped."""

    def begin(self, number: int) -> None:
        pass

    def write(self, data: bytes) -> None:
        pass

    def end(self) -> None:
        pass


def parse_form(request: Request, files: multipart.FileSink) -> tuple[dict[str, str], list[tuple[str, int]]]:
    """A multipart/form-data body, read as it arrives: its text fields and each file part's name
    and length; the file parts' bytes go to ``files``."""
    content_type = request.header("Content-Type") or ""
    if not content_type.lower().startswith("multipart/form-data"):
        raise ApiError(400, "bad_request", "The body must be multipart/form-data.")
    boundary = ""
    for parameter in content_type.split(";")[1:]:
        name, _, value = parameter.strip().partition("=")
        if name.lower() == "boundary":
            boundary = value.strip('"')
    if not boundary:
        raise ApiError(400, "bad_request", "The multipart body names no boundary.")
    try:  # python-multipart's framing, each filename percent-decoded (local_engine/serving/multipart.py)
        parts = multipart.read(request.chunks, boundary, files)
    except multipart.FormRefused as refused:
        raise ApiError(400, "bad_request", str(refused)) from None
    fields = {p.name: p.data.decode("utf-8", "replace") for p in parts if p.filename is None}
    return fields, [(p.filename, p.size) for p in parts if p.filename is not None]


# ---------------------------------------------------------------------- the ports
def book(state: EngineState) -> IngestionBook:
    """The state's ingestion book, made on first use."""
    with state.lock:
        found = state.__dict__.get("_ingestion")
        if found is None:
            found = state.__dict__["_ingestion"] = IngestionBook(state)
        return found  # type: ignore[no-any-return]


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def api_routes(state: EngineState) -> list[tuple[str, str, Handler]]:
    jobs = book(state)

    def idempotent(request: Request, body: Any, make: Any) -> Response:
        key = request.idempotency_key or ""
        try:
            status, payload = state.idempotent(key, request.method, request.path, body, make, lambda s: 200)
        except IdempotencyConflict:
            raise ApiError(
                409, "idempotency_key_reused", "This Idempotency-Key was already used for a different request."
            ) from None
        return json_response(status, payload)

    def post_job(request: Request) -> Response:
        body = request.json_object()
        paths, force = body.get("paths"), body.get("force", False)
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p for p in paths):
            raise ApiError(400, "bad_request", "paths must be a non-empty list of paths.")
        ref = request.params["ref"]
        roots = state.allowed_roots
        for path in paths:
            if roots and not pipeline.allowed(Path(os.path.abspath(path)), list(roots)):
                raise ApiError(403, "path_not_allowed", f"The path {path} is under no allowed input root.")
        return idempotent(request, body, lambda: (202, jobs.queue(ref, "paths", paths, bool(force), len(paths))))

    def get_jobs(request: Request) -> Response:
        query = dict(parse_qsl(request.query))
        try:
            limit = int(query.get("limit", "20"))
        except ValueError:
            raise ApiError(400, "bad_request", "limit must be a number.") from None
        if not 1 <= limit <= 100:
            raise ApiError(400, "bad_request", "limit must be 1 to 100.")
        return json_response(200, {"jobs": jobs.listing(request.params["ref"], limit)})

    def get_job(request: Request) -> Response:
        return json_response(200, jobs.read(request.params["ref"], request.params["job"]))

    def post_cancel(request: Request) -> Response:
        ref, job_id = request.params["ref"], request.params["job"]
        return idempotent(request, None, lambda: (200, jobs.cancel(ref, job_id)))

    def post_retry(request: Request) -> Response:
        ref, job_id = request.params["ref"], request.params["job"]
        return idempotent(request, None, lambda: (200, jobs.retry(ref, job_id)))

    @streamed
    def post_upload(request: Request) -> Response:
        with Staging(state.upload_root) as staged:  # the files on disk as they arrive, the job's if one is made
            fields, files = parse_form(request, staged)
            ref = request.params["ref"]
            admission = fields.get("admission_job_id") or None
            force = _flag(fields.get("force"))
            fingerprint = {"files": files, "force": force, "admission_job_id": admission}
            return idempotent(request, fingerprint, lambda: (202, jobs.upload(ref, files, force, admission, staged)))

    @streamed
    def post_preflight(request: Request) -> Response:
        _, files = parse_form(request, _Measured())
        return json_response(200, jobs.measure(request.params["ref"], files))

    return [
        ("POST", rf"/api/projects/{REF}/jobs", post_job),
        ("GET", rf"/api/projects/{REF}/jobs", get_jobs),
        ("GET", rf"/api/projects/{REF}/jobs/{JOB}", get_job),
        ("POST", rf"/api/projects/{REF}/jobs/{JOB}/cancel", post_cancel),
        ("POST", rf"/api/projects/{REF}/jobs/{JOB}/retry", post_retry),
        ("POST", rf"/api/projects/{REF}/uploads", post_upload),
        ("POST", rf"/api/projects/{REF}/preflight", post_preflight),
    ]


def stage_error(stage: str, error: BaseException) -> tuple[str, str]:
    """The job's ``code`` and sentence for an error its stage did not expect: the engine's own
    words for the causes a person can remove (a full disk, a store another process holds), the
    library's words, cut short, for the rest. A retry after the cause is gone resumes the stage."""
    text = " ".join(str(error).split())[:MESSAGE_MAX]
    full = (isinstance(error, sqlite3.OperationalError) and "full" in text) or (
        isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT)
    )
    if full:
        return "storage_full", (
            f"The {stage} stage stopped: the engine's disk is full ({text}). Free space, then retry the job."
        )
    if isinstance(error, sqlite3.OperationalError) and "locked" in text:
        return "store_busy", f"The {stage} stage stopped: the engine's store is locked ({text}). Retry the job."
    return "stage_failed", f"The {stage} stage failed: {type(error).__name__}: {text}"


def control_routes(state: EngineState) -> list[tuple[str, str, Handler]]:
    jobs = book(state)

    def put_pace(request: Request) -> Response:
        body = request.json_object()
        return json_response(200, jobs.set_pace(str(body.get("mode", "clock")), body.get("stage_seconds")))

    def post_fault(request: Request) -> Response:
        body = request.json_object()
        return json_response(200, jobs.fail_at(request.params["ref"], str(body.get("fail_at")), body.get("job_id")))

    def put_admission(request: Request) -> Response:
        return json_response(200, jobs.set_admission(request.json_object()))

    def get_held(request: Request) -> Response:
        return json_response(200, {"jobs": jobs.held(request.params["ref"])})

    return [
        ("PUT", r"/jobs/pace", put_pace),
        ("POST", rf"/projects/{REF}/jobs/faults", post_fault),
        ("PUT", r"/admission", put_admission),
        ("GET", rf"/projects/{REF}/jobs", get_held),
    ]
