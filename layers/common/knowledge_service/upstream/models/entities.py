"""People and other entities, their aliases and possible duplicates: ``/entities``, ``/people``,
``GET /api/entities/{id}`` and ``/duplicates`` (docs/upstream-contract.md, "Reads").
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from knowledge_service.upstream.models.base import UpstreamModel
from knowledge_service.upstream.models.search import EntityRef
from knowledge_service.upstream.models.statements import StatementRow


class PersonRow(UpstreamModel):
    """A row of FORAGER's People and organizations list."""

    entity_id: str
    name: str
    type: str
    aliases: list[str] = Field(default_factory=list)
    mention_count: int = 0
    knowledge_count: int = 0
    source_count: int = 0
    confidence: float = 0.0
    merged_count: int = 0
    status: str = "active"


class NamedEntity(PersonRow):
    matched: str | None = None


class NamedEntities(UpstreamModel):
    entities: list[NamedEntity] = Field(default_factory=list)


class PeoplePage(UpstreamModel):
    entities: list[PersonRow] = Field(default_factory=list)
    page: int
    page_size: int
    total: int


class DuplicateSide(EntityRef):
    aliases: list[str] = Field(default_factory=list)


class Duplicate(UpstreamModel):
    candidate_id: str
    entity_a: DuplicateSide
    entity_b: DuplicateSide
    confidence: float
    reason: str = ""
    status: str
    decided_by: str | None = None
    decided_at: str | None = None
    notes: str | None = None
    created_at: str | None = None


class DuplicateList(UpstreamModel):
    duplicates: list[Duplicate] = Field(default_factory=list)
    pending: int = 0


class Alias(UpstreamModel):
    alias: str
    kind: str
    confidence: float
    source_count: int = 0


class MergeRecord(UpstreamModel):
    merged_entity_id: str
    merged_name: str
    merged_by: str | None = None
    reason: str | None = None
    merged_at: str | None = None


class Relationship(UpstreamModel):
    from_label: str
    type: str
    to_label: str
    statement: str | None = None
    support: str | None = None
    confidence: float | None = None


class Mention(UpstreamModel):
    source_id: str
    source_name: str
    chunk_id: str | None = None
    text: str
    confidence: float | None = None


class EntityDetail(UpstreamModel):
    project_ref: str
    entity: PersonRow
    normalized_name: str = ""
    merged_into: str | None = None
    aliases: list[Alias] = Field(default_factory=list)
    merge_history: list[MergeRecord] = Field(default_factory=list)
    possible_duplicates: list[Duplicate] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)
    statements: list[StatementRow] = Field(default_factory=list)
    mentions: list[Mention] = Field(default_factory=list)
    attributes: dict[str, Any] = Field(default_factory=dict)
    created_at: str | None = None
