"""What each ingestion job was given, as the edge queued it: its kind and its inputs by name.

FORAGER's job payload is its stage state and nothing else (the specification's "Job payload":
no path, no file name), so a list of jobs reads as ids. The edge knows what it sent: when
FORAGER answers a queued import or upload with its job, the edge keeps, beside it, what the job
was given — the workspace paths an import named (relative to the workspace, as the person wrote
them) or the files an upload carried — so every answer that relays the job can name it
("Upload: notes.md, plan.pdf"). A job queued past this edge (FORAGER's own interface, the demo's
records) has none, and is named by its id as before.

In the config table, one item a job, the knowledge base's jobs in one partition:
``pk=job#<knowledge base>, sk=<job id>``: ``kind`` (``import`` | ``upload``), ``inputs`` (the
first :data:`INPUTS_KEPT` names), ``input_count`` (all of them), ``queued_by`` and
``queued_at``; ``expire_at_epoch`` (the table's TTL attribute) :data:`KEPT` after it was queued,
so names do not pile up for jobs nobody lists any more (such a job is named by its id again).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from pydantic import ConfigDict

from knowledge_service.base_model import Model
from knowledge_service.storage.toolkit import batch_get_all

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource

PK = "job#"
INPUTS_KEPT = 20
KEPT = timedelta(days=365)
EXPIRY_ATTRIBUTE = "expire_at_epoch"

JobKind = Literal["import", "upload"]


class JobInputs(Model):
    """What one job was given: its kind, its first inputs' names, how many there were, who asked."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    kind: JobKind
    inputs: tuple[str, ...]
    input_count: int
    queued_by: str
    queued_at: datetime


def job_key(knowledge_base: str, job_id: str) -> dict[str, str]:
    return {"pk": f"{PK}{knowledge_base}", "sk": job_id}


class JobInputStore:
    def __init__(self, resource: DynamoDBServiceResource, table_name: str) -> None:
        self._resource = resource
        self._table = resource.Table(table_name)
        self._table_name = table_name

    def remember(
        self, knowledge_base: str, job_id: str, kind: JobKind, inputs: Iterable[str], by: str, at: datetime
    ) -> JobInputs:
        """Keep what ``job_id`` was given (written again as it was when the same job is answered twice)."""
        names = list(inputs)
        given = JobInputs(
            kind=kind, inputs=tuple(names[:INPUTS_KEPT]), input_count=len(names), queued_by=by, queued_at=at
        )
        self._table.put_item(
            Item={
                **job_key(knowledge_base, job_id),
                **given.model_dump(mode="json"),
                EXPIRY_ATTRIBUTE: int((at + KEPT).timestamp()),
            }
        )
        return given

    def recall(self, knowledge_base: str, job_ids: Iterable[str]) -> dict[str, JobInputs]:
        """What each of ``job_ids`` was given, by job id (a job queued past the edge is absent)."""
        keys = [job_key(knowledge_base, job_id) for job_id in dict.fromkeys(job_ids)]
        if not keys:
            return {}
        found = batch_get_all(self._resource, {self._table_name: keys})[self._table_name]
        return {str(item["sk"]): JobInputs.model_validate(item) for item in found}
