"""The change feed's tables: the inbox, the watermarks and the actions.

- ``InboxTable`` — one row per envelope, verbatim: ``stream_key``
  (``<knowledge base>#<instance>#<generation>#<stream>``) and ``sequence``. Sparse indexes:
  ``by_content`` (``content_key`` = ``<knowledge base>#<logical_content_hash>``, revisions
  only) answers the restore-then-republish question at claim time; ``exports``
  (``export_key`` = the knowledge base, exports only) lists exports newest first. Rows are
  written with ``BatchWriteItem``; the prune is a ``Query`` per stream up to its watermark.
- ``WatermarksTable`` — ``knowledge_base`` + ``stream_key``: how far the colony has read a
  producer generation's stream, contiguously, and its anchor (the newest envelope recorded,
  which a restored producer would no longer hold). Both move only by a conditional update
  from the values the pass read, so two passes cannot move them past each other. A
  producer restored without a new generation reuses sequence numbers, so its history after
  the fork is read as a new *epoch* of the same stream (``…#<stream>#e<n>``, starting
  after the last envelope both histories hold); the old row is frozen with
  ``superseded_by`` and its inbox rows stay verbatim.
- ``ActionsTable`` — ``knowledge_base`` + ``effect_key``
  (``<instance>#<revision>#<action type>#v<policy version>``): one action per revision,
  claimed with ``attribute_not_exists``. Never pruned.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, Key
from pydantic import Field

from knowledge_service.base_model import Model
from knowledge_service.storage.toolkit import batch_get_all, conditionally, query_all, scan_all

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource


def stream_key(knowledge_base: str, instance_id: str, generation: str, stream: str, epoch: int = 0) -> str:
    """The stream's key; epoch 0 is the stream as first read, ``e<n>`` the n-th restore of it."""
    key = f"{knowledge_base}#{instance_id}#{generation}#{stream}"
    return key if epoch == 0 else f"{key}#e{epoch}"


class InboxRow(Model):
    stream_key: str
    sequence: int
    knowledge_base: str
    event_id: str
    event_type: str
    revision_id: str | None = None
    publication_sequence: int | None = None
    logical_content_hash: str | None = None
    envelope: str  # verbatim, as it arrived
    received_at: str
    export: bool = False


class WatermarkStatus(StrEnum):
    """A stream's watermark: ``ok``, or ``degraded`` while its cursor was refused and not yet recovered."""

    OK = "ok"
    DEGRADED = "degraded"


class Watermark(Model):
    knowledge_base: str
    stream_key: str
    instance_id: str
    generation: str
    stream: str
    epoch: int = 0  # 0, then one more each time the producer is found restored under this generation
    base: int = 0  # sequences at or below it were read by an earlier epoch (0 for epoch 0)
    sequence: int = 0
    # The anchor: the newest envelope the colony has recorded (or is about to) in this epoch — at
    # the watermark, below it after a reconciliation, above it after a pass died mid-page. A
    # restored producer no longer holds it. None until one is read.
    anchor_sequence: int | None = None
    anchor_event_id: str | None = None
    status: WatermarkStatus = WatermarkStatus.OK
    note: str | None = None
    reconciled_over: list[list[int]] = Field(
        default_factory=list
    )  # [first, last] sequence ranges covered by reconciliation
    superseded_by: str | None = None  # the epoch that replaced this one; a superseded row never moves
    updated_at: str = ""


class ActionOutcome(StrEnum):
    """Where an action stands: claimed (running or interrupted), then one of the others."""

    CLAIMED = "claimed"
    STUDIED = "studied"
    QUEUED = "queued"
    FAILED = "failed"
    RETRYING = "retrying"
    DEAD_LETTERED = "dead_lettered"


class Action(Model):
    knowledge_base: str
    effect_key: str
    instance_id: str
    revision_id: str
    action_type: str
    policy_version: int
    project: str
    event_id: str
    claimed_at: str
    outcome: ActionOutcome = ActionOutcome.CLAIMED
    republished: bool = False
    findings: int = 0
    mission_ids: list[str] = Field(default_factory=list)
    # The retry lane: where the revision's envelope is kept, when it was first tried, when it may
    # be tried next, every attempt (folded), the receipt the producer is still owed, and the
    # dead letter it became when its retries ran out.
    stream_key: str | None = None
    sequence: int | None = None
    first_attempt_at: str | None = None
    next_attempt_at: str | None = None
    attempts: list[dict[str, Any]] = Field(default_factory=list)
    receipt_owed: str | None = None  # available | failed
    dead_letter_id: str | None = None


