"""Reading the event log: who decided what, newest first, a page at a time.

The cursor is a position: the ``recorded`` key (time, then event id) of the last row a page
returned, and the next page is the rows recorded before it. Its shape is declared
(``CURSOR_PATTERN``) and every value of that shape is a valid position, so a made-up one
reads a (possibly empty) page of what the caller may read anyway: the filters by act and
project are applied whatever the cursor.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from knowledge_service.base_model import Model
from knowledge_service.domain import identifiers
from knowledge_service.errors import BadRequest
from knowledge_service.storage.event_log import EventLog, LoggedEvent

CURSOR_MAX = 400
PAGE_DEFAULT = 50
PAGE_MAX = 200
EVENT_TYPE = re.compile(identifiers.EVENT_ACT_PATTERN)
CURSOR_PATTERN = identifiers.EVENTS_CURSOR_PATTERN
CURSOR = re.compile(CURSOR_PATTERN)
CURSOR_PROBLEM = identifiers.EVENTS_CURSOR_PROBLEM


class EventPage(Model):
    events: list[LoggedEvent]
    next_cursor: str | None


def page(log: EventLog, *, act: str | None, project: str | None, limit: int, cursor: str | None) -> EventPage:
    if act is not None and (len(act) > identifiers.EVENT_ACT_MAX or not EVENT_TYPE.fullmatch(act)):
        raise BadRequest("act", identifiers.EVENT_ACT_PROBLEM)
    if cursor == "":
        cursor = None
    if cursor is not None and (len(cursor) > CURSOR_MAX or not CURSOR.fullmatch(cursor)):
        raise BadRequest("cursor", CURSOR_PROBLEM)
    rows, last = log.page(act=act, project=project, limit=limit, before=cursor)
    return EventPage(events=[_plain(row) for row in rows], next_cursor=last)


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
