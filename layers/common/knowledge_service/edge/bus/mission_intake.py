"""The agent missions intake: ``agent.mission.started`` / ``agent.mission.ended`` from the bus,
recorded once per event id (a redelivery records nothing new)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge_service.domain.agent_missions import intake
from knowledge_service.runtime import runtime

logger = Logger()


def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    rt = runtime()
    mission = intake(rt.agent_missions, rt.projects, rt.pages, event)
    if mission is None:
        logger.warning("no mission", extra={"detail_type": event.get("detail-type"), "event_id": event.get("id")})
        return {"mission_id": None}
    logger.info("mission", extra={"mission_id": mission.mission_id, "ended": mission.ended_at is not None})
    return {"mission_id": mission.mission_id, "ended": mission.ended_at is not None}
