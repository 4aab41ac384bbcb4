"""Knowledge changes: GET /knowledge/changes, scan, queue, dismiss, and POST /knowledge/seed."""

from __future__ import annotations

from typing import Annotated, Literal

from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from knowledge_service.domain import findings, identifiers
from knowledge_service.edge.access import Standing, access, scope_of
from knowledge_service.edge.envelope import Envelope, error_responses, ok
from knowledge_service.edge.params import Project
from knowledge_service.identity.principal import Permission
from knowledge_service.runtime import runtime

router = APIGatewayRouter()

FindingId = Annotated[str, Path(pattern=r"^[0-9a-f]{1,64}$")]


@router.get(
    "/knowledge/changes",
    operation_id="list_changes",
    summary="Findings: what changed in the knowledge base since the colony last studied it",
    tags=["changes"],
    openapi_extensions=access(Permission.READ_KNOWLEDGE, project=Standing.READ),
    responses=error_responses(400, 401, 403, 404, 500, 502, 503, 504),
)
def get_changes(
    status: Annotated[Literal["open", "all"], Query()] = "open",
    limit: Annotated[int, Query(ge=1, le=findings.FINDINGS_PAGE_MAX)] = findings.FINDINGS_PAGE_DEFAULT,
    cursor: Annotated[
        str | None,
        Query(
            max_length=identifiers.CHANGES_CURSOR_MAX,
            pattern=identifiers.CHANGES_CURSOR_PATTERN,
            description="A place in the findings (the next_cursor an answer gave): the page after it",
        ),
    ] = None,
    project: Project = None,
) -> Envelope[findings.FindingsAnswer]:
    rt = runtime()
    scope = scope_of(project)
    rt.upstream.answering(scope.settings)  # 503 while knowledge is off or down, as every route but status
    return ok(findings.list_findings(rt.findings, scope.knowledge_base, status, limit=limit, cursor=cursor))


@router.post(
    "/knowledge/changes/scan",
    operation_id="scan_changes",
    summary="Run the analysis now and queue nothing",
    tags=["changes"],
    openapi_extensions=access(Permission.READ_KNOWLEDGE, project=Standing.READ),
    responses=error_responses(400, 401, 403, 404, 500, 502, 503, 504),
)
def post_scan(project: Project = None) -> Envelope[findings.ScanAnswer]:
    rt = runtime()
    scope = scope_of(project)
    return ok(findings.scan(rt.upstream.client(scope.settings), rt.findings, scope.knowledge_base))


@router.post(
    "/knowledge/changes/<id>/queue",
    operation_id="queue_change",
    summary="Turn one finding into a mission",
    tags=["changes"],
    openapi_extensions=access(Permission.MANAGE_KNOWLEDGE, project=Standing.OPERATOR),
    responses=error_responses(400, 401, 403, 404, 409, 500, 502, 503, 504),
)
def post_queue(id: FindingId, project: Project = None) -> Envelope[findings.FindingView]:
    rt = runtime()
    scope = scope_of(project)
    rt.upstream.answering(scope.settings)
    return ok(findings.queue_finding(rt.findings, rt.missions, scope.knowledge_base, id, scope.project))


@router.post(
    "/knowledge/changes/<id>/dismiss",
    operation_id="dismiss_change",
    summary="Record that a finding needs no mission",
    tags=["changes"],
    openapi_extensions=access(Permission.MANAGE_KNOWLEDGE, project=Standing.OPERATOR),
    responses=error_responses(400, 401, 403, 404, 409, 500, 502, 503, 504),
)
def post_dismiss(id: FindingId, project: Project = None) -> Envelope[findings.FindingView]:
    rt = runtime()
    scope = scope_of(project)
    rt.upstream.answering(scope.settings)
    return ok(findings.dismiss_finding(rt.findings, scope.knowledge_base, id))


@router.post(
    "/knowledge/seed",
    operation_id="seed_studies",
    summary="Study every source: a mission per source not yet studied at its hash, and its seed receipt",
    tags=["changes"],
    openapi_extensions=access(Permission.MANAGE_KNOWLEDGE, project=Standing.OPERATOR),
    responses=error_responses(400, 401, 403, 404, 500, 502, 503, 504),
)
def post_seed(project: Project = None) -> Envelope[findings.SeedAnswer]:
    rt = runtime()
    scope = scope_of(project)
    return ok(
        findings.seed(rt.upstream.client(scope.settings), rt.findings, rt.missions, scope.knowledge_base, scope.project)
    )
