"""Knowledge changes: findings and seed receipts, keyed by the knowledge base (SeedActionKey).

``FindingsTable``: ``knowledge_base`` + ``sk``, two kinds of item:

- ``receipt#<source_id>`` — a seed receipt: the ``logical_content_hash`` a source was
  studied at (written by ``POST /knowledge/seed`` and by queueing a finding);
- ``finding#<id>`` — a finding. While it is open it carries ``open_flag = "open"``, which
  puts it in the sparse ``open_findings`` index: the colony-wide ``open_changes`` count is
  one ``Query`` with ``Select=COUNT``. Deciding one removes the flag; the row stays. The
  ``by_detected`` index lists a knowledge base's findings newest first, a page at a time.

A finding's id is derived from (knowledge base, source, current hash), so one change is
one finding however many passes see it, and a decided one stops the next pass asking.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, Key

from knowledge_service.base_model import Model
from knowledge_service.storage.toolkit import conditionally, expressions, query_all, query_count, query_pages

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource


class FindingStatus(StrEnum):
    """open until an operator decides it: queued (a mission) or dismissed."""

    OPEN = "open"
    QUEUED = "queued"
    DISMISSED = "dismissed"


OPEN = FindingStatus.OPEN.value
"""The sparse ``open_findings`` index's key value (``open_flag``)."""


class Finding(Model):
    id: str
    knowledge_base: str
    project_ref: str
    source_id: str
    source_name: str
    kind: str  # new | changed
    previous_hash: str | None
    current_hash: str
    status: FindingStatus = FindingStatus.OPEN
    mission_id: str | None = None
    detected_at: str


class SeedReceipt(Model):
    knowledge_base: str
    source_id: str
    logical_content_hash: str
    studied_at: str


class FindingPosition(Model):
    """A place in a knowledge base's findings, newest first: a finding's time and id."""

    detected_at: str
    finding_id: str


BY_DETECTED_INDEX = "by_detected"
"""``knowledge_base`` + ``detected_at``, every attribute: a knowledge base's findings newest first
(seed receipts have no ``detected_at`` and are not in it)."""

TRANSACTION_ITEMS = 100
"""DynamoDB's most items in one transaction: the findings of a large revision go in groups this size."""


