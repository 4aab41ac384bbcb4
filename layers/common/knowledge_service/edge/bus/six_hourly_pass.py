"""The six-hourly pass (EventBridge ``rate(6 hours)``): one change-feed pass per bound project
(upkeep first: dead letters, scrubbing, escalation), then the upkeep of knowledge bases no bound
project reaches (:func:`knowledge_service.domain.schedule.six_hourly_pass`); it logs the report."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.data_classes import EventBridgeEvent, event_source
from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge_service.domain.schedule import six_hourly_pass
from knowledge_service.runtime import runtime

logger = Logger()


@event_source(data_class=EventBridgeEvent)
def handler(event: EventBridgeEvent, context: LambdaContext) -> dict[str, Any]:
    rt = runtime()
    report = six_hourly_pass(rt.config, rt.upstream, rt.feed_stores(), now=rt.clock)
    logger.info("six-hourly pass", extra={"report": report.model_dump(mode="json"), "scheduled_at": event.time})
    return report.model_dump(mode="json")
