"""The verbs' records: assertions, captures and AI budgets in one table, keyed by workspace.

``VerbsTable``: partition ``workspace`` (the ANTHILL project id), sort ``sk``:

- ``knowledge#<knowledgeId>``: an assertion;
- ``capture#<captureId>``: a capture's metadata, and its body when it fits (``INLINE_MAX``);
  past that the body is in the archive bucket at ``captures/sha256/<hex>``, content-addressed,
  so identical bytes are stored once;
- ``budget``: the workspace's AI budget (limit and spent).

The workspace is in every key and every condition: the text's row-level security becomes
"no read or write names a row without naming its workspace".
"""

from __future__ import annotations

import hashlib
import heapq
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, Key
from pydantic import ConfigDict

from knowledge_service.base_model import Model
from knowledge_service.errors import InternalError
from knowledge_service.storage.toolkit import conditionally, expressions, query_all

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource

INLINE_MAX = 64 * 1024
"""Capture bodies up to this many bytes live in the item; larger ones in S3."""
CAPTURE_PREFIX = "captures/sha256/"
EVIDENCE_GATED = ("DISTILLED", "PUBLISHED", "SUPERSEDED", "RETIRED")


class AssertionStatus(StrEnum):
    DRAFT = "DRAFT"
    DISTILLED = "DISTILLED"
    PUBLISHED = "PUBLISHED"
    SUPERSEDED = "SUPERSEDED"
    RETIRED = "RETIRED"


class AssertionFields(Model):
    """An assertion's fields, declared once: as stored (:class:`AssertionRecord`, with its
    workspace) and as every verb answers it (``domain/verbs/models.py``'s ``Assertion``)."""

    model_config = ConfigDict(frozen=True)

    knowledge_id: str
    status: AssertionStatus
    subject: str
    assertion: str
    capture_id: str | None = None
    evidence_quote: str | None = None
    superseded_by_id: str | None = None
    confidence: float | None = None
    jurisdiction: str | None = None
    proposed: bool = False
    retired_reason: str | None = None
    created_by: str
    created_at: datetime
    updated_at: datetime


class AssertionRecord(AssertionFields):
    model_config = ConfigDict(extra="ignore", frozen=True)

    workspace: str


class CaptureRecord(Model):
    model_config = ConfigDict(extra="ignore", frozen=True)

    workspace: str
    capture_id: str
    sha256: str
    size: int
    title: str | None = None
    storage: str  # inline | s3
    created_by: str
    created_at: datetime


class Budget(Model):
    model_config = ConfigDict(frozen=True)

    workspace: str
    limit: Decimal
    spent: Decimal

    @property
    def exceeded(self) -> bool:
        return self.spent >= self.limit


def _sk(kind: str, record_id: str) -> str:
    return f"{kind}#{record_id}"


def _now() -> str:
    return datetime.now(UTC).isoformat()


