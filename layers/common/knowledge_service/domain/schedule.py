"""The six-hourly pass: one feed pass per bound project (EventBridge ``rate(6 hours)``).

Each pass is :func:`knowledge_service.domain.feed.feed_pass`, the one entry point Sync uses.
A project whose pass fails (its knowledge base down, both lanes off) is reported and the
others still run.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from knowledge_service.base_model import Model
from knowledge_service.clock import Clock, system_clock
from knowledge_service.domain.connection import ForagerConnection
from knowledge_service.domain.feed import SyncAnswer, feed_pass, upkeep_sentence
from knowledge_service.domain.feed.ports import FeedStores, UpkeepOutcome
from knowledge_service.domain.feed.upkeep import Upkeep
from knowledge_service.errors import ServiceError
from knowledge_service.models import DEFAULT_PROJECT
from knowledge_service.storage.config_store import ConfigStore


class ProjectPass(Model):
    project: str
    knowledge_base: str
    answer: SyncAnswer | None = None
    refused: str | None = None


class UpkeepReport(Model):
    knowledge_base: str
    dead_lettered: int
    scrubbed: int
    escalated: int


class PassReport(Model):
    ran_at: datetime
    bound_projects: list[str]
    passes: list[ProjectPass]
    upkeep: list[UpkeepReport] = Field(default_factory=list)
    sentence: str


def six_hourly_pass(
    config: ConfigStore,
    upstream: ForagerConnection | None = None,
    stores: FeedStores | None = None,
    now: Clock = system_clock,
) -> PassReport:
    """Every bound project's feed pass, then the upkeep nothing else swept, on the product clock
    ``now`` (the runtime's: movable only under the local stack, as Sync's)."""
    bindings = sorted((b for b in config.bindings() if b.project != DEFAULT_PROJECT), key=lambda b: b.project)
    passes: list[ProjectPass] = []
    if upstream is not None and stores is not None and bindings:
        settings = config.settings()
        for binding in bindings:
            # The timer runs the feed pass for every bound project whatever the lanes say: upkeep is
            # its first step, and it refuses only after that when neither lane would act.
            run = ProjectPass(project=binding.project, knowledge_base=binding.knowledge_base)
            try:
                run.answer = feed_pass(
                    stores, upstream.client(settings), settings, binding.knowledge_base, binding.project, now=now
                )
            except ServiceError as error:
                run.refused = error.message
            passes.append(run)
    upkeep = _upkeep_elsewhere(stores, {p.knowledge_base for p in passes}, now)
    projects = [b.project for b in bindings]
    if not projects:
        sentence = "Upkeep ran; no project is bound."
    else:
        said = [f"{p.project}: {p.answer.message if p.answer else p.refused}" for p in passes]
        sentence = f"The six-hourly pass ran for {len(projects)} bound project(s). " + " ".join(said)
    for done in upkeep:
        upkept = upkeep_sentence(UpkeepOutcome(done.dead_lettered, done.scrubbed, done.escalated))
        if upkept:
            sentence += f" {done.knowledge_base}: {upkept}"
    return PassReport(ran_at=now(), bound_projects=projects, passes=passes, upkeep=upkeep, sentence=sentence.strip())


def _upkeep_elsewhere(stores: FeedStores | None, swept: set[str], now: Clock) -> list[UpkeepReport]:
    """The dead-letter upkeep for every knowledge base no pass swept (unbound since, or never bound
    by a project the timer runs): it needs nothing from the engine and runs whatever the settings say."""
    if stores is None or stores.dead_letters is None:
        return []
    bases = (stores.dead_letters.knowledge_bases() | stores.watermarks.knowledge_bases()) - swept
    upkeep = Upkeep(stores.dead_letters, stores.actions, stores.inbox, stores.events)
    reports = []
    for knowledge_base in sorted(bases):
        done = upkeep.run(knowledge_base, now())
        reports.append(
            UpkeepReport(
                knowledge_base=knowledge_base,
                dead_lettered=done.dead_lettered,
                scrubbed=done.scrubbed,
                escalated=done.escalated,
            )
        )
    return reports
