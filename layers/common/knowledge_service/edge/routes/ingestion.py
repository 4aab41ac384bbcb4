"""Ingestion: jobs, uploads (inline, or through an S3 upload session) and preflight admission.

Every POST that reaches FORAGER carries an Idempotency-Key: the caller's, derived per caller
and project (``domain.ingestion.upstream_key``), or one minted for the call. With the
caller's key the edge's own answer is kept too (Powertools idempotency, keyed by the
caller, the project and the key): a replay answers the same job without asking FORAGER
again; the same key with a different request is 422 ``idempotency_key_reused``; one still
in flight is 409 ``conflict``.
"""

from __future__ import annotations

import base64
import hashlib
import re
import uuid
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel, ValidationError

from knowledge_service.domain import identifiers, ingestion
from knowledge_service.domain.scope import Scope
from knowledge_service.edge.access import REQUEST_BODY_KEY, Standing, access, current_call, scope_of
from knowledge_service.edge.body import read_json
from knowledge_service.edge.envelope import Envelope, error_responses, ok
from knowledge_service.edge.params import Project
from knowledge_service.edge.resolver import bad_request_from
from knowledge_service.edge.upload_form import Form, flag, parse_form
from knowledge_service.errors import BadRequest, PayloadTooLarge
from knowledge_service.identity.principal import Permission
from knowledge_service.runtime import runtime
from knowledge_service.upstream.models import Admission

router = APIGatewayRouter()

ModelT = TypeVar("ModelT", bound=BaseModel)

IDEMPOTENCY_KEY_MAX = 255
TAGS = ["ingestion"]
MANAGE = access(Permission.MANAGE_KNOWLEDGE, project=Standing.OPERATOR)
READ = access(Permission.READ_KNOWLEDGE, project=Standing.READ)
POSTS = error_responses(400, 401, 403, 404, 409, 422, 500, 502, 503, 504)
UPLOADS = error_responses(400, 401, 403, 404, 409, 413, 422, 500, 502, 503, 504)
UPLOAD_FIELDS = frozenset({"project", "force", "admission_job_id"})
PREFLIGHT_FIELDS = frozenset({"project"})

JobId = Annotated[str, Path(pattern=ingestion.JOB_ID)]
NamedJob = ingestion.NamedJob


def _form_schema(with_upload_fields: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "files": {"type": "array", "items": {"type": "string", "format": "binary"}, "minItems": 1, "maxItems": 400},
        "project": {"type": "string", "maxLength": 63, "pattern": identifiers.PROJECT_OR_DEFAULT_PATTERN},
    }
    if with_upload_fields:
        properties["force"] = {"type": "string", "enum": ["true", "false"]}
        properties["admission_job_id"] = {"type": "string", "pattern": identifiers.ADMISSION_ID_OR_NONE_PATTERN}
    return {"type": "object", "properties": properties, "required": ["files"], "additionalProperties": False}


def _request_body(form: dict[str, Any], session_model: type[BaseModel]) -> dict[str, Any]:
    return {
        REQUEST_BODY_KEY: {
            "required": True,
            "content": {
                "multipart/form-data": {"schema": form},
                "application/json": {"schema": session_model.model_json_schema()},
            },
        }
    }


# ---------------------------------------------------------------------- jobs
@router.post(
    "/knowledge/jobs",
    operation_id="create_job",
    summary="Queue an import of workspace folders; answers the job at once",
    tags=TAGS,
    openapi_extensions=MANAGE,
    responses=POSTS,
)
def post_job(request: Annotated[ingestion.JobRequest, Body()], project: Project = None) -> Envelope[NamedJob]:
    rt = runtime()
    scope = scope_of(_one_project(project, request.project))
    client = rt.upstream.client(scope.settings)
    return ok(
        _once(
            scope,
            {"route": "jobs", **request.model_dump(mode="json", exclude={"project"})},
            NamedJob,
            lambda key: ingestion.queue_job(
                client, rt.env.knowledge_workspace_root, scope.knowledge_base, request, key, _book()
            ),
        )
    )


@router.get(
    "/knowledge/jobs",
    operation_id="list_jobs",
    summary="Recent jobs, newest first",
    tags=TAGS,
    openapi_extensions=READ,
    responses=error_responses(400, 401, 403, 404, 500, 502, 503, 504),
)
def get_jobs(
    project: Project = None, limit: Annotated[int, Query(ge=1, le=ingestion.JOBS_LIMIT_MAX)] = 20
) -> Envelope[ingestion.JobsAnswer]:
    rt = runtime()
    scope = scope_of(project)
    return ok(ingestion.list_jobs(rt.upstream.client(scope.settings), scope.knowledge_base, limit, _book()))


