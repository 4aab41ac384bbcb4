"""The six-hourly pass: one pass per bound project.

The feed consumer and the dead-letter upkeep are not built yet; until they are, the pass
reports which projects are bound and would be passed over, and does nothing else.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel

from knowledge_service.models import DEFAULT_PROJECT
from knowledge_service.storage.config_store import ConfigStore


class PassReport(BaseModel):
    ran_at: datetime
    bound_projects: list[str]
    sentence: str


def six_hourly_pass(config: ConfigStore) -> PassReport:
    projects = sorted(b.project for b in config.bindings() if b.project != DEFAULT_PROJECT)
    sentence = (
        f"Upkeep ran for {len(projects)} bound project(s); the change-feed pass is not installed yet."
        if projects
        else "Upkeep ran; no project is bound."
    )
    return PassReport(ran_at=datetime.now(UTC), bound_projects=projects, sentence=sentence)