class FindingsStore:
    def __init__(self, resource: DynamoDBServiceResource, table_name: str):
        self._table = resource.Table(table_name)
        self._table_name = table_name
        self._client = resource.meta.client

    # ------------------------------------------------------------------ seed receipts
    def receipts(self, knowledge_base: str) -> dict[str, SeedReceipt]:
        items = self._query(Key("knowledge_base").eq(knowledge_base) & Key("sk").begins_with("receipt#"))
        return {str(i["source_id"]): SeedReceipt.model_validate(i) for i in items}

    def write_receipts(self, receipts: list[SeedReceipt]) -> None:
        with self._table.batch_writer(overwrite_by_pkeys=["knowledge_base", "sk"]) as batch:
            for receipt in receipts:
                batch.put_item(Item={"sk": f"receipt#{receipt.source_id}", **receipt.model_dump()})

    # ------------------------------------------------------------------ findings
    def add(self, finding: Finding) -> bool:
        """Record a finding unless one with its id exists (whatever its status)."""
        return conditionally(
            lambda: self._table.put_item(
                Item={"sk": f"finding#{finding.id}", "open_flag": OPEN, **finding.model_dump()},
                ConditionExpression=Attr("sk").not_exists(),
            )
        )

    def finding_ids(self, knowledge_base: str) -> set[str]:
        """Every finding's id the knowledge base holds, whatever its status (keys only)."""
        items = query_all(
            self._table,
            KeyConditionExpression=Key("knowledge_base").eq(knowledge_base) & Key("sk").begins_with("finding#"),
            ProjectionExpression="sk",
            ConsistentRead=True,
        )
        return {str(i["sk"]).removeprefix("finding#") for i in items}

    def add_many(self, found: list[Finding]) -> list[str]:
        """Record each finding unless one with its id exists, a group of up to
        :data:`TRANSACTION_ITEMS` a request (a group one of which exists is recorded one by one);
        answers the ids recorded now, in order."""
        added: list[str] = []
        for start in range(0, len(found), TRANSACTION_ITEMS):
            group = found[start : start + TRANSACTION_ITEMS]
            if self._add_all(group):
                added += [f.id for f in group]
            else:
                added += [f.id for f in group if self.add(f)]
        return added

    def _add_all(self, group: list[Finding]) -> bool:
        """The group in one transaction: every one recorded, or (one exists already) none."""
        puts = [
            {
                "Put": {
                    "TableName": self._table_name,
                    "Item": {"sk": f"finding#{f.id}", "open_flag": OPEN, **f.model_dump()},
                    "ConditionExpression": "attribute_not_exists(sk)",
                }
            }
            for f in group
        ]
        return conditionally(lambda: self._client.transact_write_items(TransactItems=puts))  # type: ignore[arg-type]

    def get(self, knowledge_base: str, finding_id: str) -> Finding | None:
        item = self._table.get_item(
            Key={"knowledge_base": knowledge_base, "sk": f"finding#{finding_id}"}, ConsistentRead=True
        ).get("Item")
        return _finding(item) if item else None

    def page(
        self, knowledge_base: str, *, open_only: bool, limit: int, after: FindingPosition | None
    ) -> tuple[list[Finding], FindingPosition | None]:
        """Up to ``limit`` findings, newest first, from after the position ``after`` (any position,
        a finding's or not); and the position of the last one when more follow.

        One Query on the ``by_detected`` index (``knowledge_base`` + ``detected_at``; findings of
        one pass share their time, and the index orders those by the table's key), the next page
        asked only while the page is short (``open_only`` filters, after DynamoDB's ``Limit``)."""
        key = Key("knowledge_base").eq(knowledge_base)
        kwargs: dict[str, Any] = {
            "IndexName": BY_DETECTED_INDEX,
            **expressions(key, Attr("status").eq(OPEN) if open_only else None),
            "ScanIndexForward": False,
            "Limit": limit + 1,
        }
        if after is not None:
            kwargs["ExclusiveStartKey"] = {
                "knowledge_base": knowledge_base,
                "detected_at": after.detected_at,
                "sk": f"finding#{after.finding_id}",
            }
        found: list[Finding] = []
        for items in query_pages(self._table, **kwargs):
            found += [_finding(i) for i in items]
            if len(found) > limit:
                break
        page = found[:limit]
        more = len(found) > limit
        return page, FindingPosition(detected_at=page[-1].detected_at, finding_id=page[-1].id) if more else None

    def decide(
        self, knowledge_base: str, finding_id: str, status: FindingStatus, mission_id: str | None = None
    ) -> bool:
        """open → ``status``; False when it was already decided."""
        return conditionally(
            lambda: self._table.update_item(
                Key={"knowledge_base": knowledge_base, "sk": f"finding#{finding_id}"},
                UpdateExpression="SET #st = :s, mission_id = :m REMOVE open_flag",
                ConditionExpression="#st = :open",
                ExpressionAttributeNames={"#st": "status"},
                ExpressionAttributeValues={":s": status.value, ":m": mission_id, ":open": OPEN},
            )
        )

    def set_mission(self, knowledge_base: str, finding_id: str, mission_id: str) -> None:
        self._table.update_item(
            Key={"knowledge_base": knowledge_base, "sk": f"finding#{finding_id}"},
            UpdateExpression="SET mission_id = :m",
            ExpressionAttributeValues={":m": mission_id},
        )

    def open_count(self) -> int:
        """Open findings across the colony: one Query on the sparse index."""
        return query_count(self._table, IndexName="open_findings", KeyConditionExpression=Key("open_flag").eq(OPEN))

    def _query(self, condition: Any) -> list[dict[str, Any]]:
        return query_all(self._table, KeyConditionExpression=condition, ConsistentRead=True)


def _finding(item: dict[str, Any]) -> Finding:
    return Finding.model_validate({k: v for k, v in item.items() if k not in ("sk", "open_flag")})