@router.get(
    "/knowledge/jobs/<id>",
    operation_id="get_job",
    summary="One job's persisted stage state",
    tags=TAGS,
    openapi_extensions=READ,
    responses=error_responses(400, 401, 403, 404, 500, 502, 503, 504),
)
def get_job(id: JobId, project: Project = None) -> Envelope[NamedJob]:
    rt = runtime()
    scope = scope_of(project)
    return ok(ingestion.get_job(rt.upstream.client(scope.settings), scope.knowledge_base, id, _book()))


@router.post(
    "/knowledge/jobs/<id>/cancel",
    operation_id="cancel_job",
    summary="Cancel a job: it stops at the next stage boundary and keeps completed work",
    tags=TAGS,
    openapi_extensions=MANAGE,
    responses=POSTS,
)
def post_cancel(id: JobId, project: Project = None) -> Envelope[NamedJob]:
    return _act_on_job("cancel", id, project)


@router.post(
    "/knowledge/jobs/<id>/retry",
    operation_id="retry_job",
    summary="Retry a failed or cancelled job from its checkpoints, not from the start",
    tags=TAGS,
    openapi_extensions=MANAGE,
    responses=POSTS,
)
def post_retry(id: JobId, project: Project = None) -> Envelope[NamedJob]:
    return _act_on_job("retry", id, project)


def _act_on_job(act: ingestion.JobAct, id: str, project: str | None) -> Envelope[NamedJob]:
    """Cancel or retry: once per caller's key (:func:`_once`), the act named in the kept request."""
    scope = scope_of(project)
    client = runtime().upstream.client(scope.settings)
    return ok(
        _once(
            scope,
            {"route": act, "job_id": id},
            NamedJob,
            lambda key: ingestion.act_on_job(client, scope.knowledge_base, id, act, key, _book()),
        )
    )


# ---------------------------------------------------------------------- uploads
@router.post(
    "/knowledge/upload/sessions",
    operation_id="create_upload_session",
    summary="Open an upload session: one presigned PUT per file, for a batch too large to send inline",
    tags=TAGS,
    openapi_extensions=MANAGE,
    responses=error_responses(400, 401, 403, 404, 409, 413, 422, 500, 503),
)
def post_upload_session(
    request: Annotated[ingestion.UploadSessionRequest, Body()], project: Project = None
) -> Envelope[ingestion.UploadSession]:
    rt = runtime()
    scope = scope_of(_one_project(project, request.project))
    rt.upstream.client(scope.settings)  # knowledge usable (configured), before anything is staged
    actor = current_call().principal.name
    return ok(
        _once(
            scope,
            {"route": "upload/sessions", **request.model_dump(mode="json", exclude={"project"})},
            ingestion.UploadSession,
            lambda _: ingestion.open_session(rt.staging, scope.project, scope.knowledge_base, request, actor),
        )
    )


@router.post(
    "/knowledge/upload",
    operation_id="upload_documents",
    summary="Upload files: multipart inline, or commit an upload session by its id; answers the job",
    tags=TAGS,
    openapi_extensions={**MANAGE, **_request_body(_form_schema(True), ingestion.UploadCommit)},
    responses=UPLOADS,
)
def post_upload(project: Project = None) -> Envelope[NamedJob]:
    rt = runtime()
    scope, body = _scope_and_body(project, ingestion.UploadCommit, UPLOAD_FIELDS)
    client = rt.upstream.client(scope.settings)
    if isinstance(body, ingestion.UploadCommit):
        commit = body
        return ok(
            _once(
                scope,
                {"route": "upload", **commit.model_dump(mode="json", exclude={"project"})},
                NamedJob,
                lambda key: ingestion.commit_session(
                    client, rt.staging, scope.project, scope.knowledge_base, commit, key, _book()
                ),
            )
        )
    files = [(f.filename, f.data) for f in body.files]
    if not files:
        raise BadRequest("files", "at least one file part is required.")
    force = flag(body.fields, "force")
    admission = body.fields.get("admission_job_id") or None
    if admission is not None and not re.fullmatch(ingestion.ADMISSION_ID, admission):
        raise BadRequest("admission_job_id", identifiers.ADMISSION_ID_PROBLEM)
    return ok(
        _once(
            scope,
            {"route": "upload", "force": force, "admission_job_id": admission, "files": _fingerprint(files)},
            NamedJob,
            lambda key: ingestion.upload_inline(
                client, scope.knowledge_base, files, force=force, admission_job_id=admission, key=key, book=_book()
            ),
        )
    )


