"""What an operator does with a dead letter (the specification's "What an operator does with
one"): read the queue, read one entry whole, replay it (after a fix), or discard it.

Every action names its actor (refused when none can be named), takes a typed reason from its
own list, and resolves the entry's own project again from the binding (409 ``conflict`` when
it no longer reaches the entry's knowledge base). A replay's resolution, inbox record, claim
(or re-arming) and place in the retry lane are one transaction with its event: of two
operators replaying at once one wins and nothing else of the other's replay happens.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Literal

from pydantic import ConfigDict, Field

from knowledge_service import observability
from knowledge_service.base_model import Model
from knowledge_service.domain import identifiers
from knowledge_service.domain.feed import door, retry
from knowledge_service.domain.feed.consumer import inbox_row, new_action
from knowledge_service.domain.feed.door import Admitted
from knowledge_service.domain.feed.ports import (
    ActionStorage,
    DeadLetterStorage,
    InboxStorage,
    TransactItem,
    WatermarkStorage,
)
from knowledge_service.domain.feed.retention import DEAD_LETTER_RETENTION_DAYS
from knowledge_service.domain.feed.upkeep import ESCALATION_DAYS, is_escalated
from knowledge_service.errors import BadRequest, Conflict, NotFound, PermissionDenied
from knowledge_service.models import AutoStudy, Binding
from knowledge_service.storage.dead_letter_store import UNRESOLVED, DeadLetter, Resolution
from knowledge_service.storage.event_log import LoggedEvent, new_event
from knowledge_service.storage.feed_store import Action, ActionOutcome, Watermark

REPLAY_REASONS = ("transient_failure", "fixed_consumer", "fixed_binding", "fixed_engine", "operator_retry")
DISCARD_REASONS = ("sender_error", "duplicate", "obsolete", "not_applicable", "unrecoverable")
REPLAYED_EVENT = "knowledge_dead_letter_replayed"
DISCARDED_EVENT = "platform.deadletter.discarded"
COMMERCIAL_PREFIXES = ("commerce.", "billing.")


class ReplayRequest(Model):
    model_config = ConfigDict(extra="forbid", strict=True)

    project: str = Field(max_length=63, pattern=identifiers.PROJECT_OR_DEFAULT_PATTERN)
    reason: Literal["transient_failure", "fixed_consumer", "fixed_binding", "fixed_engine", "operator_retry"]
    after_fix: bool = False
    change: str | None = Field(default=None, max_length=200)


class DiscardRequest(Model):
    model_config = ConfigDict(extra="forbid", strict=True)

    project: str | None = Field(default=None, max_length=63, pattern=identifiers.PROJECT_OR_DEFAULT_PATTERN)
    knowledge_base: str | None = Field(default=None, max_length=64, pattern=identifiers.KNOWLEDGE_BASE_PATTERN)
    reason: Literal["sender_error", "duplicate", "obsolete", "not_applicable", "unrecoverable"]


class AttemptView(Model):
    at: str
    error_class: str
    fingerprint: str
    build: str
    count: int


class DeadLetterRow(Model):
    dead_letter_id: str
    knowledge_base: str
    project: str
    error_class: str
    event_type: str | None
    event_id: str | None
    sequence: int | None
    dead_lettered_at: str
    age_days: int
    attempts: int
    last_attempt: AttemptView | None
    escalated: bool
    stopped_stream: bool
    commercial: bool
    state: str
    resolution: Resolution | None
    reachable: bool | None = None  # the installation's list only


class DeadLetterQueueCounts(Model):
    unresolved: int
    escalated: int
    retrying: int
    resolved: int


class DeadLetterList(Model):
    counts: DeadLetterQueueCounts
    retention_days: int = DEAD_LETTER_RETENTION_DAYS
    escalation_days: int = ESCALATION_DAYS
    reasons: dict[str, list[str]]
    entries: list[DeadLetterRow]


class AttemptText(AttemptView):
    text: str | None


class DeadLetterDetail(DeadLetterRow):
    envelope: str | None
    attempt_log: list[AttemptText]
    schema_version: str
    registry_version: str


class ActionAnswer(Model):
    dead_letter_id: str
    action: str
    actor: str
    reason: str
    effect: str  # for a replay: standing | rearmed | claimed | recorded; for a discard: discarded
    reconciliation_forced: bool = False


def commercial(entry: DeadLetter) -> bool:
    """A commerce.* or billing.* entry whose record class is operational or could not be read."""
    commerce = (entry.event_type or "").startswith(COMMERCIAL_PREFIXES)
    return commerce and entry.record_class in (None, "operational")


def row(entry: DeadLetter, now: datetime, reachable: bool | None = None) -> DeadLetterRow:
    last = entry.attempts[-1] if entry.attempts else None
    age = now - datetime.fromisoformat(entry.dead_lettered_at)
    return DeadLetterRow(
        dead_letter_id=entry.dead_letter_id,
        knowledge_base=entry.knowledge_base,
        project=entry.project,
        error_class=entry.error_class,
        event_type=entry.event_type,
        event_id=entry.event_id,
        sequence=entry.sequence,
        dead_lettered_at=entry.dead_lettered_at,
        age_days=age.days,
        attempts=sum(a.count for a in entry.attempts),
        last_attempt=AttemptView.model_validate(last.model_dump()) if last else None,
        escalated=is_escalated(entry, now),
        stopped_stream=entry.stopped_stream,
        commercial=commercial(entry),
        state=entry.state,
        resolution=entry.resolution,
        reachable=reachable,
    )


def reaches(bindings: list[Binding], entry: DeadLetter) -> bool:
    """Does the entry's own project still reach the knowledge base it was filed on?"""
    return any(b.project == entry.project and b.knowledge_base == entry.knowledge_base for b in bindings)