class VerbStore:
    """Assertions, captures and budgets (one table) and the capture bodies' bucket."""

    def __init__(self, resource: DynamoDBServiceResource, table_name: str, s3: Any, bucket: str) -> None:
        self._table = resource.Table(table_name)
        self._name = table_name
        self._client = resource.meta.client
        self._s3 = s3
        self._bucket = bucket

    # ------------------------------------------------------------------ assertions
    def create_assertion(self, record: AssertionRecord) -> bool:
        item = _item(record.model_dump(mode="json", exclude_none=True))
        item["sk"] = _sk("knowledge", record.knowledge_id)
        return conditionally(
            lambda: self._table.put_item(
                Item=item, ConditionExpression=Attr("sk").not_exists() & Attr("workspace").not_exists()
            )
        )

    def assertion(self, workspace: str, knowledge_id: str) -> AssertionRecord | None:
        item = self._table.get_item(
            Key={"workspace": workspace, "sk": _sk("knowledge", knowledge_id)}, ConsistentRead=True
        ).get("Item")
        return AssertionRecord.model_validate(item) if item else None

    def forward_pointer(self, workspace: str, knowledge_id: str) -> str | None:
        item = self._table.get_item(
            Key={"workspace": workspace, "sk": _sk("knowledge", knowledge_id)},
            ConsistentRead=True,
            ProjectionExpression="superseded_by_id",
        ).get("Item")
        value = (item or {}).get("superseded_by_id")
        return str(value) if value else None

    def assertions(self, workspace: str) -> list[AssertionRecord]:
        items = query_all(
            self._table,
            KeyConditionExpression=Key("workspace").eq(workspace) & Key("sk").begins_with("knowledge#"),
            ConsistentRead=True,
        )
        return [AssertionRecord.model_validate(i) for i in items]

    def transition(
        self, workspace: str, knowledge_id: str, from_status: str, to_status: str, extra: dict[str, Any] | None = None
    ) -> bool:
        """One conditional write: ``from_status`` to ``to_status``, evidence still present.

        False when the row is missing or not in ``from_status`` (the caller reads it to say why).
        """
        names = {"#status": "status", "#ws": "workspace", "#updated": "updated_at"}
        values: dict[str, Any] = {":from": from_status, ":to": to_status, ":ws": workspace, ":now": _now()}
        sets = ["#status = :to", "#updated = :now"]
        for index, (field, value) in enumerate((extra or {}).items()):
            names[f"#f{index}"] = field
            values[f":v{index}"] = value
            sets.append(f"#f{index} = :v{index}")
        condition = "#ws = :ws AND #status = :from"
        if to_status in EVIDENCE_GATED:  # the column floor: evidence holds across the transition
            condition += " AND attribute_exists(capture_id) AND attribute_exists(evidence_quote)"
        return conditionally(
            lambda: self._table.update_item(
                Key={"workspace": workspace, "sk": _sk("knowledge", knowledge_id)},
                UpdateExpression="SET " + ", ".join(sets),
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
        )

    def supersede(self, workspace: str, knowledge_id: str, successor: str, chain_end: str) -> bool:
        """Point ``knowledge_id`` at ``successor`` in one transaction that also checks the chain
        the walk followed still ends, unpointed, at ``chain_end`` (so no concurrent supersede
        can have closed a cycle meanwhile). False when either condition refused it."""
        # The resource's client serializes plain values itself (boto3's transformation hooks).
        ws = workspace
        update = {
            "Update": {
                "TableName": self._name,
                "Key": {"workspace": ws, "sk": _sk("knowledge", knowledge_id)},
                "UpdateExpression": "SET #status = :superseded, superseded_by_id = :successor, updated_at = :now",
                "ConditionExpression": (
                    "#ws = :ws AND #status IN (:distilled, :published) AND attribute_not_exists(superseded_by_id)"
                    " AND attribute_exists(capture_id) AND attribute_exists(evidence_quote)"
                ),
                "ExpressionAttributeNames": {"#status": "status", "#ws": "workspace"},
                "ExpressionAttributeValues": {
                    ":superseded": "SUPERSEDED",
                    ":successor": successor,
                    ":now": _now(),
                    ":ws": ws,
                    ":distilled": "DISTILLED",
                    ":published": "PUBLISHED",
                },
            }
        }
        check = {
            "ConditionCheck": {
                "TableName": self._name,
                "Key": {"workspace": ws, "sk": _sk("knowledge", chain_end)},
                "ConditionExpression": "#ws = :ws AND attribute_not_exists(superseded_by_id)",
                "ExpressionAttributeNames": {"#ws": "workspace"},
                "ExpressionAttributeValues": {":ws": ws},
            }
        }
        return conditionally(lambda: self._client.transact_write_items(TransactItems=[update, check]))  # type: ignore[list-item]

    # ------------------------------------------------------------------ captures
    def create_capture(self, record: CaptureRecord, body: bytes) -> bool:
        """Store a capture, immutable once written: the row is put only if absent. A large
        body goes to S3 first (content-addressed: the same bytes are the same object)."""
        item = _item(record.model_dump(mode="json", exclude_none=True))
        item["sk"] = _sk("capture", record.capture_id)
        if record.storage == "s3":
            self._s3.put_object(
                Bucket=self._bucket,
                Key=CAPTURE_PREFIX + record.sha256,
                Body=body,
                ContentType="text/plain; charset=utf-8",
            )
        else:
            item["body"] = body.decode("utf-8")
        return conditionally(
            lambda: self._table.put_item(
                Item=item, ConditionExpression=Attr("sk").not_exists() & Attr("workspace").not_exists()
            )
        )

    def capture(self, workspace: str, capture_id: str) -> tuple[CaptureRecord, str] | None:
        """The capture and its body, the body's SHA-256 checked against the record."""
        item = self._table.get_item(
            Key={"workspace": workspace, "sk": _sk("capture", capture_id)}, ConsistentRead=True
        ).get("Item")
        if not item:
            return None
        record = CaptureRecord.model_validate(item)
        if record.storage == "s3":
            data = self._s3.get_object(Bucket=self._bucket, Key=CAPTURE_PREFIX + record.sha256)["Body"].read()
        else:
            data = str(item["body"]).encode("utf-8")
        if hashlib.sha256(data).hexdigest() != record.sha256:
            raise InternalError(f"Capture {capture_id}'s body does not match its recorded SHA-256.")
        return record, data.decode("utf-8")

    # ------------------------------------------------------------------ budgets
    def budget(self, workspace: str) -> Budget | None:
        item = self._table.get_item(Key={"workspace": workspace, "sk": "budget"}, ConsistentRead=True).get("Item")
        return Budget.model_validate(item) if item else None

    def set_budget(self, workspace: str, limit: Decimal | None, spent: Decimal | None) -> Budget:
        current = self.budget(workspace)
        budget = Budget(
            workspace=workspace,
            limit=limit if limit is not None else (current.limit if current else Decimal(0)),
            spent=spent if spent is not None else (current.spent if current else Decimal(0)),
        )
        self._table.put_item(
            Item={"workspace": workspace, "sk": "budget", "limit": budget.limit, "spent": budget.spent, "at": _now()}
        )
        return budget


def _item(values: dict[str, Any]) -> dict[str, Any]:
    return {k: (Decimal(str(v)) if isinstance(v, float) else v) for k, v in values.items()}


class VerbAudit:
    """One row per verb call, allowed or refused, written before the answer.

    ``VerbAuditTable``: partition ``<workspace>#<n>`` (``-`` for the workspace when the call named
    none that could be read; ``n`` < :data:`AUDIT_SHARDS`, from the row's ``recorded``, so one
    busy workspace is spread over that many partitions), sort ``recorded`` (ISO time and a random
    suffix). A workspace's rows are its shards read at once and merged in ``recorded`` order.
    Rows of earlier versions (``workspace=<workspace>``) are moved by ``storage/migrations.py``.
    """

    def __init__(self, resource: DynamoDBServiceResource, table_name: str) -> None:
        self._table = resource.Table(table_name)

    def record(self, row: dict[str, Any]) -> None:
        item = {k: v for k, v in row.items() if v is not None and v != ""}
        item["workspace"] = audit_partition(str(row["workspace"]), str(row["recorded"]))
        self._table.put_item(Item=item, ConditionExpression=Attr("recorded").not_exists())

    def conclude(self, workspace: str, recorded: str, outcome: dict[str, Any]) -> None:
        values = {k: v for k, v in outcome.items() if v is not None}
        names = {f"#a{i}": k for i, k in enumerate(values)}
        self._table.update_item(
            Key={"workspace": audit_partition(workspace, recorded), "recorded": recorded},
            UpdateExpression="SET " + ", ".join(f"#a{i} = :a{i}" for i in range(len(values))),
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={f":a{i}": v for i, v in enumerate(values.values())},
        )

    def rows(self, workspace: str) -> list[dict[str, Any]]:
        """The workspace's rows, oldest first (its shards read at once, merged)."""

        def shard(n: int) -> list[dict[str, Any]]:
            # conditions as strings: the shards' threads share one resource (toolkit.expressions)
            return query_all(self._table, **expressions(Key("workspace").eq(f"{workspace}#{n}")), ConsistentRead=True)

        with ThreadPoolExecutor(max_workers=AUDIT_SHARDS) as pool:
            shards = list(pool.map(shard, range(AUDIT_SHARDS)))
        merged = heapq.merge(*shards, key=lambda item: str(item["recorded"]))
        return [{**item, "workspace": workspace} for item in merged]


AUDIT_SHARDS = 8
"""How many partitions one workspace's audit rows are spread over."""


def audit_partition(workspace: str, recorded: str) -> str:
    """The partition of the row ``recorded`` in ``workspace``: its shard, from ``recorded``."""
    shard = int.from_bytes(hashlib.sha256(recorded.encode()).digest()[:4], "big") % AUDIT_SHARDS
    return f"{workspace}#{shard}"
