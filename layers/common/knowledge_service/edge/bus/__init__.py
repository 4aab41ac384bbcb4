"""The bus's edge: what EventBridge invokes, one module a function (``door.bus``), each with its
``handler``: ``six_hourly_pass`` (the schedule's), ``mission_intake`` (the agent missions'),
``search_compaction`` (the page search compactor's, on the pages signals) and
``export_verification`` (the export verifier's, on the verifications downloads ask for) and
``kb_archive`` (the knowledge base archive builder's)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger

from knowledge_service.domain import identifiers
from knowledge_service.errors import ServiceError


def project_named(event: dict[str, Any], logger: Logger) -> str | None:
    """The well-formed project an event's detail names; None (logged) when it names none."""
    detail = event.get("detail")
    detail = detail if isinstance(detail, dict) else {}
    try:
        return identifiers.project_id(str(detail.get("project", "")), "project")
    except ServiceError:
        logger.warning("no project", extra={"detail_type": event.get("detail-type"), "event_id": event.get("id")})
        return None
