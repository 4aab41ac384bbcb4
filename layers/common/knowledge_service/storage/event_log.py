"""The colony's event log: where an operator's act is recorded.

Rows are keyed by ``event_type`` and ``recorded`` (time, then the event id). Every row also
carries ``log = "all"``, which the ``by_time`` index orders by ``recorded``: the whole log,
newest first, for ``GET /knowledge/events`` and ``knowledge-admin events``.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, ConditionBase, Key

from knowledge_service.base_model import Model
from knowledge_service.storage.toolkit import query_pages

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
        items = self._table.query(
            KeyConditionExpression=Key("event_type").eq(event_type),
            ScanIndexForward=False,
            Limit=limit,
            ConsistentRead=True,
        ).get("Items", [])
        return [LoggedEvent.model_validate(i) for i in items]

    def page(
        self, *, act: str | None, project: str | None, limit: int, before: str | None
    ) -> tuple[list[LoggedEvent], str | None]:
        """Up to ``limit`` rows, newest first, recorded before the position ``before`` (any
        ``recorded`` value, a row's or not); and the ``recorded`` of the last row returned
        when more may follow.

        ``act`` matches a row's ``event_type`` or its payload's ``act``; ``project`` its
        payload's ``project``.
        """
        conditions: list[ConditionBase] = []
        if act is not None:
            conditions.append(Attr("event_type").eq(act) | Attr("payload.act").eq(act))
        if project is not None:
            conditions.append(Attr("payload.project").eq(project) | Attr("scope_project").eq(project))
        kwargs: dict[str, Any] = {
            "IndexName": BY_TIME_INDEX,
            "KeyConditionExpression": Key("log").eq(LOG_PARTITION)
            if before is None
            else Key("log").eq(LOG_PARTITION) & Key("recorded").lt(before),
            "ScanIndexForward": False,
            "Limit": max(limit, 25),
        }
        if conditions:
            combined = conditions[0]
            for condition in conditions[1:]:
                combined = combined & condition
            kwargs["FilterExpression"] = combined
        found: list[dict[str, Any]] = []
        for items in query_pages(self._table, **kwargs):  # the next page is asked only while short
            for item in items:
                found.append(item)
                if len(found) == limit:
                    return [_event(i) for i in found], str(found[-1]["recorded"])
        return [_event(i) for i in found], None


BY_TIME_INDEX = "by_time"
LOG_PARTITION = "all"


def _event(item: dict[str, Any]) -> LoggedEvent:
    return LoggedEvent.model_validate({k: v for k, v in item.items() if k not in ("recorded", "log", "scope_project")})


def new_event(event_type: str, actor: str, payload: dict[str, Any]) -> LoggedEvent:
    return LoggedEvent(
        event_id=uuid.uuid4().hex, event_type=event_type, at=datetime.now(UTC), actor=actor, payload=payload
    )


def event_item(event: LoggedEvent, *, project: str | None = None) -> dict[str, Any]:
    """The event log row for ``event`` (also written inside other stores' transactions).

    ``project`` scopes a row whose payload is fixed by a contract and carries no ``project`` (a dead
    letter's replay and discard): it is kept beside the payload, as ``scope_project``, and
    ``GET /knowledge/events?project=`` finds the row by it as by ``payload.project``."""
    item = {
        "recorded": f"{event.at.isoformat()}#{event.event_id}",
        "log": LOG_PARTITION,
        **event.model_dump(mode="json"),
    }
    if project is not None:
        item["scope_project"] = project
    return item
