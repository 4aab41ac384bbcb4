"""A project's change feed, its head revision, its sources and the receipts the consumer
sends back (docs/upstream-contract.md, "Change feed").
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from knowledge_service.upstream.models.base import UpstreamModel

REVISION_PUBLISHED = "knowledge.revision.published"


EXPORT_COMPLETED = "knowledge.export.completed"


class FeedEnvelope(UpstreamModel):
    """One envelope on a project's feed (protocol_version 1). ``raw`` is kept verbatim."""

    protocol_version: int
    event_id: str
    event_type: str
    sequence: int
    stream: str
    producer_instance_id: str
    producer_generation: str
    occurred_at: str
    payload: dict[str, object] = Field(default_factory=dict)


class FeedPage(UpstreamModel):
    instance_id: str
    generation: str
    stream: str
    envelopes: list[dict[str, object] | str] = Field(default_factory=list)  # a str: the JSON text as forwarded
    head_sequence: int | None = None  # absent: the consumer cannot tell a restore by the head alone


class HeadRevision(UpstreamModel):
    revision_id: str
    publication_sequence: int
    publication_status: str
    logical_content_hash: str
    record_count: int = 0
    failed_source_count: int = 0


class ForagerSource(UpstreamModel):
    source_id: str
    project_ref: str
    name: str
    logical_content_hash: str
    processing_status: str = "completed"


class SourceList(UpstreamModel):
    sources: list[ForagerSource] = Field(default_factory=list)


class ReceiptAnswer(UpstreamModel):
    event_id: str
    status: str


class FeedCursorRefused(Exception):
    """FORAGER refused the cursor: ``cursor_expired``, ``cursor_ahead`` or ``generation_changed``."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
