"""``POST /api/projects/{ref}/retrieve``: evidence, entities and conflicts assembled into a
context (docs/upstream-contract.md, "Reads").
"""

from __future__ import annotations

from pydantic import Field

from knowledge_service.upstream.models.base import UpstreamModel
from knowledge_service.upstream.models.conflicts import ConflictRecord
from knowledge_service.upstream.models.entities import PersonRow
from knowledge_service.upstream.models.statements import EvidenceLink, StatementRow


class RetrievedItem(StatementRow):
    evidence: list[EvidenceLink] = Field(default_factory=list)


class Retrieval(UpstreamModel):
    query: str
    items: list[RetrievedItem] = Field(default_factory=list)
    entities: list[PersonRow] = Field(default_factory=list)
    conflicts: list[ConflictRecord] = Field(default_factory=list)
    rendered: str
