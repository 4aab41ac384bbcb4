"""Disagreements between statements: ``GET /api/projects/{ref}/conflicts`` and one conflict
as curation answers it (docs/upstream-contract.md, "Reads" and "Curation").
"""

from __future__ import annotations

from pydantic import Field

from knowledge_service.upstream.models.base import UpstreamModel
from knowledge_service.upstream.models.statements import StatementRow


class ConflictSource(UpstreamModel):
    source_id: str | None = None
    name: str
    type: str | None = None
    document_date: str | None = None


class Decision(UpstreamModel):
    action: str
    winner_id: str | None = None
    notes: str | None = None
    decided_by: str | None = None
    decided_at: str | None = None


class ConflictRecord(UpstreamModel):
    conflict_id: str
    project_ref: str
    title: str = ""
    type: str
    status: str
    sides: list[StatementRow] = Field(default_factory=list)
    suggested_resolution: str | None = None
    suggested_winner_id: str | None = None
    sources: list[ConflictSource] = Field(default_factory=list)
    detected_at: str | None = None
    decision: Decision | None = None


class ConflictRecords(UpstreamModel):
    conflicts: list[ConflictRecord] = Field(default_factory=list)
