"""The dead-letter queue's upkeep: first in every feed pass and on the six-hourly timer, for every
knowledge base, whatever the study settings say, and needing nothing from the engine.

1. Filing — a ``retrying`` action failing 24 hours after its first attempt becomes a dead letter
   (``retries_exhausted``, every attempt its log) and reads ``dead_lettered``; the producer is
   owed its failed receipt. The entry and the action move in one transaction.
2. The scrub (the retention rule: an error's full text is kept only while it may be needed) — a
   resolved entry keeps its envelope 90 days after it was resolved, then is reduced to its
   header and disposition; attempts keep class, fingerprint and build.
   An unresolved entry is never touched; no row is removed. Reads the ``unreduced`` index, 200
   a batch; a failing scrub is logged and the pass goes on.
3. Escalation (a six-month-old dead letter is a defect report, never purged) — an unresolved
   entry 180 days a dead letter is stamped ``escalated_at`` once; one
   ``knowledge_dead_letter_escalated`` event per knowledge base per upkeep, with ids and counts only.
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime, timedelta

from knowledge_service import observability
from knowledge_service.domain.feed import door
from knowledge_service.domain.feed.ports import (
    ActionStorage,
    DeadLetterStorage,
    EventStorage,
    InboxStorage,
    UpkeepOutcome,
)
from knowledge_service.domain.feed.retention import DEAD_LETTER_RETENTION_DAYS
from knowledge_service.domain.feed.retry import RETRIES_EXHAUSTED, exhausted
from knowledge_service.storage.dead_letter_store import UNRESOLVED, Attempt, DeadLetter
from knowledge_service.storage.feed_store import Action, ActionOutcome

logger = logging.getLogger(__name__)

ESCALATION_DAYS = 180
ESCALATED_EVENT = "knowledge_dead_letter_escalated"
SYSTEM_ACTOR = "knowledge-service"


def is_escalated(entry: DeadLetter, now: datetime) -> bool:
    """Counted as escalated at read time: unresolved and 180 days a dead letter (exactly at t)."""
    if entry.state != UNRESOLVED:
        return False
    return datetime.fromisoformat(entry.dead_lettered_at) + timedelta(days=ESCALATION_DAYS) <= now


def due_for_scrub(entry: DeadLetter, now: datetime) -> bool:
    """A resolved, unreduced entry 90 days after its resolution (exactly at t)."""
    if entry.state == UNRESOLVED or entry.reduced_at is not None or entry.resolved_at is None:
        return False
    return datetime.fromisoformat(entry.resolved_at) + timedelta(days=DEAD_LETTER_RETENTION_DAYS) <= now


def reduced(entry: DeadLetter) -> tuple[str | None, list[Attempt]]:
    """The envelope and attempts an entry is reduced to: the header when the colony had validated it,
    nothing of the envelope otherwise; attempts keep class, fingerprint and build, lose their text."""
    envelope: str | None = None
    if entry.header_validated and entry.envelope is not None:
        try:
            raw = json.loads(entry.envelope)
            envelope = json.dumps(door.header_of(raw), separators=(",", ":"), sort_keys=True)
        except (ValueError, AttributeError):
            envelope = None
    return envelope, [a.model_copy(update={"text": None}) for a in entry.attempts]


def exhausted_entry_id(action: Action) -> str:
    digest = hashlib.sha256(f"{action.effect_key}#{action.first_attempt_at}".encode()).hexdigest()[:20]
    return f"dl_{digest}"


class Upkeep:
    def __init__(
        self,
        dead_letters: DeadLetterStorage,
        actions: ActionStorage,
        inbox: InboxStorage,
        events: EventStorage | None,
    ) -> None:
        self.dead_letters = dead_letters
        self.actions = actions
        self.inbox = inbox
        self.events = events

    def run(self, knowledge_base: str, now: datetime) -> UpkeepOutcome:
        outcome = UpkeepOutcome()
        outcome.dead_lettered = self.file_exhausted(knowledge_base, now)
        try:
            outcome.scrubbed = self.scrub(knowledge_base, now)
        except Exception:
            logger.exception("the dead-letter scrub failed for %s; the pass goes on", knowledge_base)
            outcome.scrub_failed = True
        outcome.escalated = self.escalate(knowledge_base, now)
        return outcome

    def file_exhausted(self, knowledge_base: str, now: datetime) -> int:
        filed = 0
        for action in self.actions.all(knowledge_base):
            if action.outcome != ActionOutcome.RETRYING or action.first_attempt_at is None:
                continue
            if not exhausted(action.first_attempt_at, now):
                continue
            row = (
                self.inbox.get(action.stream_key, action.sequence)
                if action.stream_key is not None and action.sequence is not None
                else None
            )
            attempts = [Attempt.model_validate(a) for a in action.attempts]
            stamp = now.isoformat()
            entry = DeadLetter(
                knowledge_base=knowledge_base,
                dead_letter_id=exhausted_entry_id(action),
                error_class=RETRIES_EXHAUSTED,
                project=action.project,
                stream_key=action.stream_key,
                sequence=action.sequence,
                event_id=action.event_id,
                event_type=row.event_type if row else "knowledge.revision.published",
                revision_id=action.revision_id,
                effect_key=action.effect_key,
                envelope=row.envelope if row else None,
                header_validated=True,
                attempts=attempts,
                schema_version=door.schema_version(),
                registry_version=door.registry_version(),
                first_seen_at=action.first_attempt_at,
                last_attempt_at=attempts[-1].at if attempts else stamp,
                dead_lettered_at=stamp,
            )
            if self.dead_letters.file_with(entry, [self.actions.dead_lettered_item(action, entry.dead_letter_id)]):
                filed += 1
                observability.count("DeadLettersFiled")
                logger.warning(
                    "revision %s exhausted its retries: dead letter %s", action.revision_id, entry.dead_letter_id
                )
        return filed

    def scrub(self, knowledge_base: str, now: datetime) -> int:
        cutoff = (now - timedelta(days=DEAD_LETTER_RETENTION_DAYS)).isoformat()
        done = 0
        for batch in self.dead_letters.unreduced(knowledge_base, cutoff):
            for entry in batch:
                if not due_for_scrub(entry, now):  # never an unresolved one, whatever the index says
                    continue
                envelope, attempts = reduced(entry)
                if self.dead_letters.reduce(entry, envelope, attempts, now.isoformat()):
                    done += 1
        return done

    def escalate(self, knowledge_base: str, now: datetime) -> int:
        stamped: list[str] = []
        for entry in self.dead_letters.all(knowledge_base):
            unstamped = entry.escalated_at is None and is_escalated(entry, now)
            if unstamped and self.dead_letters.escalate(entry, now.isoformat()):
                stamped.append(entry.dead_letter_id)
        if stamped:
            logger.warning("%d dead letter(s) escalated in %s: %s", len(stamped), knowledge_base, stamped)
            observability.count("DeadLettersEscalated", len(stamped))
            if self.events is not None:
                self.events.record(
                    ESCALATED_EVENT,
                    SYSTEM_ACTOR,
                    {"knowledge_base": knowledge_base, "dead_letter_ids": stamped, "count": len(stamped)},
                )
        return len(stamped)
