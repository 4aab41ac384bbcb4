"""Reading the event log: who decided what, newest first, a page at a time.

The cursor is opaque to the caller: the key of the last row a page returned, as URL-safe
base64 JSON. It is bounded before it is decoded and held to its shape after.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from knowledge_service.domain import identifiers
from knowledge_service.errors import BadRequest
from knowledge_service.storage.event_log import EventLog, LoggedEvent

CURSOR_MAX = 400
PAGE_DEFAULT = 50
PAGE_MAX = 200
EVENT_TYPE = re.compile(identifiers.EVENT_ACT_PATTERN)
RECORDED = re.compile(r"^[0-9T:.+\-]{10,40}#[0-9a-f]{32}$")


class EventPage(BaseModel):
    events: list[LoggedEvent]
    next_cursor: str | None


def page(log: EventLog, *, act: str | None, project: str | None, limit: int, cursor: str | None) -> EventPage:
    if act is not None and not EVENT_TYPE.fullmatch(act):
        raise BadRequest("act", identifiers.EVENT_ACT_PROBLEM)
    rows, last = log.page(act=act, project=project, limit=limit, after=decode_cursor(cursor))
    return EventPage(events=[_plain(row) for row in rows], next_cursor=encode_cursor(last) if last else None)


def encode_cursor(key: dict[str, str]) -> str:
    raw = json.dumps({"t": key["event_type"], "r": key["recorded"]}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> dict[str, str] | None:
    if cursor is None or cursor == "":
        return None
    if len(cursor) > CURSOR_MAX:
        raise BadRequest("cursor", "is not a cursor this log gave.")
    try:
        decoded = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise BadRequest("cursor", "is not a cursor this log gave.") from None
    if (
        not isinstance(decoded, dict)
        or set(decoded) != {"t", "r"}
        or not isinstance(decoded["t"], str)
        or not isinstance(decoded["r"], str)
        or not EVENT_TYPE.match(decoded["t"])
        or not RECORDED.match(decoded["r"])
    ):
        raise BadRequest("cursor", "is not a cursor this log gave.")
    return {"event_type": decoded["t"], "recorded": decoded["r"]}


def _plain(row: LoggedEvent) -> LoggedEvent:
    return row.model_copy(update={"payload": _numbers(row.payload)})


def _numbers(value: Any) -> Any:
    """DynamoDB's Decimals as the ints and floats they were written as."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value
