"""The change feed consumer (FORAGER's revisions, followed instead of polling its sources): one
entry point, :func:`feed_pass`.

``POST /knowledge/feed/sync``, the six-hourly schedule (one pass per bound project) and,
later, a dead letter's replay all call :func:`feed_pass`; nothing else drives the consumer.
"""

from __future__ import annotations

import logging

from knowledge_service.base_model import Model
from knowledge_service.clock import Clock, system_clock
from knowledge_service.domain.feed.consumer import FeedConsumer
from knowledge_service.domain.feed.policy import lane_sentence, refuse_when_no_lane_acts
from knowledge_service.domain.feed.ports import FeedClient, FeedStores, PassOutcome, UpkeepOutcome
from knowledge_service.domain.feed.retention import INBOX_RETENTION_DAYS
from knowledge_service.domain.feed.upkeep import ESCALATION_DAYS
from knowledge_service.domain.findings import study_pass
from knowledge_service.errors import ServiceError
from knowledge_service.models import AutoStudy, KnowledgeSettings, RevisionStudy

logger = logging.getLogger(__name__)

__all__ = ["FeedClient", "FeedConsumer", "FeedStores", "SyncAnswer", "feed_pass"]


class SyncAnswer(Model):
    project: str
    knowledge_base: str
    change_feed: bool
    revision_study: RevisionStudy
    revision_study_resolved: AutoStudy
    auto_study: AutoStudy
    received: int
    recorded: int
    acted: int
    findings: int
    mission_ids: list[str]
    receipts: int
    synthesized: bool
    degraded: list[str]
    reconciled: int
    watermark: int
    pruned: int
    retention_days: int
    dead_lettered: int
    retried: int
    retrying: int
    dead_letters_scrubbed: int
    dead_letters_escalated: int
    passed_over: list[list[int]]
    exports_reconciled: int
    message: str


def feed_pass(
    stores: FeedStores,
    client: FeedClient,
    settings: KnowledgeSettings,
    knowledge_base: str,
    project: str,
    *,
    consumer: FeedConsumer | None = None,
    now: Clock | None = None,
) -> SyncAnswer:
    """One pass for one knowledge base, as ``project`` (``""``: the console default).

    The dead-letter upkeep runs first, before anything is asked of the engine and whatever the
    study settings say; a pass that stops after it (both lanes off, the engine down) still says
    what it did."""
    consumer = consumer or FeedConsumer(stores, client, now=now or system_clock)
    upkept = consumer.upkeep(knowledge_base)
    try:
        refuse_when_no_lane_acts(settings)
        caps = client.capabilities()
        if caps.change_feed:
            outcome = consumer.run(knowledge_base, project, settings.revision_study_resolved, upkept=upkept)
            synthesized = False
        else:
            outcome = _poll(stores, client, settings, knowledge_base, project)
            outcome.upkeep, outcome.dead_lettered = upkept, upkept.dead_lettered
            synthesized = True
    except ServiceError as error:
        said = upkeep_sentence(upkept)
        if said:
            error.message = f"{error.message} {said}"
            error.args = (error.message,)
        raise
    return SyncAnswer(
        project=project,
        knowledge_base=knowledge_base,
        change_feed=caps.change_feed,
        revision_study=settings.knowledge_revision_study,
        revision_study_resolved=settings.revision_study_resolved,
        auto_study=settings.knowledge_auto_study,
        received=outcome.received,
        recorded=outcome.recorded,
        acted=outcome.acted,
        findings=outcome.findings,
        mission_ids=outcome.mission_ids,
        receipts=outcome.receipts,
        synthesized=synthesized,
        degraded=outcome.degraded,
        reconciled=outcome.reconciled,
        watermark=outcome.watermark,
        pruned=outcome.pruned,
        retention_days=INBOX_RETENTION_DAYS,
        dead_lettered=outcome.dead_lettered,
        retried=outcome.retried,
        retrying=outcome.retrying,
        dead_letters_scrubbed=outcome.upkeep.scrubbed,
        dead_letters_escalated=outcome.upkeep.escalated,
        passed_over=outcome.passed_over,
        exports_reconciled=outcome.exports_reconciled,
        message=_sentence(settings, outcome, caps.change_feed),
    )


