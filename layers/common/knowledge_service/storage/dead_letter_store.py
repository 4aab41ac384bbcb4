"""The change feed's dead-letter queue: ``DeadLettersTable`` (``knowledge_feed_dead_letters``).

``knowledge_base`` + ``dead_letter_id``. An entry is never removed. Two sparse indexes:

- ``unreduced`` (``unreduced_kb`` = the knowledge base, ``resolved_at``): the resolved entries
  whose envelope and attempt texts are still kept — the retention scrub reads only these, and
  reducing an entry removes it from the index;
- ``unresolved`` (``unresolved_flag`` = ``unresolved``, ``dead_lettered_at``): every entry
  still waiting on an operator, across the colony — ``/knowledge/status`` counts these.

Every resolution is conditional on the entry still being unresolved, and is written in one
``TransactWriteItems`` with what it causes (the event, and for a replay the inbox row, the
action and its place in the retry lane), so of two operators acting at once one wins and
nothing else of the other's act happens.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, Key
from pydantic import ConfigDict, Field

from knowledge_service.base_model import Model
from knowledge_service.storage.event_log import LoggedEvent, event_item
from knowledge_service.storage.toolkit import conditionally, query_pages, scan_all

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource

SCRUB_BATCH = 200


class DeadLetterState(StrEnum):
    """An entry waits on an operator (``unresolved``) until it is replayed or discarded."""

    UNRESOLVED = "unresolved"
    RESOLVED = "resolved"


UNRESOLVED = DeadLetterState.UNRESOLVED
RESOLVED = DeadLetterState.RESOLVED


class Attempt(Model):
    model_config = ConfigDict(extra="forbid")

    at: str
    error_class: str
    text: str | None = None  # None once the entry was reduced
    fingerprint: str
    build: str
    count: int = 1  # identical consecutive attempts are one record


class Resolution(Model):
    model_config = ConfigDict(extra="forbid")

    action: str  # replayed | replayed_after_fix | discarded
    actor: str
    reason: str
    at: str
    change: str | None = None
    reconciliation_forced: bool = False
    reconciliation: str | None = None


class DeadLetter(Model):
    model_config = ConfigDict(extra="ignore")

    knowledge_base: str
    dead_letter_id: str
    error_class: str  # a door class, or retries_exhausted
    project: str  # the project it was filed under ("" — the default binding)
    stream_key: str | None = None
    sequence: int | None = None
    event_id: str | None = None
    event_type: str | None = None
    record_class: str | None = None
    revision_id: str | None = None
    effect_key: str | None = None
    envelope: str | None = None  # verbatim; after the scrub its header, or nothing
    header_validated: bool = False
    attempts: list[Attempt] = Field(default_factory=list)
    schema_version: str
    registry_version: str
    first_seen_at: str
    last_attempt_at: str
    dead_lettered_at: str
    stopped_stream: bool = False
    state: DeadLetterState = DeadLetterState.UNRESOLVED
    resolution: Resolution | None = None
    resolved_at: str | None = None
    escalated_at: str | None = None
    reduced_at: str | None = None


def _key(entry: DeadLetter) -> dict[str, str]:
    return {"knowledge_base": entry.knowledge_base, "dead_letter_id": entry.dead_letter_id}


def _item(entry: DeadLetter) -> dict[str, Any]:
    item = entry.model_dump(exclude_none=True)
    if entry.state == UNRESOLVED:
        item["unresolved_flag"] = UNRESOLVED
    elif entry.reduced_at is None and entry.resolved_at is not None:
        item["unreduced_kb"] = entry.knowledge_base
    return item


def _entry(item: dict[str, Any]) -> DeadLetter:
    return DeadLetter.model_validate(item)


class DeadLetterStore:
    def __init__(self, resource: DynamoDBServiceResource, table_name: str, event_log_table: str = ""):
        self._resource = resource
        self._table = resource.Table(table_name)
        self.table_name = table_name
        self.event_log_table = event_log_table  # an operator's act and its event are one transaction

    # ------------------------------------------------------------------ filing
    def file(self, entry: DeadLetter) -> bool:
        """File a new entry; False when that id is already filed (a redelivery of what was refused)."""
        return conditionally(
            lambda: self._table.put_item(Item=_item(entry), ConditionExpression=Attr("dead_letter_id").not_exists())
        )

    def file_with(self, entry: DeadLetter, others: list[dict[str, Any]]) -> bool:
        """File an entry and make ``others`` in one transaction. Transaction items are written in the
        resource's shape (plain values): the resource's client serializes them, as ``restart`` relies on."""
        put = {
            "Put": {
                "TableName": self.table_name,
                "Item": _item(entry),
                "ConditionExpression": "attribute_not_exists(dead_letter_id)",
            }
        }
        items = [put, *others]
        return conditionally(lambda: self._resource.meta.client.transact_write_items(TransactItems=items))  # type: ignore[arg-type]

    def add_attempts(self, entry: DeadLetter, attempts: list[Attempt], at: str) -> bool:
        """Replace the attempts of an unresolved entry (the caller folded the new one in)."""
        return conditionally(
            lambda: self._table.update_item(
                Key=_key(entry),
                UpdateExpression="SET attempts = :a, last_attempt_at = :at",
                ConditionExpression="#st = :unresolved",
                ExpressionAttributeNames={"#st": "state"},
                ExpressionAttributeValues={
                    ":a": [a.model_dump(exclude_none=True) for a in attempts],
                    ":at": at,
                    ":unresolved": UNRESOLVED,
                },
            )
        )

    # ------------------------------------------------------------------ reading
    def get(self, knowledge_base: str, dead_letter_id: str) -> DeadLetter | None:
        item = self._table.get_item(
            Key={"knowledge_base": knowledge_base, "dead_letter_id": dead_letter_id}, ConsistentRead=True
        )
        return _entry(item["Item"]) if "Item" in item else None

    def all(self, knowledge_base: str) -> list[DeadLetter]:
        return list(
            self._pages({"KeyConditionExpression": Key("knowledge_base").eq(knowledge_base), "ConsistentRead": True})
        )

    def unresolved_everywhere(self) -> list[DeadLetter]:
        """Every entry waiting on an operator, in every knowledge base (the ``unresolved`` index)."""
        return list(
            self._pages({"IndexName": "unresolved", "KeyConditionExpression": Key("unresolved_flag").eq(UNRESOLVED)})
        )

    def knowledge_bases(self) -> set[str]:
        """Every knowledge base with an entry (the six-hourly upkeep sweeps each)."""
        return {str(i["knowledge_base"]) for i in scan_all(self._table, ProjectionExpression="knowledge_base")}

    def everything(self) -> list[DeadLetter]:
        """Every entry of the colony (the installation's list)."""
        return [_entry(i) for i in scan_all(self._table, ConsistentRead=True)]

    def unreduced(self, knowledge_base: str, resolved_before: str) -> Iterator[list[DeadLetter]]:
        """Resolved entries not yet reduced, resolved at or before ``resolved_before``, 200 a batch."""
        for items in query_pages(
            self._table,
            IndexName="unreduced",
            KeyConditionExpression=Key("unreduced_kb").eq(knowledge_base) & Key("resolved_at").lte(resolved_before),
            Limit=SCRUB_BATCH,
        ):
            if items:
                yield [_entry(i) for i in items]

    # ------------------------------------------------------------------ upkeep
    def reduce(self, entry: DeadLetter, envelope: str | None, attempts: list[Attempt], at: str) -> bool:
        """Reduce a resolved entry to its header and disposition (only ever a resolved one)."""
        values: dict[str, Any] = {
            ":a": [a.model_dump(exclude_none=True) for a in attempts],
            ":at": at,
            ":resolved": RESOLVED,
        }
        sets = ["attempts = :a", "reduced_at = :at"]
        removes = ["unreduced_kb"]
        if envelope is None:
            removes.append("envelope")
        else:
            sets.append("envelope = :e")
            values[":e"] = envelope
        return conditionally(
            lambda: self._table.update_item(
                Key=_key(entry),
                UpdateExpression="SET " + ", ".join(sets) + " REMOVE " + ", ".join(removes),
                ConditionExpression="#st = :resolved AND attribute_not_exists(reduced_at)",
                ExpressionAttributeNames={"#st": "state"},
                ExpressionAttributeValues=values,
            )
        )

    def escalate(self, entry: DeadLetter, at: str) -> bool:
        """Stamp ``escalated_at`` once, on an entry still unresolved."""
        return conditionally(
            lambda: self._table.update_item(
                Key=_key(entry),
                UpdateExpression="SET escalated_at = :at",
                ConditionExpression="#st = :unresolved AND attribute_not_exists(escalated_at)",
                ExpressionAttributeNames={"#st": "state"},
                ExpressionAttributeValues={":at": at, ":unresolved": UNRESOLVED},
            )
        )

    # ------------------------------------------------------------------ resolving
    def resolution_item(self, entry: DeadLetter, resolution: Resolution) -> dict[str, Any]:
        """The transaction item resolving ``entry``: only while it is unresolved."""
        return {
            "Update": {
                "TableName": self.table_name,
                "Key": _key(entry),
                "UpdateExpression": "SET #st = :resolved, resolution = :r, resolved_at = :at, unreduced_kb = :kb "
                "REMOVE unresolved_flag",
                "ConditionExpression": "#st = :unresolved",
                "ExpressionAttributeNames": {"#st": "state"},
                "ExpressionAttributeValues": {
                    ":resolved": RESOLVED,
                    ":unresolved": UNRESOLVED,
                    ":r": resolution.model_dump(exclude_none=True),
                    ":at": resolution.at,
                    ":kb": entry.knowledge_base,
                },
            }
        }

    def event_item(self, event: LoggedEvent, project: str) -> dict[str, Any]:
        """The transaction item writing ``event`` to the event log with the act that causes it,
        scoped to the project the entry was filed under."""
        return {"Put": {"TableName": self.event_log_table, "Item": event_item(event, project=project)}}

    def resolve_with(self, entry: DeadLetter, resolution: Resolution, others: list[dict[str, Any]]) -> bool:
        """Resolve the entry and make ``others`` in one transaction; False when it was resolved first."""
        items = [self.resolution_item(entry, resolution), *others]
        return conditionally(lambda: self._resource.meta.client.transact_write_items(TransactItems=items))  # type: ignore[arg-type]

    def _pages(self, kwargs: dict[str, Any]) -> Iterator[DeadLetter]:
        for items in query_pages(self._table, **kwargs):
            yield from (_entry(i) for i in items)
