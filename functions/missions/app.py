"""The agent missions intake's Lambda: ``agent.mission.started`` / ``agent.mission.ended`` from
the bus, recorded once per event id (a redelivery records nothing new)."""

from __future__ import annotations

from knowledge_service import door  # first of all: the collector stays off for the whole of init

# isort: split
from typing import Any

import boto3  # noqa: F401 - loaded from the top of the stack, before the project (door.py)
from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge_service.domain.agent_missions import intake
from knowledge_service.runtime import runtime

logger = Logger()


@logger.inject_lambda_context
@door.traced
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    rt = runtime()
    mission = intake(rt.agent_missions, rt.projects, rt.pages, event)
    if mission is None:
        logger.warning("no mission", extra={"detail_type": event.get("detail-type"), "event_id": event.get("id")})
        return {"mission_id": None}
    logger.info("mission", extra={"mission_id": mission.mission_id, "ended": mission.ended_at is not None})
    return {"mission_id": mission.mission_id, "ended": mission.ended_at is not None}


door.end_of_init()  # the last line of init: what init made is never collected
