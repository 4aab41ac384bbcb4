"""A project's registered sources and one source with its chunks: ``GET /api/projects/{ref}/sources``
and ``GET /api/sources/{id}`` (docs/upstream-contract.md, "Reads").
"""

from __future__ import annotations

from pydantic import Field

from knowledge_service.upstream.models.base import UpstreamModel


class SourceError(UpstreamModel):
    code: str
    message: str
    stage: str | None = None


class SourceRow(UpstreamModel):
    """A registered source: hash, type, size, processing status, document date, markers."""

    source_id: str
    project_ref: str
    name: str
    type: str
    size_bytes: int
    content_hash: str
    logical_content_hash: str | None = None
    processing_status: str
    document_date: str | None = None
    duplicate_of: str | None = None
    superseded_by: str | None = None
    created_at: str | None = None
    error: SourceError | None = None
    """Why a ``failed`` source could not be read (FORAGER's ``{code, message, stage}``)."""


class RegisteredSources(UpstreamModel):
    sources: list[SourceRow] = Field(default_factory=list)


class Chunk(UpstreamModel):
    chunk_id: str
    index: int
    location: str | None = None
    heading: str | None = None
    text: str
    char_start: int | None = None
    char_end: int | None = None
    token_estimate: int | None = None
    content_hash: str | None = None


class SourceDetail(UpstreamModel):
    source: SourceRow
    relative_path: str | None = None
    mime_type: str | None = None
    origin: str | None = None
    ingestion_status: str | None = None
    error: SourceError | None = None
    parser: str | None = None
    char_count: int = 0
    created_at: str | None = None
    knowledge_count: int = 0
    duplicates: list[SourceRow] = Field(default_factory=list)
    text: str | None = None
    chunks: list[Chunk] = Field(default_factory=list)
    chunk_total: int | None = None
