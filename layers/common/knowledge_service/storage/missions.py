"""Missions: a queued finding becomes an event on the colony's EventBridge bus.

The event id EventBridge assigns is the mission id.
"""

from __future__ import annotations

import json
from typing import Any

from knowledge_service.errors import InternalError

MISSION_SOURCE = "knowledge-service"
MISSION_DETAIL_TYPE = "knowledge.study.mission"


class MissionBus:
    def __init__(self, events_client: Any, bus_name: str):
        self._events = events_client
        self._bus = bus_name

    def queue(self, project: str, knowledge_base: str, detail: dict[str, Any]) -> str:
        answer = self._events.put_events(
            Entries=[
                {
                    "Source": MISSION_SOURCE,
                    "DetailType": MISSION_DETAIL_TYPE,
                    "EventBusName": self._bus,
                    "Detail": json.dumps({"project": project, "knowledge_base": knowledge_base, **detail}),
                }
            ]
        )
        entry = (answer.get("Entries") or [{}])[0]
        if answer.get("FailedEntryCount") or "EventId" not in entry:
            raise InternalError("The mission could not be put on the colony's event bus.")
        return str(entry["EventId"])
