"""``GET /api/projects/{ref}/search``: ranked candidates (docs/upstream-contract.md, "Reads")."""

from __future__ import annotations

from pydantic import Field

from knowledge_service.upstream.models.base import UpstreamModel


class EntityRef(UpstreamModel):
    entity_id: str
    name: str
    type: str


class SearchHit(UpstreamModel):
    knowledge_id: str
    statement: str
    type: str
    support: str
    status: str
    confidence: float
    score: float
    why: str = ""
    evidence_count: int = 0
    contested: bool = False


class SearchResult(UpstreamModel):
    query: str
    backend: str = ""
    took_ms: int = 0
    hits: list[SearchHit] = Field(default_factory=list)
    entities: list[EntityRef] = Field(default_factory=list)
