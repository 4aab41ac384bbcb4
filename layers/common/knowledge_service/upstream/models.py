"""What FORAGER answers, as the edge reads it (docs/upstream-contract.md).

Upstream models ignore fields they do not know: FORAGER may add a field without a
colony release. They still refuse an answer that lacks what the edge relies on.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import ConfigDict, Field

from knowledge_service.base_model import Model


class UpstreamModel(Model):
    # defer_build: a model's validator is built the first time it validates (or a route's
    # schema needs it), not when this module is imported — a function builds the few answers
    # its routes read, not all of FORAGER's contract, on every cold start.
    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)


class EngineStatus(UpstreamModel):
    version: str
    schema_version: int
    search_backend: str
    model_provider: str


class AnthillExport(UpstreamModel):
    package_version: int | None = None


class ExportCapabilities(UpstreamModel):
    anthill: AnthillExport | None = None


class Capabilities(UpstreamModel):
    instance_id: str | None = None
    generation: str | None = None
    change_feed: bool = False
    exports: ExportCapabilities | None = None

    @property
    def package_version(self) -> int | None:
        if self.exports is None or self.exports.anthill is None:
            return None
        return self.exports.anthill.package_version


class ForagerProject(UpstreamModel):
    project_ref: str
    name: str
    description: str = ""
    source_count: int = 0
    knowledge_count: int = 0
    open_conflict_count: int = 0
    state: str = "ready"


class ProjectList(UpstreamModel):
    projects: list[ForagerProject] = Field(default_factory=list)


# ---------------------------------------------------------------------- the change feed
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


# ---------------------------------------------------------------------------------------- reads
# What FORAGER's read routes answer (docs/upstream-contract.md, "Reads"). The edge answers
# these shapes on to its callers, so their field names are the documented ones.


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


class StatementsPage(UpstreamModel):
    items: list[StatementRow] = Field(default_factory=list)
    page: int
    page_size: int
    total: int
    facets: dict[str, dict[str, int]] = Field(default_factory=dict)


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


class RegisteredSources(UpstreamModel):
    sources: list[SourceRow] = Field(default_factory=list)


class SourceError(UpstreamModel):
    code: str
    message: str
    stage: str | None = None


class Chunk(UpstreamModel):
    chunk_id: str
    index: int
    location: str | None = None
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


class RetrievedItem(StatementRow):
    evidence: list[EvidenceLink] = Field(default_factory=list)


class Retrieval(UpstreamModel):
    query: str
    items: list[RetrievedItem] = Field(default_factory=list)
    entities: list[PersonRow] = Field(default_factory=list)
    conflicts: list[ConflictRecord] = Field(default_factory=list)
    rendered: str


# ---------------------------------------------------------------------- ingestion
JobStatus = Literal["queued", "running", "completed", "failed", "cancelled"]
StageStatus = Literal["pending", "running", "completed", "failed"]
StageName = Literal[
    "source_registration",
    "parsing_extraction",
    "normalization",
    "chunking",
    "semantic_extraction",
    "entity_resolution",
    "dedup_conflict",
    "provenance",
    "validation",
    "indexing",
    "export_availability",
]
STAGES: tuple[str, ...] = get_args(StageName)
"""The eleven stages of an ingestion job, in the order FORAGER runs them."""


class JobStage(UpstreamModel):
    name: StageName
    status: StageStatus
    processed: int = Field(ge=0)
    skipped: int = Field(ge=0)
    failed: int = Field(ge=0)
    warnings: int = Field(ge=0)


class JobError(UpstreamModel):
    stage: StageName | None = None
    code: str
    message: str


class Job(UpstreamModel):
    """FORAGER's persisted stage state of one job, relayed as it is (never interpolated)."""

    job_id: str
    status: JobStatus
    current_stage: StageName | None = None
    progress: float = Field(ge=0, le=1)
    terminal: bool
    cancel_requested: bool = False
    created_at: str | None = None
    error: JobError | None = None
    stages: list[JobStage]


class JobList(UpstreamModel):
    jobs: list[Job] = Field(default_factory=list)


class MeasuredEntry(UpstreamModel):
    path: str
    bytes: int = Field(ge=0)


class RejectedEntry(UpstreamModel):
    path: str
    reason: str


class Admission(UpstreamModel):
    """FORAGER's admission measurement of a batch (W1-07 §6): an answer, admitted or not."""

    admitted: bool
    measured_bytes: int = Field(ge=0)
    measured: str
    limit_bytes: int = Field(ge=0)
    limit: str
    admission_job_id: str | None = None
    code: str | None = None
    message: str | None = None
    entry_count: int = Field(ge=0)
    admitted_count: int = Field(ge=0)
    rejected_count: int = Field(ge=0)
    measurement_truncated: bool = False
    provisional: bool = False
    largest: list[MeasuredEntry] = Field(default_factory=list)
    oversized: list[MeasuredEntry] = Field(default_factory=list)
    rejected: list[RejectedEntry] = Field(default_factory=list)


# ------------------------------------------------------------------------------ curation
class DuplicateDecision(UpstreamModel):
    duplicate: Duplicate


class Unmerged(UpstreamModel):
    restored: PersonRow
    winner: PersonRow


# ------------------------------------------------------------------------------ exports
class ExportRow(UpstreamModel):
    """One export, as FORAGER's history lists it (docs/upstream-contract.md, "Exports")."""

    export_id: str
    project_ref: str
    format: str
    status: str
    file_name: str | None = None
    size_bytes: int | None = None
    stats: dict[str, int] = Field(default_factory=dict)
    error: str | None = None
    sha256: str | None = None
    revision_id: str | None = None
    retry_of: str | None = None
    archive_expired_at: str | None = None
    created_at: str | None = None
    finished_at: str | None = None
    downloadable: bool = False
    written_to_folder: bool = False


class ExportList(UpstreamModel):
    exports: list[ExportRow] = Field(default_factory=list)


class FeedCursorRefused(Exception):
    """FORAGER refused the cursor: ``cursor_expired``, ``cursor_ahead`` or ``generation_changed``."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
