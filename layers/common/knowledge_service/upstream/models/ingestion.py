"""Ingestion jobs and preflight admission (docs/upstream-contract.md, "Ingestion: jobs,
uploads, preflight admission").
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field

from knowledge_service.upstream.models.base import UpstreamModel

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
    """FORAGER's admission measurement of a batch (whether it fits the tier's limits and the
    caller's grant, as ``POST /knowledge/preflight`` quotes it): an answer, admitted or not."""

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
