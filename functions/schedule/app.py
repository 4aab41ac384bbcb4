"""The six-hourly pass (EventBridge ``rate(6 hours)``).

It runs :func:`knowledge_service.domain.schedule.six_hourly_pass`: one change-feed pass
per bound project (upkeep first: dead letters, scrubbing, escalation), then the upkeep of
knowledge bases no bound project reaches, and logs the report.
"""

from __future__ import annotations

from knowledge_service import door  # first of all: the collector stays off for the whole of init

# isort: split
from typing import Any

import boto3  # noqa: F401 - loaded from the top of the stack, before the project (door.py)
import httpcore  # noqa: F401 - loaded from the top of the stack, before the project (door.py)
import httpx  # noqa: F401 - loaded from the top of the stack, before the project (door.py)
from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.data_classes import EventBridgeEvent, event_source
from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge_service.domain.schedule import six_hourly_pass
from knowledge_service.runtime import runtime

logger = Logger()


@logger.inject_lambda_context(log_event=False)
@door.traced
@event_source(data_class=EventBridgeEvent)
def lambda_handler(event: EventBridgeEvent, context: LambdaContext) -> dict[str, Any]:
    rt = runtime()
    report = six_hourly_pass(rt.config, rt.upstream, rt.feed_stores(), now=rt.clock)
    logger.info("six-hourly pass", extra={"report": report.model_dump(mode="json"), "scheduled_at": event.time})
    return report.model_dump(mode="json")


door.end_of_init()  # the last line of init: what init made is never collected