class InboxStore:
    def __init__(self, resource: DynamoDBServiceResource, table_name: str):
        self._resource = resource
        self._table = resource.Table(table_name)
        self._name = table_name

    def record(self, rows: Iterable[InboxRow]) -> None:
        """Write rows in batches of 25 (BatchWriteItem), unprocessed items retried."""
        with self._table.batch_writer(overwrite_by_pkeys=["stream_key", "sequence"]) as batch:
            for row in rows:
                batch.put_item(Item=_inbox_item(row))

    def get(self, key: str, sequence: int) -> InboxRow | None:
        item = self._table.get_item(Key={"stream_key": key, "sequence": sequence}, ConsistentRead=True)
        return _inbox_row(item["Item"]) if "Item" in item else None

    def record_item(self, row: InboxRow) -> dict[str, Any]:
        """The transaction item recording ``row`` (a second copy of a recorded row is a no-op)."""
        return {
            "Put": {
                "TableName": self._name,
                "Item": _inbox_item(row),
            }
        }

    def between(self, key: str, first: int, last: int) -> list[InboxRow]:
        """One stream's rows with ``first <= sequence <= last`` (a restore compares them with the producer's)."""
        if first > last:
            return []
        return _query_all(
            self._table,
            {"KeyConditionExpression": Key("stream_key").eq(key) & Key("sequence").between(first, last)},
            _inbox_row,
        )

    def stream(self, key: str, *, newest_first: bool = True, limit: int = 20) -> list[InboxRow]:
        items = self._table.query(
            KeyConditionExpression=Key("stream_key").eq(key), ScanIndexForward=not newest_first, Limit=limit
        ).get("Items", [])
        return [_inbox_row(i) for i in items]

    def sequences(self, key: str) -> list[InboxRow]:
        """Every row of a stream (tests and the state machine; a pass never reads a whole stream)."""
        return _query_all(self._table, {"KeyConditionExpression": Key("stream_key").eq(key)}, _inbox_row)

    def earlier_publication(
        self, knowledge_base: str, logical_content_hash: str, revision_id: str, *, before: tuple[str, int]
    ) -> bool:
        """Is there an earlier publication of the same content under another revision (restore-then-
        republish)? ``before`` is the claiming row's (stream_key, sequence): on its own stream only
        rows below it count, so a later republication recorded in the same batch raises no flag."""
        stream, sequence = before
        items = _query_all(
            self._table,
            {
                "IndexName": "by_content",
                "KeyConditionExpression": Key("content_key").eq(f"{knowledge_base}#{logical_content_hash}"),
            },
            lambda item: item,
        )
        keys = [
            {"stream_key": i["stream_key"], "sequence": i["sequence"]}
            for i in items
            if i["stream_key"] != stream or int(i["sequence"]) < sequence
        ]
        if not keys:
            return False
        revisions = {str(r.get("revision_id")) for r in self._batch_get(keys, "revision_id")}
        return bool(revisions - {revision_id})

    def exports(self, knowledge_base: str, limit: int = 20) -> list[InboxRow]:
        items = self._table.query(
            IndexName="exports",
            KeyConditionExpression=Key("export_key").eq(knowledge_base),
            ScanIndexForward=False,
            Limit=limit,
        ).get("Items", [])
        return [_inbox_row(i) for i in items]

    def export_ids(self, knowledge_base: str) -> set[str]:
        """The export id of every export envelope recorded for the knowledge base (the ``exports``
        index, every page): what a gap's reconciliation compares FORAGER's export history with."""
        rows = _query_all(
            self._table,
            {"IndexName": "exports", "KeyConditionExpression": Key("export_key").eq(knowledge_base)},
            _inbox_row,
        )
        found: set[str] = set()
        for row in rows:
            try:
                export_id = (json.loads(row.envelope).get("payload") or {}).get("export_id")
            except (ValueError, AttributeError):
                continue
            if isinstance(export_id, str) and export_id:
                found.add(export_id)
        return found

    def prunable(self, key: str, through_sequence: int, older_than: str) -> list[InboxRow]:
        """Rows of one stream at or below its watermark, older than the window, not exports."""
        return _query_all(
            self._table,
            {
                "KeyConditionExpression": Key("stream_key").eq(key) & Key("sequence").lte(through_sequence),
                "FilterExpression": Attr("received_at").lt(older_than) & Attr("export").eq(False),
            },
            _inbox_row,
        )

    def delete(self, rows: Iterable[InboxRow]) -> int:
        count = 0
        with self._table.batch_writer() as batch:
            for row in rows:
                batch.delete_item(Key={"stream_key": row.stream_key, "sequence": row.sequence})
                count += 1
        return count

    def _batch_get(self, keys: list[dict[str, Any]], projection: str) -> list[dict[str, Any]]:
        return batch_get_all(self._resource, {self._name: keys}, projection=projection)[self._name]


