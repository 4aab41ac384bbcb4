"""Exports: FORAGER's export history, starting one, one export's state, and the archive.

Exporting is ``read_knowledge`` and ``knowledge.export`` in the catalog — never gated. The
download also takes the project's operator or admin role (exporting is an act of the operator's
rank: a project's admin and operator may, never its viewer): an
owner who holds no role reads the history and is refused the archive. How the archive is
verified (in the background, by the export verifier) and handed over is ``domain/exports.py``'s
docstring and docs/api.md.
"""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from knowledge_service.base_model import Model
from knowledge_service.domain import exports as domain, identifiers
from knowledge_service.domain.reads import Reader
from knowledge_service.edge.access import Standing, access, current_call
from knowledge_service.edge.envelope import Envelope, error_responses, ok
from knowledge_service.edge.params import ExportId, Project
from knowledge_service.identity.principal import Permission
from knowledge_service.runtime import runtime
from knowledge_service.upstream import models as upstream_models

router = APIGatewayRouter()

READ = access(Permission.READ_KNOWLEDGE, project=Standing.READ, capability="knowledge.export")
TAKE = access(Permission.READ_KNOWLEDGE, project=Standing.OPERATOR, capability="knowledge.export")
TAGS = ["exports"]


class ArchiveHandedOver(Model):
    """The 303's body: where the verified archive is, for a client that does not follow."""

    url: str
    sha256: str
    size_bytes: int
    file_name: str


def _reader(project: str | None) -> Reader:
    return current_call().reader(project)


@router.get(
    "/knowledge/exports",
    operation_id="list_exports",
    summary="FORAGER's export history for the knowledge base, newest first",
    tags=TAGS,
    openapi_extensions=READ,
    responses=error_responses(400, 401, 403, 404, 500, 502, 503, 504),
)
def get_exports(project: Project = None) -> Envelope[domain.ExportHistory]:
    return ok(domain.history(_reader(project)))


@router.post(
    "/knowledge/exports",
    operation_id="create_export",
    summary="Start an export (built in the background); the Idempotency-Key is passed through",
    tags=TAGS,
    openapi_extensions=TAKE,  # making one is exporting: the operator's rank (admin or operator, never viewer)
    responses=error_responses(400, 401, 403, 404, 409, 500, 502, 503, 504),
)
def post_export(
    request: Annotated[domain.StartExportRequest, Body()], project: Project = None
) -> Envelope[upstream_models.ExportRow]:
    headers = router.current_event.headers
    supplied = headers.get("Idempotency-Key") or headers.get("idempotency-key")
    reader = _reader(project)
    return ok(domain.start(reader, request, supplied, current_call().principal, runtime().events))


@router.get(
    "/knowledge/exports/<id>",
    operation_id="get_export",
    summary="One export's state, read while it builds",
    tags=TAGS,
    openapi_extensions=READ,
    responses=error_responses(400, 401, 403, 404, 500, 502, 503, 504),
)
def get_export(id: ExportId, project: Project = None) -> Envelope[upstream_models.ExportRow]:
    export_id = identifiers.record_id(id, "exp")
    return ok(domain.one(_reader(project), export_id))


@router.get(
    "/knowledge/exports/<id>/download",
    operation_id="download_export",
    summary="The verified archive: a 303 to a short-lived URL, or 409 not_ready while it is verified",
    tags=TAGS,
    openapi_extensions=TAKE,
    responses={
        200: {
            "description": "The same hand-over to the console's own script (X-Knowledge-Console: 1), which "
            "cannot read a redirect: the envelope's url is the presigned URL; one download, one event",
            "content": {"application/json": {"model": Envelope[ArchiveHandedOver]}},
        },
        303: {
            "description": "The archive is verified: Location is a presigned URL valid for five minutes; "
            "X-Export-Sha256 is its digest",
            "content": {"application/json": {"model": Envelope[ArchiveHandedOver]}},
        },
        **{k: v for k, v in error_responses(400, 401, 403, 404, 409, 410, 500, 502, 503, 504).items() if k != 200},
    },
)
def get_download(id: ExportId, project: Project = None) -> Response[str]:
    export_id = identifiers.record_id(id, "exp")
    rt = runtime()
    now = int(rt.clock().timestamp())
    handed = domain.download(_reader(project), rt.archives, rt.events, current_call().principal, export_id, now=now)
    headers = {"X-Export-Sha256": handed.sha256, "Cache-Control": "no-store"}
    if _from_the_console():
        # A page's script cannot read a redirect (fetch's manual mode answers an opaque one), so the
        # console was told only "303" and sent the browser to ask again: two hand-overs, two events
        # for one click. Its script is answered the hand-over itself and goes to the URL: one event.
        body = ok(ArchiveHandedOver(**handed.__dict__), message="The archive is verified; fetch url.")
        return Response(
            status_code=200, content_type=content_types.APPLICATION_JSON, body=body.model_dump_json(), headers=headers
        )
    body = ok(ArchiveHandedOver(**handed.__dict__), message="The archive is verified; follow Location.")
    return Response(
        status_code=303,
        content_type=content_types.APPLICATION_JSON,
        body=body.model_dump_json(),
        headers={"Location": handed.url, **headers},
    )


def _from_the_console() -> bool:
    """Whether the console's own script asks (its header, ``X-Knowledge-Console: 1``, which a page
    of another origin cannot send without a preflight this API never grants)."""
    headers = router.current_event.headers or {}
    return any(name.lower() == "x-knowledge-console" and value == "1" for name, value in headers.items())
