"""Exports (docs/upstream-contract.md, "Exports"): the export history, starting one, and the
archive's bytes as they arrive with the digest FORAGER sends beside them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from knowledge_service.upstream import models
from knowledge_service.upstream.transport import Transport

DOWNLOAD_CHUNK_BYTES = 256 * 1024


@dataclass
class ArchiveDownload:
    """An archive arriving: the digest FORAGER sent beside the bytes, and the bytes."""

    announced_sha256: str
    content_disposition: str
    chunks: Iterator[bytes]


class ExportCalls(Transport):
    def exports(self, project_ref: str) -> models.ExportList:
        return self._get(f"/api/projects/{project_ref}/exports", models.ExportList)

    def start_export(self, project_ref: str, body: dict[str, Any], *, idempotency_key: str | None) -> models.ExportRow:
        return self._post(
            f"/api/projects/{project_ref}/exports", body, models.ExportRow, idempotency_key=idempotency_key
        )

    def export(self, export_id: str) -> models.ExportRow:
        """Not project-scoped upstream: ``project_ref`` says whose."""
        return self._get(f"/api/exports/{export_id}", models.ExportRow)

    @contextmanager
    def download_archive(self, export_id: str) -> Iterator[ArchiveDownload]:
        """The archive's bytes as they arrive, never held whole; the connection closes on exit.

        Failures map as every other call does; a body that breaks off mid-way raises
        ``UpstreamError`` from the iterator.
        """
        with self._stream_get(f"/api/exports/{export_id}/download", DOWNLOAD_CHUNK_BYTES) as answer:
            yield ArchiveDownload(
                announced_sha256=(answer.headers.get("X-Export-Sha256") or "").strip().lower(),
                content_disposition=answer.headers.get("Content-Disposition") or "",
                chunks=answer.chunks,
            )
