"""Statements, one knowledge item and its evidence: ``GET /api/knowledge/{id}``,
``/evidence`` and ``GET /api/projects/{ref}/statements`` (docs/upstream-contract.md, "Reads").
"""

from __future__ import annotations

from pydantic import Field
from typing_extensions import TypeAliasType

from knowledge_service.upstream.models.base import UpstreamModel
from knowledge_service.upstream.models.search import EntityRef


class EvidenceLink(UpstreamModel):
    evidence_id: str
    knowledge_id: str
    source_id: str | None = None
    source_name: str
    chunk_id: str | None = None
    location: str | None = None
    excerpt: str | None = None
    excerpt_hash: str | None = None
    extractor: str | None = None
    missing_excerpt: bool = False
    char_start: int | None = None
    """Where the excerpt stands in the source's extracted text (``GET /api/sources/{id}``'s ``text``)."""
    char_end: int | None = None


class StatementRow(UpstreamModel):
    """A statement as FORAGER's Knowledge page lists it."""

    knowledge_id: str
    project_ref: str
    title: str = ""
    statement: str
    type: str
    subject: str | None = None
    support: str
    status: str
    confidence: float
    confidentiality: str | None = None
    review_status: str = "unreviewed"
    evidence_count: int = 0
    conflict_ids: list[str] = Field(default_factory=list)
    contested: bool = False
    effective_date: str | None = None
    extraction_method: str | None = None
    entities: list[EntityRef] = Field(default_factory=list)


class KnowledgeItem(StatementRow):
    """One statement with its evidence ids and what a person decided about it (K2)."""

    evidence_ids: list[str] = Field(default_factory=list)
    has_provenance: bool = False
    review_notes: str | None = None
    reviewed_by: str | None = None
    reviewed_at: str | None = None
    created_at: str | None = None


class EvidenceList(UpstreamModel):
    knowledge_id: str
    project_ref: str
    evidence: list[EvidenceLink] = Field(default_factory=list)


FacetCounts = TypeAliasType("FacetCounts", dict[str, int])
"""One facet's values and how many statements hold each; a named schema in the OpenAPI
document, so a generated client calls it ``FacetCounts``."""


class StatementsPage(UpstreamModel):
    items: list[StatementRow] = Field(default_factory=list)
    page: int
    page_size: int
    total: int
    facets: dict[str, FacetCounts] = Field(default_factory=dict)