class WatermarkStore:
    def __init__(self, resource: DynamoDBServiceResource, table_name: str):
        self._resource = resource
        self._table = resource.Table(table_name)
        self._name = table_name

    def all(self, knowledge_base: str) -> list[Watermark]:
        return _query_all(
            self._table,
            {"KeyConditionExpression": Key("knowledge_base").eq(knowledge_base), "ConsistentRead": True},
            Watermark.model_validate,
        )

    def knowledge_bases(self) -> set[str]:
        """Every knowledge base whose feed was ever read (the six-hourly upkeep sweeps each)."""
        return {str(i["knowledge_base"]) for i in scan_all(self._table, ProjectionExpression="knowledge_base")}

    def get(self, knowledge_base: str, key: str) -> Watermark | None:
        item = self._table.get_item(Key={"knowledge_base": knowledge_base, "stream_key": key}, ConsistentRead=True)
        return Watermark.model_validate(item["Item"]) if "Item" in item else None

    def lineage(self, knowledge_base: str, instance_id: str, generation: str, stream: str) -> list[Watermark]:
        """Every epoch of one producer generation's stream, oldest first (one Query)."""
        prefix = stream_key(knowledge_base, instance_id, generation, stream)
        rows = _query_all(
            self._table,
            {
                "KeyConditionExpression": Key("knowledge_base").eq(knowledge_base)
                & Key("stream_key").begins_with(prefix),
                "ConsistentRead": True,
            },
            Watermark.model_validate,
        )
        mine = [m for m in rows if (m.instance_id, m.generation, m.stream) == (instance_id, generation, stream)]
        return sorted(mine, key=lambda m: m.epoch)

    def start(self, mark: Watermark) -> Watermark:
        """A new producer generation's watermark at 0 (or the one another pass just made)."""
        # None is left out, not stored as NULL: ``attribute_not_exists(superseded_by)`` must hold.
        if conditionally(
            lambda: self._table.put_item(
                Item=mark.model_dump(exclude_none=True), ConditionExpression=Attr("stream_key").not_exists()
            )
        ):
            return mark
        found = self.get(mark.knowledge_base, mark.stream_key)
        assert found is not None
        return found

    def advance(
        self,
        mark: Watermark,
        to: int,
        now: str,
        *,
        status: WatermarkStatus | None = None,
        note: str | None = None,
        reconciled: list[int] | None = None,
    ) -> bool:
        """Move from ``mark.sequence`` to ``to``; False when another pass moved it first or a
        restore superseded it."""
        names = {"#s": "sequence"}
        values: dict[str, Any] = {":from": mark.sequence, ":to": to, ":now": now}
        sets = ["#s = :to", "updated_at = :now"]
        if status is not None:
            sets += ["#st = :status", "note = :note"]
            names["#st"] = "status"
            values[":status"], values[":note"] = status, note
        if reconciled is not None:
            sets.append("reconciled_over = list_append(if_not_exists(reconciled_over, :empty), :range)")
            values[":empty"], values[":range"] = [], [reconciled]
        return conditionally(
            lambda: self._table.update_item(
                Key={"knowledge_base": mark.knowledge_base, "stream_key": mark.stream_key},
                UpdateExpression="SET " + ", ".join(sets),
                ConditionExpression="#s = :from AND attribute_not_exists(superseded_by)",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
        )

    def anchor(self, mark: Watermark, anchor: tuple[int, str], now: str) -> bool:
        """Name the newest envelope about to be recorded, from the row as ``mark`` read it; False
        when another pass moved the watermark or the anchor first, or a restore superseded it."""
        condition = "#s = :from AND attribute_not_exists(superseded_by) AND "
        values: dict[str, Any] = {":from": mark.sequence, ":seq": anchor[0], ":id": anchor[1], ":now": now}
        if mark.anchor_sequence is None:
            condition += "attribute_not_exists(anchor_sequence)"
        else:
            condition += "anchor_sequence = :was_seq AND anchor_event_id = :was_id"
            values[":was_seq"], values[":was_id"] = mark.anchor_sequence, mark.anchor_event_id
        return conditionally(
            lambda: self._table.update_item(
                Key={"knowledge_base": mark.knowledge_base, "stream_key": mark.stream_key},
                UpdateExpression="SET anchor_sequence = :seq, anchor_event_id = :id, updated_at = :now",
                ConditionExpression=condition,
                ExpressionAttributeNames={"#s": "sequence"},
                ExpressionAttributeValues=values,
            )
        )

    def restart(self, mark: Watermark, base: int, anchor: tuple[int, str] | None, note: str, now: str) -> Watermark:
        """The producer was restored: the next epoch starts after ``base`` (the last sequence both
        histories share; ``anchor`` is the last envelope both hold) and ``mark`` is frozen, in
        one transaction. When another pass did it first, the epoch it made is the answer."""
        key = stream_key(mark.knowledge_base, mark.instance_id, mark.generation, mark.stream, mark.epoch + 1)
        successor = mark.model_copy(
            update={
                "stream_key": key,
                "epoch": mark.epoch + 1,
                "base": base,
                "sequence": base,
                "anchor_sequence": anchor[0] if anchor else None,
                "anchor_event_id": anchor[1] if anchor else None,
                "status": WatermarkStatus.OK,
                "note": note,
                "reconciled_over": [],
                "superseded_by": None,
                "updated_at": now,
            }
        )
        frozen_and_started: list[Any] = [
            {
                "Put": {
                    "TableName": self._name,
                    "Item": successor.model_dump(exclude_none=True),
                    "ConditionExpression": "attribute_not_exists(stream_key)",
                }
            },
            {
                "Update": {
                    "TableName": self._name,
                    "Key": {"knowledge_base": mark.knowledge_base, "stream_key": mark.stream_key},
                    "UpdateExpression": "SET superseded_by = :next, #st = :ok, note = :note, updated_at = :now",
                    "ConditionExpression": "attribute_not_exists(superseded_by)",
                    "ExpressionAttributeNames": {"#st": "status"},
                    "ExpressionAttributeValues": {
                        ":next": successor.stream_key,
                        ":ok": WatermarkStatus.OK.value,
                        ":note": f"superseded by epoch {successor.epoch}: the producer was restored; "
                        f"its history after sequence {base} is read there",
                        ":now": now,
                    },
                }
            },
        ]
        if conditionally(lambda: self._resource.meta.client.transact_write_items(TransactItems=frozen_and_started)):
            return successor
        return self.lineage(mark.knowledge_base, mark.instance_id, mark.generation, mark.stream)[-1]

    def mark(self, mark: Watermark, status: WatermarkStatus, note: str | None, now: str) -> None:
        """Set the status and its note; a row a restore superseded keeps the note it was frozen with."""
        conditionally(
            lambda: self._table.update_item(
                Key={"knowledge_base": mark.knowledge_base, "stream_key": mark.stream_key},
                UpdateExpression="SET #st = :status, note = :note, updated_at = :now",
                ConditionExpression="attribute_exists(stream_key) AND attribute_not_exists(superseded_by)",
                ExpressionAttributeNames={"#st": "status"},
                ExpressionAttributeValues={":status": status, ":note": note, ":now": now},
            )
        )


class ActionStore:
    def __init__(self, resource: DynamoDBServiceResource, table_name: str):
        self._table = resource.Table(table_name)
        self.table_name = table_name

    def claim(self, action: Action) -> bool:
        """Claim the effect key; False when it was already claimed (by anyone, ever)."""
        return conditionally(
            lambda: self._table.put_item(Item=action.model_dump(), ConditionExpression=Attr("effect_key").not_exists())
        )

    def finish(self, action: Action, outcome: ActionOutcome, findings: int, mission_ids: list[str]) -> None:
        self._table.update_item(
            Key={"knowledge_base": action.knowledge_base, "effect_key": action.effect_key},
            UpdateExpression="SET outcome = :o, findings = :f, mission_ids = :m",
            ExpressionAttributeValues={":o": outcome, ":f": findings, ":m": mission_ids},
        )

    def get(self, knowledge_base: str, effect_key: str) -> Action | None:
        item = self._table.get_item(
            Key={"knowledge_base": knowledge_base, "effect_key": effect_key}, ConsistentRead=True
        )
        return Action.model_validate(item["Item"]) if "Item" in item else None

    def retry_later(
        self, action: Action, attempts: list[dict[str, Any]], first_at: str, next_at: str, receipt: str | None
    ) -> None:
        """The action reads ``retrying``: its attempts, when it was first tried and when it may be next."""
        self._table.update_item(
            Key={"knowledge_base": action.knowledge_base, "effect_key": action.effect_key},
            UpdateExpression="SET outcome = :o, attempts = :a, first_attempt_at = :f, next_attempt_at = :n, "
            "receipt_owed = :r",
            ExpressionAttributeValues={":o": "retrying", ":a": attempts, ":f": first_at, ":n": next_at, ":r": receipt},
        )

    def settle_receipt(self, action: Action, status: str) -> None:
        """The owed receipt was delivered: forget it (only if it is still the one owed)."""
        conditionally(
            lambda: self._table.update_item(
                Key={"knowledge_base": action.knowledge_base, "effect_key": action.effect_key},
                UpdateExpression="REMOVE receipt_owed",
                ConditionExpression="receipt_owed = :r",
                ExpressionAttributeValues={":r": status},
            )
        )

    def dead_lettered_item(self, action: Action, dead_letter_id: str) -> dict[str, Any]:
        """The transaction item turning a ``retrying`` action into ``dead_lettered`` (its receipt owed)."""
        return {
            "Update": {
                "TableName": self.table_name,
                "Key": {"knowledge_base": action.knowledge_base, "effect_key": action.effect_key},
                "UpdateExpression": "SET outcome = :d, receipt_owed = :f, dead_letter_id = :id REMOVE next_attempt_at",
                "ConditionExpression": "outcome = :retrying",
                "ExpressionAttributeValues": {
                    ":d": ActionOutcome.DEAD_LETTERED.value,
                    ":f": ActionOutcome.FAILED.value,
                    ":id": dead_letter_id,
                    ":retrying": ActionOutcome.RETRYING.value,
                },
            }
        }

    def rearm_item(self, action: Action, project: str, now: str) -> dict[str, Any]:
        """The transaction item re-arming a dead-lettered action for a replay: back in the retry lane,
        due now, in the project the entry was filed under; never a second action."""
        return {
            "Update": {
                "TableName": self.table_name,
                "Key": {"knowledge_base": action.knowledge_base, "effect_key": action.effect_key},
                "UpdateExpression": "SET outcome = :c, next_attempt_at = :now, first_attempt_at = :now, "
                "attempts = :none, #p = :p REMOVE receipt_owed",
                "ConditionExpression": "outcome = :dead",
                "ExpressionAttributeNames": {"#p": "project"},
                "ExpressionAttributeValues": {
                    ":c": ActionOutcome.RETRYING.value,
                    ":now": now,
                    ":none": [],
                    ":p": project,
                    ":dead": ActionOutcome.DEAD_LETTERED.value,
                },
            }
        }

    def claim_item(self, action: Action) -> dict[str, Any]:
        """The transaction item claiming ``action``'s effect key (refused when it is claimed)."""
        return {
            "Put": {
                "TableName": self.table_name,
                "Item": {k: v for k, v in action.model_dump().items() if v is not None},
                "ConditionExpression": "attribute_not_exists(effect_key)",
            }
        }

    def all(self, knowledge_base: str) -> list[Action]:
        return _query_all(
            self._table,
            {"KeyConditionExpression": Key("knowledge_base").eq(knowledge_base), "ConsistentRead": True},
            Action.model_validate,
        )

    def claimed_revisions(self, knowledge_base: str, instance_id: str, revision_ids: set[str]) -> set[str]:
        """Which of ``revision_ids`` have an action (one Query over this instance's keys)."""
        if not revision_ids:
            return set()
        items = _query_all(
            self._table,
            {
                "KeyConditionExpression": Key("knowledge_base").eq(knowledge_base)
                & Key("effect_key").begins_with(f"{instance_id}#"),
                "ProjectionExpression": "revision_id",
                "ConsistentRead": True,
            },
            lambda item: str(item["revision_id"]),
        )
        return revision_ids & set(items)


def _query_all(table: Any, kwargs: dict[str, Any], convert: Any) -> list[Any]:
    return [convert(i) for i in query_all(table, **kwargs)]


def _inbox_item(row: InboxRow) -> dict[str, Any]:
    item = {k: v for k, v in row.model_dump().items() if v is not None}
    if row.revision_id and row.logical_content_hash and not row.export:
        item["content_key"] = f"{row.knowledge_base}#{row.logical_content_hash}"
    if row.export:
        item["export_key"] = row.knowledge_base
    return item


def _inbox_row(item: dict[str, Any]) -> InboxRow:
    return InboxRow.model_validate({k: v for k, v in item.items() if k not in ("content_key", "export_key")})


def envelope_text(envelope: dict[str, Any]) -> str:
    return json.dumps(envelope, separators=(",", ":"), sort_keys=True)


def iso(moment: datetime) -> str:
    return moment.isoformat()
