"""The feed consumer: one pass over one knowledge base's feed.

Per page, in this order, so a crash between any two steps loses nothing and doubles
nothing:

1. read the page after the watermark; drop what is at or below it (a redelivery);
   keep the contiguous run — a gap stops the pass short of it;
2. record every kept envelope in the inbox, verbatim (BatchWriteItem) — acknowledged
   means recorded;
3. under ``suggest``/``on``, claim one action per revision (``attribute_not_exists`` on
   the effect key) and study it; under ``off`` claim nothing;
4. send the receipts (available, or failed when the study failed);
5. move the watermark, conditionally, from the value read to the last kept sequence,
   and remember the event id read there.

A crash before 5 re-reads the page next time: recording is idempotent and the claim is
conditional. An action claimed but never finished (crash after 3's claim) reads
``claimed`` and the next pass studies it. A gap, ``cursor_expired``, ``cursor_ahead`` or
``generation_changed`` marks the stream degraded, reconciles against the source list, and
only then marks it ok again (``recovery``). Every item of a page goes through the door first
(``door``): what it refuses is filed as a dead letter and never recorded in the inbox; a study
that fails for a retryable reason reads ``retrying`` and is retried by later passes for the
project that claimed it (``retry``); the dead-letter upkeep runs before anything is asked of
the engine (``upkeep``). Which watermark to read from and what a page means are decided by pure
functions (``history``).

A producer restored from a backup without a new generation numbers its next envelopes
with sequences the colony already read. So each read starts at the *anchor* — the last
envelope the colony read, at or below the watermark — and checks that the producer still
holds exactly that up to the watermark: when its head is behind the watermark
(``cursor_ahead``), or another envelope stands at the anchor or where the colony reconciled
a gap (``history_diverged``), the pass degrades, reconciles, finds the last envelope both
histories hold, and reads on from it as a new *epoch* of the stream — new inbox rows, the
old ones kept verbatim, and actions still one per revision under the effect key.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from knowledge_service import budget, observability
from knowledge_service.clock import Clock, system_clock
from knowledge_service.domain.feed import door, retry
from knowledge_service.domain.feed.door import Admitted, Refused
from knowledge_service.domain.feed.history import (
    Decision,
    Slot,
    Step,
    admit,
    decide,
    more_after,
    only_rechecked,
    only_the_anchor_expired,
    read_after,
    reading_from,
    rechecked,
    same_stream,
)
from knowledge_service.domain.feed.policy import ACTION_TYPE, POLICY_VERSION
from knowledge_service.domain.feed.ports import PAGE_LIMIT, FeedClient, FeedStores, PassOutcome, UpkeepOutcome
from knowledge_service.domain.feed.recovery import Recovery
from knowledge_service.domain.feed.retention import INBOX_RETENTION_DAYS
from knowledge_service.domain.feed.upkeep import Upkeep
from knowledge_service.domain.findings import StudyInterrupted, study_pass
from knowledge_service.models import AutoStudy
from knowledge_service.storage.dead_letter_store import Attempt, DeadLetter, DeadLetterState
from knowledge_service.storage.feed_store import (
    Action,
    ActionOutcome,
    InboxRow,
    Watermark,
    envelope_text,
    stream_key,
)
from knowledge_service.upstream.models import (
    EXPORT_COMPLETED,
    REVISION_PUBLISHED,
    FeedCursorRefused,
    FeedEnvelope,
    FeedPage,
)

logger = logging.getLogger(__name__)

MAX_RECOVERIES = 4
STREAM = "knowledge"


Checkpoint = Callable[[str], None]


def _time_left() -> Callable[[], float] | None:
    """The request's remaining seconds for FORAGER (its budget), or None for a pass no request
    bounds (the six-hourly schedule's, inside its five minutes)."""
    spent = budget.current()
    return spent.remaining if spent is not None else None


def _no_checkpoint(step: str) -> None:
    return None


@dataclass
class FeedPass:
    """One pass: the knowledge base, the project it runs as, the policy, the outcome, the mark."""

    knowledge_base: str
    project: str
    policy: AutoStudy
    outcome: PassOutcome
    mark: Watermark | None = None


@dataclass
class _Reading:
    """Where a pass's reading stands between pages: the watermark, whether the next page is read
    unchecked (from the watermark, not the anchor), and how often a hole was read again."""

    mark: Watermark
    unchecked: bool = False
    rereads: int = 0


class FeedConsumer(Recovery):
    def __init__(
        self,
        stores: FeedStores,
        client: FeedClient,
        *,
        now: Clock = system_clock,
        checkpoint: Checkpoint = _no_checkpoint,
        page_limit: int = PAGE_LIMIT,
        rng: random.Random | None = None,
    ) -> None:
        self.stores = stores
        self.client = client
        self.now = now
        self.checkpoint = checkpoint
        self.page_limit = page_limit
        self.rng = rng or random.Random()  # noqa: S311 - jitter, not a secret

    # ------------------------------------------------------------------ upkeep
    def upkeep(self, knowledge_base: str) -> UpkeepOutcome:
        """The dead-letter queue's upkeep for one knowledge base (nothing asked of the engine)."""
        if self.stores.dead_letters is None:
            return UpkeepOutcome()
        return Upkeep(self.stores.dead_letters, self.stores.actions, self.stores.inbox, self.stores.events).run(
            knowledge_base, self.now()
        )

    # ------------------------------------------------------------------ the pass
    def run(
        self,
        knowledge_base: str,
        project: str,
        revision_study: AutoStudy,
        *,
        upkept: UpkeepOutcome | None = None,
    ) -> PassOutcome:
        outcome = PassOutcome(knowledge_base=knowledge_base)
        outcome.upkeep = upkept if upkept is not None else self.upkeep(knowledge_base)
        outcome.dead_lettered += outcome.upkeep.dead_lettered
        run = FeedPass(knowledge_base, project, revision_study, outcome)
        caps = self.client.capabilities()
        instance = caps.instance_id or "unknown"
        mark = self._read_feed(run, instance, caps.generation or "unknown")
        self._retry_due(run, instance)
        self._send_owed_receipts(knowledge_base, outcome)
        outcome.retrying = sum(
            1
            for a in self.stores.actions.all(knowledge_base)
            if a.outcome == ActionOutcome.RETRYING and a.project == project
        )
        outcome.pruned = self.prune(knowledge_base)
        outcome.watermark = mark.sequence
        if outcome.degraded:
            observability.count("FeedPassesDegraded")
        for reason in outcome.degraded:
            observability.count_outcome("FeedDegradations", reason)
        observability.count("FeedEnvelopesRead", outcome.received)
        observability.count("FeedEnvelopesActed", outcome.acted)
        observability.count("ActionsRetried", outcome.retried)
        return outcome

    def _read_feed(self, run: FeedPass, instance: str, generation: str) -> Watermark:
        """Read pages until the head, a stop, or too many recoveries; the watermark reached."""
        reading = _Reading(self._current(run.knowledge_base, instance, generation, STREAM))
        # Every recovery degrades the stream once; a producer that keeps failing them ends the pass.
        while len(run.outcome.degraded) <= MAX_RECOVERIES:
            run.mark = reading.mark
            # Start at the anchor, at the latest, to see the producer still holds what was read.
            verify = not reading.unchecked and reading.mark.anchor_sequence is not None
            reading.unchecked = False
            after = read_after(reading.mark, verify)  # the cursor the page is read from
            page = self._read_page(run, reading, verify)
            if page is None:
                continue
            if not self._take_page(run, reading, page, instance, verify=verify, after=after):
                break
        return reading.mark

    def _read_page(self, run: FeedPass, reading: _Reading, verify: bool) -> FeedPage | None:
        """The page after the watermark; None when the producer refused the cursor or its history
        departs from what the colony read, the reading then recovered, restored or set to read on
        unchecked."""
        mark = reading.mark
        try:
            page, divergence = self._read(mark, verify)
        except FeedCursorRefused as refused:
            # When only the anchor left the replay window (the watermark did not), read on unchecked.
            reading.unchecked = verify and only_the_anchor_expired(refused, mark)
            if not reading.unchecked:
                reading.mark = self._recover(mark, refused, run.outcome, run.project, run.policy)
            return None
        self.checkpoint("read")
        if divergence is not None:
            reading.mark = self._restore(mark, *divergence, run.outcome, run.project, run.policy)
            return None
        return page

    def _take_page(
        self, run: FeedPass, reading: _Reading, page: FeedPage, instance: str, *, verify: bool, after: int
    ) -> bool:
        """What a page read holds: its contiguous run consumed (steps 2–5, :meth:`_consume`), then a
        stop, a gap or the end of the page; whether to read another page."""
        mark = reading.mark
        if not same_stream(page, mark) or page.instance_id != instance:
            mark = self._live(run.knowledge_base, page.instance_id, page.generation, page.stream)
        decision = decide(page, mark, verify=False, after=after, limit=self.page_limit)
        run.outcome.received += sum(
            1 for s in admit(page, after, self.page_limit) if not (verify and rechecked(s.sequence, mark))
        )
        kept, stopped = self._passable(mark, decision)
        if kept:
            advanced = self._consume(run, mark, kept)
            if advanced is None:  # another pass moved it first, or a restore superseded it
                reading.mark = self._reread(mark)
                return True
            mark = advanced
        reading.mark = mark
        if stopped is not None:  # a protocol this build cannot read: the stream stops before it
            self._refuse(run, mark, [stopped])
            return False
        if decision.step is Step.GAP and decision.gap_at is not None:
            self._pass_gap(run, reading, decision.gap_at)
            return True
        # A short page that held only what was checked: read on from the watermark.
        reading.unchecked = not kept and verify and only_rechecked(page, mark, after, self.page_limit)
        return reading.unchecked or (bool(kept) and more_after(page, mark, self.page_limit))

    def _passable(self, mark: Watermark, decision: Decision) -> tuple[list[Slot], Slot | None]:
        """The run the page's decision keeps, and the envelope that stops the stream (None: none)."""
        kept, stopped = decision.run, decision.stopped_at
        if stopped is not None and self._resolved(mark, stopped):
            return [*kept, stopped], None  # an operator replayed or discarded it: pass over it
        return kept, stopped

    def _pass_gap(self, run: FeedPass, reading: _Reading, gap_at: int) -> None:
        """Read the hole again before passing it; a producer that keeps serving it only on a
        second read is read on at most MAX_RECOVERIES times a pass."""
        if reading.rereads < MAX_RECOVERIES and self._hole_served(reading.mark, gap_at):
            reading.rereads += 1
            return
        reading.mark = self._reconcile_gap(reading.mark, gap_at, run.outcome, run.project, run.policy)

    def _read(self, mark: Watermark, verify: bool) -> tuple[FeedPage, tuple[str, int] | None]:
        """A page after the watermark, and how the producer's history departs from what the colony
        read (None: it does not, or nothing was checked). An anchor at or below the watermark is
        checked on the page itself, which then starts at the anchor; one above it — rows a pass
        recorded before it died — is checked first, by reading that one envelope."""
        anchor = mark.anchor_sequence
        if verify and anchor is not None and anchor > mark.sequence:
            probe = self.client.feed(mark.knowledge_base, generation=mark.generation, after=anchor - 1, limit=1)
            if same_stream(probe, mark):
                found = decide(probe, mark, verify=True, after=anchor - 1, limit=1)
                if found.divergence is not None:
                    return probe, found.divergence
        page = self.client.feed(
            mark.knowledge_base, generation=mark.generation, after=read_after(mark, verify), limit=self.page_limit
        )
        if verify and same_stream(page, mark):
            return page, decide(
                page, mark, verify=True, after=read_after(mark, verify), limit=self.page_limit
            ).divergence
        return page, None

    def _consume(self, run: FeedPass, mark: Watermark, kept: list[Slot]) -> Watermark | None:
        """Steps 2–5 for a contiguous run; the watermark moved, or None when it could not be.

        The anchor moves to the run's last envelope *before* the run is recorded, so rows recorded
        above the watermark by a pass that then died are still checked against the producer: a
        restore cannot slip new envelopes onto their keys. It only ever moves forward: a run that
        ends below it (a producer answering short pages) is already covered, and every page read
        checks the anchor once it reaches it. The anchor is an envelope that states its own sequence
        (the run's last such): one placed by its neighbours is checked by them. What the door
        refused in the run is filed as a dead letter instead of being recorded, and the watermark
        moves past it."""
        last = kept[-1]
        assert last.sequence is not None and last.event_id is not None
        # An envelope placed only by its neighbours (its own sequence unreadable) is never the
        # anchor: a later page out of order could not place it again, and would read as a fork.
        held = [(s.sequence, s.event_id) for s in kept if s.stated and s.sequence is not None and s.event_id]
        if held and (mark.anchor_sequence is None or held[-1][0] > mark.anchor_sequence):
            anchor = held[-1]
            if not self.stores.watermarks.anchor(mark, anchor, self._stamp()):
                return None
            mark = mark.model_copy(update={"anchor_sequence": anchor[0], "anchor_event_id": anchor[1]})
            self.checkpoint("anchored")
        admitted = [(s.judged.envelope, s.judged.raw) for s in kept if isinstance(s.judged, Admitted)]
        refused = [s for s in kept if isinstance(s.judged, Refused)]
        if refused:
            self._refuse(run, mark, refused)
        if admitted:
            self._record(mark, admitted)
            run.outcome.recorded += len(admitted)
            self.checkpoint("recorded")
            failed, waiting = self._act(mark, admitted, run)
            self.checkpoint("acted")
            self._receipts(mark.knowledge_base, admitted, failed, waiting, run.policy, run.outcome)
            self.checkpoint("receipted")
        if not self.stores.watermarks.advance(mark, last.sequence, self._stamp()):
            return None
        self.checkpoint("advanced")
        return mark.model_copy(update={"sequence": last.sequence})

    # ------------------------------------------------------------------ the door
    def _refuse(self, run: FeedPass, mark: Watermark, slots: list[Slot]) -> None:
        """File what the door refused, verbatim, and tell the producer when its event id can be read."""
        for slot in slots:
            judged = slot.judged
            assert isinstance(judged, Refused)
            entry = self._door_entry(run, mark, slot, judged)
            filed = self.stores.dead_letters is not None and self.stores.dead_letters.file(entry)
            if filed:
                observability.count("DeadLettersFiled")
                run.outcome.refused_at_the_door += 1
                run.outcome.dead_lettered += 1
                logger.warning(
                    "the door refused an envelope (%s): dead letter %s", judged.refusal, entry.dead_letter_id
                )
            if filed and judged.event_id is not None:
                try:
                    self.client.receipt(
                        mark.knowledge_base, judged.event_id, "failed", f"refused at the door: {judged.refusal}"
                    )
                    run.outcome.receipts += 1
                except Exception:
                    logger.warning("the failed receipt for %s was not delivered", judged.event_id)

    def _door_entry(self, run: FeedPass, mark: Watermark, slot: Slot, judged: Refused) -> DeadLetter:
        stamp = self._stamp()
        attempt = retry.attempt(self.now(), judged.refusal, judged.reason)
        return DeadLetter(
            knowledge_base=mark.knowledge_base,
            dead_letter_id=door_entry_id(mark, slot.sequence, judged.text),
            error_class=judged.refusal,
            project=run.project,
            stream_key=mark.stream_key,
            sequence=slot.sequence,
            event_id=judged.event_id,
            event_type=judged.event_type,
            record_class=judged.record_class,
            envelope=judged.text,
            header_validated=False,
            attempts=[attempt],
            schema_version=door.schema_version(),
            registry_version=door.registry_version(),
            first_seen_at=stamp,
            last_attempt_at=stamp,
            dead_lettered_at=stamp,
            stopped_stream=judged.stops_the_stream,
        )

    def _resolved(self, mark: Watermark, slot: Slot) -> bool:
        """Has an operator resolved the dead letter that stopped the stream at ``slot``?"""
        if self.stores.dead_letters is None or not isinstance(slot.judged, Refused):
            return False
        entry = self.stores.dead_letters.get(mark.knowledge_base, door_entry_id(mark, slot.sequence, slot.judged.text))
        return entry is not None and entry.state != DeadLetterState.UNRESOLVED

    # ------------------------------------------------------------------ reading
    def _current(self, knowledge_base: str, instance: str, generation: str, stream: str) -> Watermark:
        """Where this pass starts (``reading_from``), or a new generation's watermark at 0."""
        found = reading_from(self.stores.watermarks.all(knowledge_base), instance, generation, stream)
        return found or self._live(knowledge_base, instance, generation, stream)

    def _record(self, mark: Watermark, kept: list[tuple[FeedEnvelope, dict[str, Any]]]) -> None:
        received = self._stamp()
        self.stores.inbox.record(inbox_row(mark, envelope, raw, received) for envelope, raw in kept)

    # ------------------------------------------------------------------ acting
    def _act(
        self, mark: Watermark, kept: list[tuple[FeedEnvelope, dict[str, Any]]], run: FeedPass
    ) -> tuple[set[str], set[str]]:
        """Claim and study each revision; the event ids whose study failed, and those now retrying."""
        failed: set[str] = set()
        waiting: set[str] = set()
        if run.policy is AutoStudy.OFF:
            return failed, waiting
        for envelope, _ in kept:
            revision = _text(envelope.payload.get("revision_id"))
            if envelope.event_type != REVISION_PUBLISHED or revision is None:
                continue  # an export claims nothing
            content = _text(envelope.payload.get("logical_content_hash"))
            action = new_action(mark, envelope, revision, run.project, self._stamp())
            action = action.model_copy(
                update={
                    "republished": bool(content)
                    and self.stores.inbox.earlier_publication(
                        mark.knowledge_base, content or "", revision, before=(mark.stream_key, envelope.sequence)
                    )
                }
            )
            if not self.stores.actions.claim(action):
                continue
            self.checkpoint("claimed")
            result = self._study(action, run.policy, run.outcome)
            if result == "failed":
                failed.add(envelope.event_id)
            elif result == "retrying":
                waiting.add(envelope.event_id)
        return failed, waiting

    def _study(self, action: Action, policy: AutoStudy, outcome: PassOutcome) -> str:
        """Study one action: ``done``, ``retrying`` (a failure the lane retries) or ``failed``."""
        try:
            result = study_pass(
                self.client,
                self.stores.findings,
                self.stores.missions,
                action.knowledge_base,
                action.project,
                queue=policy is AutoStudy.ON,
                time_left=_time_left(),
            )
        except StudyInterrupted as stopped:  # what it filed stands; the next pass files the rest
            outcome.findings += stopped.filed
            self._retry_later(action, retry.INTERRUPTED, str(stopped))
            return "retrying"
        except Exception as error:
            error_class = retry.classify(error)
            if error_class is None:
                logger.exception("studying revision %s failed", action.revision_id)
                self.stores.actions.finish(action, ActionOutcome.FAILED, 0, [])
                return "failed"
            self._retry_later(action, error_class, str(error))
            return "retrying"
        self.stores.actions.finish(
            action,
            ActionOutcome.QUEUED if policy is AutoStudy.ON else ActionOutcome.STUDIED,
            len(result.findings),
            result.mission_ids,
        )
        outcome.acted += 1
        outcome.findings += len(result.findings)
        outcome.mission_ids.extend(result.mission_ids)
        return "done"

    def _retry_later(self, action: Action, error_class: str, text: str) -> None:
        now = self.now()
        attempts = retry.fold(
            [Attempt.model_validate(a) for a in action.attempts], retry.attempt(now, error_class, text)
        )
        tries = sum(a.count for a in attempts)
        wait = retry.backoff(tries, self.rng)
        logger.warning(
            "studying revision %s failed (%s); retry %d in %.1f s", action.revision_id, error_class, tries, wait
        )
        self.stores.actions.retry_later(
            action,
            [a.model_dump(exclude_none=True) for a in attempts],
            action.first_attempt_at or now.isoformat(),
            (now + timedelta(seconds=wait)).isoformat(),
            "available",
        )

    def _retry_due(self, run: FeedPass, instance: str) -> None:
        """This project's retries whose backoff has passed, and actions a dead pass claimed and never
        studied (their retry is due at once). Only a pass for the project that claimed an action
        runs it: its missions are queued in that project. Under off nothing is studied."""
        if run.policy is AutoStudy.OFF:
            return
        now = self.now()
        for action in self.stores.actions.all(run.knowledge_base):
            if action.project != run.project or action.instance_id != instance:
                continue
            due = action.outcome == ActionOutcome.CLAIMED or (
                action.outcome == ActionOutcome.RETRYING
                and action.next_attempt_at is not None
                and datetime.fromisoformat(action.next_attempt_at) <= now
                and not retry.exhausted(action.first_attempt_at or action.claimed_at, now)
            )
            if not due:
                continue
            run.outcome.retried += 1 if action.outcome == ActionOutcome.RETRYING else 0
            if self._study(action, run.policy, run.outcome) == "done" and action.receipt_owed == "available":
                self._send_receipt(action, "available", "recorded; studied on retry", run.outcome)

    def _send_owed_receipts(self, knowledge_base: str, outcome: PassOutcome) -> None:
        """A pass that could read the feed sends what exhausted retries owe the producer."""
        for action in self.stores.actions.all(knowledge_base):
            owed = action.outcome == ActionOutcome.DEAD_LETTERED and action.receipt_owed == "failed"
            if owed and self._send_receipt(action, "failed", "retries_exhausted: dead-lettered", outcome):
                outcome.owed_receipts += 1

    def _send_receipt(self, action: Action, status: str, detail: str, outcome: PassOutcome) -> bool:
        try:
            self.client.receipt(action.knowledge_base, action.event_id, status, detail)
        except Exception:
            logger.warning("the %s receipt for %s is still owed", status, action.event_id)
            return False
        self.stores.actions.settle_receipt(action, status)
        outcome.receipts += 1
        return True

    def _receipts(
        self,
        knowledge_base: str,
        kept: list[tuple[FeedEnvelope, dict[str, Any]]],
        failed: set[str],
        waiting: set[str],
        policy: AutoStudy,
        outcome: PassOutcome,
    ) -> None:
        """Available, or failed when the study failed; a retrying one's receipt waits for its outcome."""
        detail = "recorded; knowledge_revision_study is off" if policy is AutoStudy.OFF else "recorded"
        for envelope, _ in kept:
            if envelope.event_id in waiting:
                continue
            status = "failed" if envelope.event_id in failed else "available"
            try:
                self.client.receipt(knowledge_base, envelope.event_id, status, detail)
                outcome.receipts += 1
            except Exception:  # a receipt is owed, not a reason to lose the pass
                logger.warning("receipt for %s was not delivered", envelope.event_id)

    # ------------------------------------------------------------------ retention
    def prune(self, knowledge_base: str) -> int:
        """Remove inbox rows for which all four hold; a failure is logged, never the pass's."""
        try:
            cutoff = (self.now() - timedelta(days=INBOX_RETENTION_DAYS)).isoformat()
            removed = 0
            for mark in self.stores.watermarks.all(knowledge_base):
                rows = self.stores.inbox.prunable(mark.stream_key, mark.sequence, cutoff)
                revisions = {r.revision_id for r in rows if r.revision_id}
                claimed = self.stores.actions.claimed_revisions(knowledge_base, mark.instance_id, revisions)
                removed += self.stores.inbox.delete(r for r in rows if r.revision_id in claimed)
            return removed
        except Exception:
            logger.exception("the inbox prune failed; the pass goes on")
            return 0

    def _stamp(self) -> str:
        return self.now().isoformat()


def door_entry_id(mark: Watermark, sequence: int | None, text: str) -> str:
    """A door refusal's id: the same envelope refused again is the same entry — a redelivery, and
    a new epoch's read of it too (a restored producer that still holds the same bytes at the same
    sequence of the same stream and generation holds the same envelope), so it is filed once."""
    lineage = stream_key(mark.knowledge_base, mark.instance_id, mark.generation, mark.stream)
    digest = hashlib.sha256(f"{lineage}#{sequence}#{text}".encode()).hexdigest()[:20]
    return f"dl_{digest}"


def new_action(mark: Watermark, envelope: FeedEnvelope, revision: str, project: str, now: str) -> Action:
    return Action(
        knowledge_base=mark.knowledge_base,
        effect_key=f"{mark.instance_id}#{revision}#{ACTION_TYPE}#v{POLICY_VERSION}",
        instance_id=mark.instance_id,
        revision_id=revision,
        action_type=ACTION_TYPE,
        policy_version=POLICY_VERSION,
        project=project,
        event_id=envelope.event_id,
        claimed_at=now,
        stream_key=mark.stream_key,
        sequence=envelope.sequence,
    )


def inbox_row(mark: Watermark, envelope: FeedEnvelope, raw: dict[str, Any], received: str) -> InboxRow:
    payload = envelope.payload
    is_export = envelope.event_type == EXPORT_COMPLETED
    publication = payload.get("publication_sequence")
    return InboxRow(
        stream_key=mark.stream_key,
        sequence=envelope.sequence,
        knowledge_base=mark.knowledge_base,
        event_id=envelope.event_id,
        event_type=envelope.event_type,
        revision_id=_text(payload.get("revision_id")),
        publication_sequence=publication if isinstance(publication, int) and not is_export else None,
        logical_content_hash=None if is_export else _text(payload.get("logical_content_hash")),
        envelope=envelope_text(raw),
        received_at=received,
        export=is_export,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def mine_export(envelope_text_: str) -> dict[str, str | None]:
    """export_id, export_format and package_digest read back out of a stored envelope."""
    fields: dict[str, str | None] = {"export_id": None, "export_format": None, "package_digest": None}
    try:
        payload = json.loads(envelope_text_).get("payload") or {}
        for name in fields:
            fields[name] = _text(payload.get(name))
    except (ValueError, AttributeError):
        pass
    return fields
