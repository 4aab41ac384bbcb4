"""Ingestion (docs/upstream-contract.md, "Ingestion: jobs, uploads, preflight admission"): jobs
that import paths, uploads streamed as one multipart body, and the admission preflight."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowledge_service.upstream import models
from knowledge_service.upstream.transport import Transport, flag

if TYPE_CHECKING:
    from knowledge_service.upstream.multipart import FilePart


class IngestionCalls(Transport):
    def queue_job(self, project_ref: str, paths: list[str], *, force: bool, idempotency_key: str) -> models.Job:
        body = {"paths": paths, "force": force}
        return self._post(f"/api/projects/{project_ref}/jobs", body, models.Job, idempotency_key=idempotency_key)

    def jobs(self, project_ref: str, *, limit: int) -> list[models.Job]:
        return self._get(f"/api/projects/{project_ref}/jobs", models.JobList, params={"limit": limit}).jobs

    def job(self, project_ref: str, job_id: str) -> models.Job:
        return self._get(f"/api/projects/{project_ref}/jobs/{job_id}", models.Job)

    def cancel_job(self, project_ref: str, job_id: str, *, idempotency_key: str) -> models.Job:
        return self._post(
            f"/api/projects/{project_ref}/jobs/{job_id}/cancel", {}, models.Job, idempotency_key=idempotency_key
        )

    def retry_job(self, project_ref: str, job_id: str, *, idempotency_key: str) -> models.Job:
        return self._post(
            f"/api/projects/{project_ref}/jobs/{job_id}/retry", {}, models.Job, idempotency_key=idempotency_key
        )

    def upload(
        self,
        project_ref: str,
        files: list[FilePart],
        *,
        force: bool,
        admission_job_id: str | None,
        idempotency_key: str,
    ) -> models.Job:
        """The batch as one streamed multipart body: no file is held whole on the way."""
        from knowledge_service.upstream.multipart import MultipartBody  # only uploads load it

        fields = [("force", flag(force))]
        if admission_job_id:
            fields.append(("admission_job_id", admission_job_id))
        body = MultipartBody(fields, files)
        return self._post_stream(f"/api/projects/{project_ref}/uploads", body, models.Job, idempotency_key)

    def preflight(self, project_ref: str, files: list[FilePart], *, idempotency_key: str) -> models.Admission:
        from knowledge_service.upstream.multipart import MultipartBody  # only uploads load it

        body = MultipartBody([], files)
        return self._post_stream(f"/api/projects/{project_ref}/preflight", body, models.Admission, idempotency_key)