def queue(
    store: DeadLetterStorage,
    actions: ActionStorage,
    knowledge_base: str,
    state: str,
    now: datetime,
) -> DeadLetterList:
    entries = store.all(knowledge_base)
    shown = [e for e in entries if state in ("all", e.state)]
    return DeadLetterList(
        counts=_counts(
            entries, now, sum(1 for a in actions.all(knowledge_base) if a.outcome == ActionOutcome.RETRYING)
        ),
        reasons={"replay": list(REPLAY_REASONS), "discard": list(DISCARD_REASONS)},
        entries=[row(e, now) for e in sorted(shown, key=lambda e: e.dead_lettered_at, reverse=True)],
    )


def installation_queue(store: DeadLetterStorage, bindings: list[Binding], state: str, now: datetime) -> DeadLetterList:
    entries = store.everything()
    shown = [e for e in entries if state in ("all", e.state)]
    return DeadLetterList(
        counts=_counts(entries, now, 0),
        reasons={"replay": list(REPLAY_REASONS), "discard": list(DISCARD_REASONS)},
        entries=[
            row(e, now, reaches(bindings, e)) for e in sorted(shown, key=lambda e: e.dead_lettered_at, reverse=True)
        ],
    )


def _counts(entries: list[DeadLetter], now: datetime, retrying: int) -> DeadLetterQueueCounts:
    unresolved = [e for e in entries if e.state == UNRESOLVED]
    return DeadLetterQueueCounts(
        unresolved=len(unresolved),
        escalated=sum(1 for e in unresolved if is_escalated(e, now)),
        retrying=retrying,
        resolved=len(entries) - len(unresolved),
    )


def entry_in_scope(store: DeadLetterStorage, knowledge_base: str, dead_letter_id: str) -> DeadLetter:
    """The entry, when it is in the caller's knowledge base; not_found otherwise (another base's id too)."""
    found = store.get(knowledge_base, dead_letter_id)
    if found is None:
        raise NotFound("No dead letter has that id.")
    return found


def own_project_reaches(bindings: list[Binding], entry: DeadLetter) -> None:
    if not reaches(bindings, entry):
        raise Conflict(
            f"This dead letter was filed under project '{entry.project}', which no longer reaches knowledge base "
            f"'{entry.knowledge_base}'. Repair the binding and replay after that fix, or discard it from the "
            "installation's list."
        )


