"""The six-hourly pass: one feed pass per bound project (EventBridge ``rate(6 hours)``).

Each pass is :func:`knowledge_service.domain.feed.feed_pass`, the one entry point Sync uses.
A project whose pass fails (its knowledge base down, both lanes off) is reported and the
others still run.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel

from knowledge_service.domain.connection import Upstream
from knowledge_service.domain.feed import SyncAnswer, feed_pass
from knowledge_service.domain.feed.consumer import FeedStores
from knowledge_service.errors import ServiceError
from knowledge_service.models import DEFAULT_PROJECT
from knowledge_service.storage.config_store import ConfigStore


class ProjectPass(BaseModel):
    project: str
    knowledge_base: str
    answer: SyncAnswer | None = None
    refused: str | None = None


class PassReport(BaseModel):
    ran_at: datetime
    bound_projects: list[str]
    passes: list[ProjectPass]
    sentence: str


def six_hourly_pass(
    config: ConfigStore, upstream: Upstream | None = None, stores: FeedStores | None = None
) -> PassReport:
    bindings = sorted((b for b in config.bindings() if b.project != DEFAULT_PROJECT), key=lambda b: b.project)
    passes: list[ProjectPass] = []
    if upstream is not None and stores is not None and bindings:
        settings = config.settings()
        for binding in bindings:
            run = ProjectPass(project=binding.project, knowledge_base=binding.knowledge_base)
            try:
                run.answer = feed_pass(
                    stores, upstream.client(settings), settings, binding.knowledge_base, binding.project
                )
            except ServiceError as error:
                run.refused = error.message
            passes.append(run)
    projects = [b.project for b in bindings]
    if not projects:
        sentence = "Upkeep ran; no project is bound."
    else:
        said = [f"{p.project}: {p.answer.message if p.answer else p.refused}" for p in passes]
        sentence = f"The six-hourly pass ran for {len(projects)} bound project(s). " + " ".join(said)
    return PassReport(ran_at=datetime.now(UTC), bound_projects=projects, passes=passes, sentence=sentence.strip())