def upkeep_sentence(upkept: UpkeepOutcome) -> str:
    """What the dead-letter upkeep did, naming each number that is not zero ("" when nothing)."""
    said = []
    if upkept.dead_lettered:
        said.append(f"{upkept.dead_lettered} retry(ies) ran out after 24 hours and were dead-lettered")
    if upkept.scrubbed:
        said.append(f"{upkept.scrubbed} resolved dead letter(s) were reduced after the 90-day retention")
    if upkept.escalated:
        said.append(f"{upkept.escalated} dead letter(s) were escalated after {ESCALATION_DAYS} days unresolved")
    if upkept.scrub_failed:
        said.append("the dead-letter scrub failed and was logged")
    return ("Dead-letter upkeep: " + "; ".join(said) + ".") if said else ""


def _poll(
    stores: FeedStores, client: FeedClient, settings: KnowledgeSettings, knowledge_base: str, project: str
) -> PassOutcome:
    """An engine without a feed: its sources polled under knowledge_auto_study, receipts synthesized."""
    outcome = PassOutcome(knowledge_base=knowledge_base, polled=True)
    if settings.knowledge_auto_study is AutoStudy.OFF:
        return outcome
    result = study_pass(
        client,
        stores.findings,
        stores.missions,
        knowledge_base,
        project,
        queue=settings.knowledge_auto_study is AutoStudy.ON,
    )
    outcome.findings, outcome.mission_ids = len(result.findings), result.mission_ids
    for finding in result.findings:
        try:
            client.receipt(knowledge_base, f"poll_{finding}", "available", "polled", synthesized=True)
            outcome.receipts += 1
        except Exception:
            logger.warning("the synthesized receipt for %s was not delivered", finding)
    return outcome


def _sentence(settings: KnowledgeSettings, outcome: PassOutcome, change_feed: bool) -> str:
    if change_feed:
        parts = [
            f"Read {outcome.recorded} new envelope(s) from the change feed "
            f"(watermark {outcome.watermark}); {outcome.acted} revision(s) acted on under "
            f"knowledge_revision_study '{settings.revision_study_resolved.value}', "
            f"{outcome.findings} finding(s), {len(outcome.mission_ids)} mission(s) queued."
        ]
        if outcome.degraded:
            parts.append(
                f"The stream was degraded ({', '.join(outcome.degraded)}) and reconciled against the source list."
            )
    else:
        parts = [
            f"This engine declares no change feed: its sources were polled under knowledge_auto_study "
            f"'{settings.knowledge_auto_study.value}', {outcome.findings} finding(s), "
            f"{len(outcome.mission_ids)} mission(s) queued; every receipt is synthesized."
        ]
    if outcome.pruned:
        parts.append(
            f"Pruned {outcome.pruned} inbox row(s) older than the {INBOX_RETENTION_DAYS}-day retention window."
        )
    if outcome.passed_over:
        holes = ", ".join(f"{first}-{last}" if first != last else str(first) for first, last in outcome.passed_over)
        parts.append(
            f"Passed over sequence(s) {holes}: the producer could no longer serve them; "
            f"{outcome.exports_reconciled} export(s) were recorded from FORAGER's export history."
        )
    if outcome.refused_at_the_door:
        parts.append(f"{outcome.refused_at_the_door} envelope(s) were refused at the door and dead-lettered.")
    if outcome.retried:
        parts.append(f"Retried {outcome.retried} action(s).")
    if outcome.retrying:
        parts.append(f"{outcome.retrying} of this project's action(s) are retrying.")
    if outcome.owed_receipts:
        parts.append(f"Sent {outcome.owed_receipts} failed receipt(s) owed for exhausted retries.")
    said = upkeep_sentence(outcome.upkeep)
    if said:
        parts.append(said)
    lanes = lane_sentence(settings)
    if lanes:
        parts.append(lanes)
    return " ".join(parts)