def detail(entry: DeadLetter, now: datetime) -> DeadLetterDetail:
    return DeadLetterDetail(
        **row(entry, now).model_dump(),
        envelope=entry.envelope,
        attempt_log=[AttemptText.model_validate(a.model_dump()) for a in entry.attempts],
        schema_version=entry.schema_version,
        registry_version=entry.registry_version,
    )


def require_actor(actor: str | None) -> str:
    if not actor:
        raise PermissionDenied(
            "This action must be recorded under a named actor, and none can be named (API authentication is off).",
            code="actor_required",
        )
    return actor


# ------------------------------------------------------------------ discard
def discard(
    store: DeadLetterStorage,
    entry: DeadLetter,
    actor: str,
    reason: str,
    now: datetime,
    reconcile: Callable[[], str],
) -> ActionAnswer:
    """Resolve with who and why and log ``platform.deadletter.discarded``; a commercial entry forces
    a reconciliation first (``reconcile`` reads the installation's entitlement and says what it found;
    a read that fails is 409 ``reconciliation_failed`` and the entry stays)."""
    if entry.state != UNRESOLVED:
        raise Conflict("This dead letter is already resolved.", code="already_resolved")
    forced = commercial(entry)
    found: str | None = None
    if forced:
        try:
            found = reconcile()
        except Exception as error:
            raise Conflict(
                "The installation's entitlement could not be read, so the commercial state stays in question and "
                "the dead letter stays.",
                code="reconciliation_failed",
            ) from error
    resolution = Resolution(
        action="discarded",
        actor=actor,
        reason=reason,
        at=now.isoformat(),
        reconciliation_forced=forced,
        reconciliation=found,
    )
    event = new_event(
        DISCARDED_EVENT,
        actor,
        {
            "event_id": entry.event_id,
            "event_type": entry.event_type,
            "record_class": entry.record_class,
            "actor_id": actor,
            "reason_code": reason,
            "reconciliation_forced": forced,
        },
    )
    if not store.resolve_with(entry, resolution, [_put_event(store, event, entry)]):
        raise Conflict("Another operator resolved this dead letter first.", code="already_resolved")
    observability.count("DeadLettersDiscarded")
    return ActionAnswer(
        dead_letter_id=entry.dead_letter_id,
        action="discarded",
        actor=actor,
        reason=reason,
        effect="discarded",
        reconciliation_forced=forced,
    )


# ------------------------------------------------------------------ replay
def _through_the_door(store: DeadLetterStorage, entry: DeadLetter, now: datetime) -> Admitted:
    """Step 1: the envelope judged by this build's door; a refusal is one more attempt, and a 409."""
    judged = door.parse(entry.envelope or "")
    if not isinstance(judged, Admitted):
        attempts = retry.fold(entry.attempts, retry.attempt(now, judged.refusal, judged.reason))
        store.add_attempts(entry, attempts, now.isoformat())
        raise Conflict(
            f"This build still refuses the envelope at the door ({judged.refusal}); it stays unresolved. Replay after "
            "a fix once a build that reads it is installed.",
            code="refused_at_the_door",
        )
    return judged


def _in_the_lane(
    actions: ActionStorage, entry: DeadLetter, action: Action, stamp: str
) -> tuple[str, list[TransactItem]]:
    """Step 2's action: claimed into the retry lane, a dead-lettered one rearmed, or one that stands
    left alone (never a second action); the effect's name and the transaction's items."""
    standing = actions.get(entry.knowledge_base, action.effect_key)
    if standing is None:
        lane = action.model_copy(
            update={"outcome": ActionOutcome.RETRYING, "first_attempt_at": stamp, "next_attempt_at": stamp}
        )
        return "claimed", [actions.claim_item(lane)]
    if standing.outcome == ActionOutcome.DEAD_LETTERED:
        return "rearmed", [actions.rearm_item(standing, entry.project, stamp)]
    return "standing", []