@router.post(
    "/knowledge/preflight",
    operation_id="preflight_upload",
    summary="Measure a batch as FORAGER's admission does; nothing is registered or kept",
    tags=TAGS,
    openapi_extensions={**MANAGE, **_request_body(_form_schema(False), ingestion.PreflightSession)},
    responses=UPLOADS,
)
def post_preflight(project: Project = None) -> Envelope[Admission]:
    rt = runtime()
    scope, body = _scope_and_body(project, ingestion.PreflightSession, PREFLIGHT_FIELDS)
    client = rt.upstream.client(scope.settings)
    key = _forwarded_key(scope)
    if isinstance(body, ingestion.PreflightSession):
        return ok(
            ingestion.preflight_session(client, rt.staging, scope.project, scope.knowledge_base, body.session_id, key)
        )
    files = [(f.filename, f.data) for f in body.files]
    if not files:
        raise BadRequest("files", "at least one file part is required.")
    return ok(ingestion.preflight_inline(client, scope.knowledge_base, files, key))


# ---------------------------------------------------------------------- plumbing
def _book() -> ingestion.JobBook:
    """Where what each job was given is kept, for the caller of this request."""
    rt = runtime()
    return ingestion.JobBook(rt.job_inputs, current_call().principal.name, rt.clock)


def _one_project(query: str | None, body: str | None) -> str | None:
    """The one project a call names: an empty one (``""``, like one left out) names none."""
    if query and body and query != body:
        scope_of(query)  # each is held first: a caller without standing learns nothing more,
        scope_of(body)  # and one that names no project is told so (404), not that they differ
        raise BadRequest("project", "is named twice, differently (the query and the body).")
    return body or query


def _scope_and_body(
    project: str | None, session_model: type[ModelT], fields: frozenset[str]
) -> tuple[Scope, ModelT | Form]:
    """The call's scope and its body: a session (JSON) or an inline form (multipart).

    The body is bounded before it is read. A project named in the query is held first, so
    a caller without standing learns nothing from the body; one named only in the body is
    held as soon as the body is read.
    """
    event = router.current_event
    scope = scope_of(project) if project else None
    content_type = event.headers.get("content-type") or event.headers.get("Content-Type") or ""
    raw = _bounded_body(event.body or "", bool(event.is_base64_encoded))
    body: ModelT | Form
    if content_type.split(";")[0].strip().lower() == "application/json":
        try:
            body = session_model.model_validate(read_json(raw or b"{}"))  # the one bounded reader
        except ValidationError as error:
            raise bad_request_from([dict(e) for e in error.errors()]) from error
        named = getattr(body, "project", None)
    else:
        body = parse_form(raw, content_type, fields)
        named = body.fields.get("project")
    if scope is None:
        scope = scope_of(named or None)
    elif named and named != scope.project:
        scope_of(named)  # one that names no project is told so (404), not that they differ
        raise BadRequest("project", "is named twice, differently (the query and the body).")
    return scope, body


def _bounded_body(body: str, is_base64: bool) -> bytes:
    limit = ingestion.INLINE_MAX_BYTES
    encoded_limit = (limit + 2) // 3 * 4 if is_base64 else limit * 4  # UTF-8 text: at most 4 bytes a character
    if len(body) > encoded_limit:
        raise PayloadTooLarge(_inline_refusal(limit))
    raw = base64.b64decode(body) if is_base64 else body.encode("utf-8", "surrogateescape")
    if len(raw) > limit:
        raise PayloadTooLarge(_inline_refusal(limit))
    return raw


def _inline_refusal(limit: int) -> str:
    return (
        f"An inline upload is at most {limit} bytes; send a larger batch through an upload session "
        "(POST /knowledge/upload/sessions, then a PUT per file, then POST /knowledge/upload with its session_id)."
    )


def _fingerprint(files: list[tuple[str, bytes]]) -> list[list[Any]]:
    return [[name, len(data), hashlib.sha256(data).hexdigest()] for name, data in files]


def _supplied_key() -> str | None:
    headers = router.current_event.headers
    supplied = headers.get("Idempotency-Key") or headers.get("idempotency-key")
    if supplied is not None and not (0 < len(supplied) <= IDEMPOTENCY_KEY_MAX and supplied.isascii()):
        raise BadRequest("Idempotency-Key", f"must be 1 to {IDEMPOTENCY_KEY_MAX} ASCII characters.")
    return supplied


def _forwarded_key(scope: Scope) -> str:
    supplied = _supplied_key()
    if supplied is None:
        return uuid.uuid4().hex
    return ingestion.upstream_key(current_call().principal.name, scope.project, supplied)


def _once(scope: Scope, payload: dict[str, Any], model: type[ModelT], act: Callable[[str], ModelT]) -> ModelT:
    """Run ``act`` with the key FORAGER is sent; with the caller's key, at most once per request."""
    supplied = _supplied_key()
    if supplied is None:
        return act(uuid.uuid4().hex)
    actor = current_call().principal.name
    key = ingestion.upstream_key(actor, scope.project, supplied)
    return runtime().idempotency.once(
        f"{actor}:{scope.project}:{supplied}",
        payload,
        model,
        lambda: act(key),
        lambda_context=router.lambda_context,
        reuse_is_unprocessable=True,
    )
