"""The colony's event log: where an operator's act is recorded.

Rows are keyed by ``event_type`` and ``recorded`` (time, then the event id), the hash key in
:data:`SHARDS` shards: ``<type>#<n>``, ``n`` from the event id, so one busy event type is
spread over that many partitions (the row keeps its type in ``type``). Every row also carries
``log = "all#<n>"`` (the same shard), which the ``by_time`` index orders by ``recorded``: the
whole log is the shards' queries run at once and merged newest first, for ``GET
/knowledge/events`` and ``knowledge-admin events``; its paging position is a ``recorded``
value, as before. Rows of earlier versions (``event_type=<type>``, ``log=all``) are moved by
``storage/migrations.py``.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from boto3.dynamodb.conditions import Attr, ConditionBase, Key

from knowledge_service.base_model import Model
from knowledge_service.storage.toolkit import expressions, query_pages

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource


class LoggedEvent(Model):
    event_id: str
    event_type: str
    at: datetime
    actor: str
    payload: dict[str, Any]


class EventLog:
    def __init__(self, resource: DynamoDBServiceResource, table_name: str):
        self._table = resource.Table(table_name)

    @property
    def table_name(self) -> str:
        return self._table.name

    def record(self, event_type: str, actor: str, payload: dict[str, Any]) -> LoggedEvent:
        event = new_event(event_type, actor, payload)
        self._table.put_item(Item=event_item(event))
        return event

    def recent(self, event_type: str, limit: int = 50) -> list[LoggedEvent]:
        """The newest ``limit`` rows of ``event_type``: its shards read at once, merged."""

        def shard(n: int) -> list[dict[str, Any]]:
            return self._table.query(
                **expressions(Key("event_type").eq(f"{event_type}#{n}")),
                ScanIndexForward=False,
                Limit=limit,
                ConsistentRead=True,
            ).get("Items", [])

        return [_event(i) for i in _newest(_each_shard(shard), limit)]

    def page(
        self, *, act: str | None, project: str | None, limit: int, before: str | None
    ) -> tuple[list[LoggedEvent], str | None]:
        """Up to ``limit`` rows, newest first, recorded before the position ``before`` (any
        ``recorded`` value, a row's or not); and the ``recorded`` of the last row returned
        when more may follow.

        ``act`` matches a row's type or its payload's ``act``; ``project`` its payload's
        ``project``. Each shard of the ``by_time`` index is read (at once) until it holds
        ``limit`` matching rows or ends; the newest ``limit`` of them all are the page.
        """
        conditions: list[ConditionBase] = []
        if act is not None:
            conditions.append(Attr("type").eq(act) | Attr("payload.act").eq(act))
        if project is not None:
            conditions.append(Attr("payload.project").eq(project) | Attr("scope_project").eq(project))
        combined = None
        for condition in conditions:
            combined = condition if combined is None else combined & condition

        def shard(n: int) -> tuple[list[dict[str, Any]], bool]:
            key = Key("log").eq(f"{LOG_PARTITION}#{n}")
            kwargs: dict[str, Any] = {
                "IndexName": BY_TIME_INDEX,
                **expressions(key if before is None else key & Key("recorded").lt(before), combined),
                "ScanIndexForward": False,
                "Limit": max(limit, 25),
            }
            found: list[dict[str, Any]] = []
            for items in query_pages(self._table, **kwargs):  # the next page is asked only while short
                found.extend(items)
                if len(found) >= limit:
                    return found[:limit], True
            return found, False

        answers = _each_shard(shard)
        rows = _newest([found for found, _more in answers], limit + 1)
        more = len(rows) > limit or any(more for found, more in answers if len(found) >= limit)
        page = rows[:limit]
        return [_event(i) for i in page], str(page[-1]["recorded"]) if more and page else None


SHARDS = 8
"""How many partitions one event type (and the whole log's ``by_time`` index) is spread over."""


def shard_of(event_id: str) -> int:
    return int.from_bytes(hashlib.sha256(event_id.encode()).digest()[:4], "big") % SHARDS


T = TypeVar("T")


def _each_shard(read: Callable[[int], T]) -> list[T]:
    """``read`` of every shard, run at once (each its own request), in shard order. The threads
    share one resource: a read passes its conditions as strings (``toolkit.expressions``)."""
    with ThreadPoolExecutor(max_workers=SHARDS) as pool:
        return list(pool.map(read, range(SHARDS)))


def _newest(shards: list[list[dict[str, Any]]], limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` rows of the shards' (each newest first), newest first."""
    merged = heapq.merge(*shards, key=lambda item: str(item["recorded"]), reverse=True)
    return list(itertools.islice(merged, limit))


BY_TIME_INDEX = "by_time"
LOG_PARTITION = "all"


def _event(item: dict[str, Any]) -> LoggedEvent:
    kept = {k: v for k, v in item.items() if k not in ("recorded", "log", "scope_project", "type")}
    return LoggedEvent.model_validate({**kept, "event_type": item.get("type", item["event_type"])})


def new_event(event_type: str, actor: str, payload: dict[str, Any]) -> LoggedEvent:
    return LoggedEvent(
        event_id=uuid.uuid4().hex, event_type=event_type, at=datetime.now(UTC), actor=actor, payload=payload
    )


def event_item(event: LoggedEvent, *, project: str | None = None) -> dict[str, Any]:
    """The event log row for ``event`` (also written inside other stores' transactions).

    ``project`` scopes a row whose payload is fixed by a contract and carries no ``project`` (a dead
    letter's replay and discard): it is kept beside the payload, as ``scope_project``, and
    ``GET /knowledge/events?project=`` finds the row by it as by ``payload.project``."""
    shard = shard_of(event.event_id)
    item = {
        "recorded": f"{event.at.isoformat()}#{event.event_id}",
        **event.model_dump(mode="json"),
        "event_type": f"{event.event_type}#{shard}",
        "type": event.event_type,
        "log": f"{LOG_PARTITION}#{shard}",
    }
    if project is not None:
        item["scope_project"] = project
    return item