def replay(
    store: DeadLetterStorage,
    inbox: InboxStorage,
    actions: ActionStorage,
    watermarks: WatermarkStorage,
    entry: DeadLetter,
    request: ReplayRequest,
    actor: str,
    policy: AutoStudy,
    now: datetime,
) -> ActionAnswer:
    """The four steps: the door again; inbox + resolution + claim + retry-lane place in one
    transaction; a stream the entry stopped moves past it; the effect deduplicated by the effect key."""
    if entry.state != UNRESOLVED:
        raise Conflict("This dead letter is already resolved.", code="already_resolved")
    if request.after_fix and not request.change:
        raise BadRequest("change", "a replay after a fix names the change it was made after.")
    judged = _through_the_door(store, entry, now)  # 1. the door again
    envelope = judged.envelope
    resolution = Resolution(
        action="replayed_after_fix" if request.after_fix else "replayed",
        actor=actor,
        reason=request.reason,
        at=now.isoformat(),
        change=request.change,
    )
    stamp = now.isoformat()
    others: list[TransactItem] = []
    # 2. recorded in the inbox (a second copy is a no-op) ...
    mark = _stream_of(watermarks, entry)
    if mark is not None:
        others.append(inbox.record_item(inbox_row(mark, envelope, judged.raw, stamp)))
    # ... claimed, and its place in the retry lane: all in one transaction with the resolution
    effect = "recorded"
    revision = envelope.payload.get("revision_id")
    if policy is not AutoStudy.OFF and mark is not None and isinstance(revision, str) and revision:
        effect, placed = _in_the_lane(actions, entry, new_action(mark, envelope, revision, entry.project, stamp), stamp)
        others += placed
    event = new_event(
        REPLAYED_EVENT,
        actor,
        {
            "dead_letter_id": entry.dead_letter_id,
            "event_id": entry.event_id,
            "error_class": entry.error_class,
            "reason_code": request.reason,
            "after_fix": request.after_fix,
            "change": request.change,
            "effect": effect,
        },
    )
    others.append(_put_event(store, event, entry))
    if not store.resolve_with(entry, resolution, others):
        latest = store.get(entry.knowledge_base, entry.dead_letter_id)
        who = latest.resolution.actor if latest and latest.resolution else "another operator"
        raise Conflict(f"{who} resolved this dead letter first; nothing of this replay happened.", code="conflict")
    observability.count("DeadLettersReplayed")
    # 3. a stream the entry stopped moves past it when its watermark stands just before it
    if entry.stopped_stream and mark is not None and entry.sequence is not None and mark.sequence == entry.sequence - 1:
        watermarks.advance(mark, entry.sequence, stamp)
    return ActionAnswer(
        dead_letter_id=entry.dead_letter_id,
        action=resolution.action,
        actor=actor,
        reason=request.reason,
        effect=effect,
    )


def _stream_of(watermarks: WatermarkStorage, entry: DeadLetter) -> Watermark | None:
    if entry.stream_key is None:
        return None
    return watermarks.get(entry.knowledge_base, entry.stream_key)


def _put_event(store: DeadLetterStorage, event: LoggedEvent, entry: DeadLetter) -> TransactItem:
    """The event, scoped to the project the entry was filed under (its payload is the contract's)."""
    return store.event_item(event, entry.project)


def colony_counts(store: DeadLetterStorage, bindings: list[Binding], now: datetime) -> dict[str, int]:
    """``dead_letters`` on /knowledge/status: unresolved entries across the colony (the ``unresolved``
    index), those past the escalation line at the moment of reading, and the part no project reaches."""
    waiting = store.unresolved_everywhere()
    unreachable = [e for e in waiting if not reaches(bindings, e)]
    return {
        "unresolved": len(waiting),
        "escalated": sum(1 for e in waiting if is_escalated(e, now)),
        "unreachable": len(unreachable),
        "unreachable_escalated": sum(1 for e in unreachable if is_escalated(e, now)),
    }
