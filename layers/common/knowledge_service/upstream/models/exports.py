"""Export runs and their listing (docs/upstream-contract.md, "Exports")."""

from __future__ import annotations

from pydantic import Field

from knowledge_service.upstream.models.base import UpstreamModel


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
