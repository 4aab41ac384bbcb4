"""The colony's event log: where an operator's act is recorded."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Key
from pydantic import BaseModel

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource


class LoggedEvent(BaseModel):
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


def new_event(event_type: str, actor: str, payload: dict[str, Any]) -> LoggedEvent:
    return LoggedEvent(
        event_id=uuid.uuid4().hex, event_type=event_type, at=datetime.now(UTC), actor=actor, payload=payload
    )


def event_item(event: LoggedEvent) -> dict[str, Any]:
    """The event log row for ``event`` (also written inside other stores' transactions)."""
    return {"recorded": f"{event.at.isoformat()}#{event.event_id}", **event.model_dump(mode="json")}
