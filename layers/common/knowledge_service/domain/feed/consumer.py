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
only then marks it ok again.

A producer restored from a backup without a new generation numbers its next envelopes
with sequences the colony already read. So each read starts at the *anchor* — the last
envelope the colony read, at or below the watermark — and checks that the producer still
holds exactly that up to the watermark: when its head is behind the watermark
(``cursor_ahead``), or another envelope stands at the anchor or where the colony reconciled
a gap (``history_diverged``), the pass degrades, reconciles, finds the last sequence both
histories share, and reads on from it as a new *epoch* of the stream — new inbox rows, the
old ones kept verbatim, and actions still one per revision under the effect key.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from pydantic import ValidationError

from knowledge_service.domain.changes import study_pass
from knowledge_service.domain.feed.policy import ACTION_TYPE, POLICY_VERSION
from knowledge_service.domain.feed.retention import INBOX_RETENTION_DAYS
from knowledge_service.models import AutoStudy
from knowledge_service.storage.feed_store import (
    Action,
    ActionStore,
    InboxRow,
    InboxStore,
    Watermark,
    WatermarkStore,
    envelope_text,
    reading_from,
    stream_key,
)
from knowledge_service.storage.findings_store import FindingsStore
from knowledge_service.storage.missions import MissionBus
from knowledge_service.upstream.client import FeedCursorRefused
from knowledge_service.upstream.models import (
    EXPORT_COMPLETED,
    REVISION_PUBLISHED,
    Capabilities,
    FeedEnvelope,
    FeedPage,
    ForagerSource,
    ReceiptAnswer,
)

logger = logging.getLogger(__name__)

PAGE_LIMIT = 500
MAX_RECOVERIES = 4
STREAM = "knowledge"


class FeedClient(Protocol):
    """What the consumer needs of FORAGER (``ForagerClient`` is one; tests hand in a fake)."""

    def capabilities(self) -> Capabilities: ...

    def feed(self, project_ref: str, *, generation: str | None, after: int, limit: int = PAGE_LIMIT) -> FeedPage: ...

    def sources(self, project_ref: str) -> list[ForagerSource]: ...

    def receipt(
        self, project_ref: str, event_id: str, status: str, detail: str, *, synthesized: bool = False
    ) -> ReceiptAnswer: ...


@dataclass(frozen=True)
class FeedStores:
    inbox: InboxStore
    watermarks: WatermarkStore
    actions: ActionStore
    findings: FindingsStore
    missions: MissionBus | None


@dataclass
class PassOutcome:
    knowledge_base: str
    received: int = 0
    recorded: int = 0
    acted: int = 0
    findings: int = 0
    mission_ids: list[str] = field(default_factory=list)
    receipts: int = 0
    degraded: list[str] = field(default_factory=list)
    reconciled: int = 0
    pruned: int = 0
    watermark: int = 0
    polled: bool = False


Checkpoint = Callable[[str], None]


def _no_checkpoint(step: str) -> None:
    return None


class FeedConsumer:
    def __init__(
        self,
        stores: FeedStores,
        client: FeedClient,
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        checkpoint: Checkpoint = _no_checkpoint,
        page_limit: int = PAGE_LIMIT,
    ) -> None:
        self.stores = stores
        self.client = client
        self.now = now
        self.checkpoint = checkpoint
        self.page_limit = page_limit

    # ------------------------------------------------------------------ the pass
    def run(self, knowledge_base: str, project: str, revision_study: AutoStudy) -> PassOutcome:
        outcome = PassOutcome(knowledge_base=knowledge_base)
        caps = self.client.capabilities()
        instance = caps.instance_id or "unknown"
        generation = caps.generation or "unknown"
        mark = self._current(knowledge_base, instance, generation, STREAM)
        unchecked = False
        # Every recovery degrades the stream once; a producer that keeps failing them ends the pass.
        while len(outcome.degraded) <= MAX_RECOVERIES:
            # Start at the anchor, at the latest, to see the producer still holds what was read.
            verify = not unchecked and mark.anchor_sequence is not None
            unchecked = False
            try:
                page, divergence = self._read(mark, verify)
            except FeedCursorRefused as refused:
                # When only the anchor left the replay window (the watermark did not), read on unchecked.
                unchecked = verify and _only_the_anchor_expired(refused, mark)
                if not unchecked:
                    mark = self._recover(mark, refused, outcome, project, revision_study)
                continue
            self.checkpoint("read")
            if divergence is not None:
                mark = self._restore(mark, *divergence, outcome, project, revision_study)
                continue
            outcome.received += sum(1 for raw in page.envelopes if not (verify and _rechecked(raw, mark)))
            if not _same_stream(page, mark) or page.instance_id != instance:
                mark = self._live(knowledge_base, page.instance_id, page.generation, page.stream)
            kept, gap_at = self._contiguous(page, mark.sequence)
            if kept:
                advanced = self._consume(mark, kept, project, revision_study, outcome)
                if advanced is None:  # another pass moved it first, or a restore superseded it
                    mark = self._reread(mark)
                    continue
                mark = advanced
            if gap_at is not None:
                mark = self._reconcile_gap(mark, gap_at, outcome, project, revision_study)
                continue
            # A short page that held only what was checked: read on from the watermark.
            unchecked = not kept and verify and _only_rechecked(page, mark)
            if not unchecked and (not kept or not _more_after(page, mark, self.page_limit)):
                break
        self._resume_interrupted(knowledge_base, instance, project, revision_study, outcome)
        outcome.pruned = self.prune(knowledge_base)
        outcome.watermark = mark.sequence
        return outcome

    def _read(self, mark: Watermark, verify: bool) -> tuple[FeedPage, tuple[str, int] | None]:
        """A page after the watermark, and how the producer's history departs from what the colony
        read (None: it does not, or nothing was checked). An anchor at or below the watermark is
        checked on the page itself, which then starts at the anchor; one above it — rows a pass
        recorded before it died — is checked first, by reading that one envelope."""
        anchor = mark.anchor_sequence
        if verify and anchor is not None and anchor > mark.sequence:
            probe = self.client.feed(mark.knowledge_base, generation=mark.generation, after=anchor - 1, limit=1)
            if _same_stream(probe, mark) and (divergence := _divergence(probe, mark)) is not None:
                return probe, divergence
        page = self.client.feed(
            mark.knowledge_base, generation=mark.generation, after=_read_after(mark, verify), limit=self.page_limit
        )
        return page, _divergence(page, mark) if verify and _same_stream(page, mark) else None

    def _consume(
        self,
        mark: Watermark,
        kept: list[tuple[FeedEnvelope, dict[str, Any]]],
        project: str,
        policy: AutoStudy,
        outcome: PassOutcome,
    ) -> Watermark | None:
        """Steps 2–5 for a contiguous run; the watermark moved, or None when it could not be.

        The anchor moves to the run's last envelope *before* the run is recorded, so rows recorded
        above the watermark by a pass that then died are still checked against the producer: a
        restore cannot slip new envelopes onto their keys. It only ever moves forward: a run that
        ends below it (a producer answering short pages) is already covered, and every page read
        checks the anchor once it reaches it."""
        last = kept[-1][0]
        if mark.anchor_sequence is None or last.sequence > mark.anchor_sequence:
            anchor = (last.sequence, last.event_id)
            if not self.stores.watermarks.anchor(mark, anchor, self._stamp()):
                return None
            mark = mark.model_copy(update={"anchor_sequence": anchor[0], "anchor_event_id": anchor[1]})
            self.checkpoint("anchored")
        self._record(mark, kept)
        outcome.recorded += len(kept)
        self.checkpoint("recorded")
        failed = self._act(mark, kept, project, policy, outcome)
        self.checkpoint("acted")
        self._receipts(mark.knowledge_base, kept, failed, policy, outcome)
        self.checkpoint("receipted")
        if not self.stores.watermarks.advance(mark, last.sequence, self._stamp()):
            return None
        self.checkpoint("advanced")
        return mark.model_copy(update={"sequence": last.sequence})

    # ------------------------------------------------------------------ reading
    def _live(self, knowledge_base: str, instance: str, generation: str, stream: str) -> Watermark:
        """The newest epoch of a producer generation's stream; epoch 0 at 0 when it has none yet."""
        lineage = self.stores.watermarks.lineage(knowledge_base, instance, generation, stream)
        if lineage:
            return lineage[-1]
        return self.stores.watermarks.start(
            Watermark(
                knowledge_base=knowledge_base,
                stream_key=stream_key(knowledge_base, instance, generation, stream),
                instance_id=instance,
                generation=generation,
                stream=stream,
                updated_at=self._stamp(),
            )
        )

    def _current(self, knowledge_base: str, instance: str, generation: str, stream: str) -> Watermark:
        """Where this pass starts (``reading_from``), or a new generation's watermark at 0."""
        found = reading_from(self.stores.watermarks.all(knowledge_base), instance, generation, stream)
        return found or self._live(knowledge_base, instance, generation, stream)

    def _reread(self, mark: Watermark) -> Watermark:
        return self._live(mark.knowledge_base, mark.instance_id, mark.generation, mark.stream)

    @staticmethod
    def _contiguous(page: FeedPage, after: int) -> tuple[list[tuple[FeedEnvelope, dict[str, Any]]], int | None]:
        """The run of envelopes from ``after + 1`` with no hole; the first missing sequence if one stops it."""
        by_sequence: dict[int, tuple[FeedEnvelope, dict[str, Any]]] = {}
        for raw in page.envelopes:
            try:
                envelope = FeedEnvelope.model_validate(raw)
            except ValidationError:
                logger.warning("an envelope the consumer cannot read was left on the feed")
                continue
            if envelope.sequence > after:
                by_sequence.setdefault(envelope.sequence, (envelope, dict(raw)))
        kept = []
        expected = after + 1
        while expected in by_sequence:
            kept.append(by_sequence[expected])
            expected += 1
        gap = expected if any(s > expected for s in by_sequence) else None
        return kept, gap

    def _record(self, mark: Watermark, kept: list[tuple[FeedEnvelope, dict[str, Any]]]) -> None:
        received = self._stamp()
        rows = []
        for envelope, raw in kept:
            payload = envelope.payload
            is_export = envelope.event_type == EXPORT_COMPLETED
            publication = payload.get("publication_sequence")
            rows.append(
                InboxRow(
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
            )
        self.stores.inbox.record(rows)

    # ------------------------------------------------------------------ acting
    def _act(
        self,
        mark: Watermark,
        kept: list[tuple[FeedEnvelope, dict[str, Any]]],
        project: str,
        policy: AutoStudy,
        outcome: PassOutcome,
    ) -> set[str]:
        """Claim and study each revision; the event ids whose study failed."""
        failed: set[str] = set()
        if policy is AutoStudy.OFF:
            return failed
        for envelope, _ in kept:
            revision = _text(envelope.payload.get("revision_id"))
            if envelope.event_type != REVISION_PUBLISHED or revision is None:
                continue  # an export claims nothing
            content = _text(envelope.payload.get("logical_content_hash"))
            action = Action(
                knowledge_base=mark.knowledge_base,
                effect_key=f"{mark.instance_id}#{revision}#{ACTION_TYPE}#v{POLICY_VERSION}",
                instance_id=mark.instance_id,
                revision_id=revision,
                action_type=ACTION_TYPE,
                policy_version=POLICY_VERSION,
                project=project,
                event_id=envelope.event_id,
                claimed_at=self._stamp(),
                republished=bool(content)
                and self.stores.inbox.earlier_publication(
                    mark.knowledge_base, content or "", revision, before=(mark.stream_key, envelope.sequence)
                ),
            )
            if not self.stores.actions.claim(action):
                continue
            self.checkpoint("claimed")
            if not self._study(action, policy, outcome):
                failed.add(envelope.event_id)
        return failed

    def _study(self, action: Action, policy: AutoStudy, outcome: PassOutcome) -> bool:
        try:
            result = study_pass(
                self.client,
                self.stores.findings,
                self.stores.missions,
                action.knowledge_base,
                action.project,
                queue=policy is AutoStudy.ON,
            )
        except Exception:
            logger.exception("studying revision %s failed", action.revision_id)
            self.stores.actions.finish(action, "failed", 0, [])
            return False
        self.stores.actions.finish(
            action, "queued" if policy is AutoStudy.ON else "studied", len(result.findings), result.mission_ids
        )
        outcome.acted += 1
        outcome.findings += len(result.findings)
        outcome.mission_ids.extend(result.mission_ids)
        return True

    def _resume_interrupted(
        self, knowledge_base: str, instance: str, project: str, policy: AutoStudy, outcome: PassOutcome
    ) -> None:
        """An action claimed by a pass that died before studying it is studied now (once more is harmless:
        a finding and its mission are keyed by the change, not by the pass)."""
        if policy is AutoStudy.OFF:
            return
        for action in self.stores.actions.all(knowledge_base):
            if action.outcome == "claimed" and action.instance_id == instance:
                self._study(action, policy, outcome)

    def _receipts(
        self,
        knowledge_base: str,
        kept: list[tuple[FeedEnvelope, dict[str, Any]]],
        failed: set[str],
        policy: AutoStudy,
        outcome: PassOutcome,
    ) -> None:
        detail = "recorded; knowledge_revision_study is off" if policy is AutoStudy.OFF else "recorded"
        for envelope, _ in kept:
            status = "failed" if envelope.event_id in failed else "available"
            try:
                self.client.receipt(knowledge_base, envelope.event_id, status, detail)
                outcome.receipts += 1
            except Exception:  # a receipt is owed, not a reason to lose the pass
                logger.warning("receipt for %s was not delivered", envelope.event_id)

    # ------------------------------------------------------------------ recovery
    def _recover(
        self, mark: Watermark, refused: FeedCursorRefused, outcome: PassOutcome, project: str, policy: AutoStudy
    ) -> Watermark:
        details = refused.details
        if refused.code == "cursor_ahead":  # the producer was restored to an older head
            head = _int(details.get("head_sequence"))
            through = mark.sequence if head is None else min(head, mark.sequence)
            return self._restore(mark, refused.code, through, outcome, project, policy)
        self._degrade(mark, f"{refused.code}: {refused.message}", refused.code, outcome, project, policy)
        if refused.code == "generation_changed":
            caps = self.client.capabilities()
            self.stores.watermarks.mark(
                mark,
                "ok",
                f"superseded by generation {caps.generation}; reconciled against the source list",
                self._stamp(),
            )
            return self._live(
                mark.knowledge_base,
                caps.instance_id or mark.instance_id,
                caps.generation or mark.generation,
                mark.stream,
            )
        earliest = _int(details.get("earliest_sequence"))
        to = mark.sequence if earliest is None else max(earliest - 1, mark.sequence)
        note = f"{refused.code}: reconciled against the source list"
        self._force(mark, to, note, [mark.sequence + 1, to] if to > mark.sequence else None)
        return self._reread(mark)

    def _restore(
        self, mark: Watermark, code: str, through: int, outcome: PassOutcome, project: str, policy: AutoStudy
    ) -> Watermark:
        """The producer no longer holds the history read up to the watermark: reconcile, then read
        on as a new epoch from the last sequence (at or below ``through``) both histories share."""
        self._degrade(
            mark,
            f"{code}: the producer no longer holds the envelopes read up to sequence {mark.sequence}",
            code,
            outcome,
            project,
            policy,
        )
        base, anchor = self._fork_point(mark, min(through, mark.sequence))
        note = (
            f"{code}: the producer was restored; read on after sequence {base}, the last one both "
            f"histories share; reconciled against the source list"
        )
        return self.stores.watermarks.restart(mark, base, anchor, note, self._stamp())

    def _fork_point(self, mark: Watermark, through: int) -> tuple[int, tuple[int, str] | None]:
        """The last sequence at or below ``through`` up to which the producer holds exactly what the
        colony read, and the last envelope both hold (the new epoch's anchor); 0 — read everything
        the producer still holds again — when the one page compared does not reach back that far."""
        low = max(0, through - self.page_limit)
        try:
            page = self.client.feed(mark.knowledge_base, generation=mark.generation, after=low, limit=self.page_limit)
        except FeedCursorRefused:
            return 0, None
        theirs = {
            raw.get("sequence"): raw.get("event_id")
            for raw in page.envelopes
            if isinstance(raw.get("sequence"), int) and low < raw["sequence"] <= through  # type: ignore[operator]
        }
        ours = self._history(mark, low, through)
        shared, anchor = low, None
        for sequence in range(low + 1, through + 1):
            held = ours.get(sequence)
            if theirs.get(sequence) != held:
                break
            shared = sequence
            if held is not None:
                anchor = (sequence, held)
        if anchor is None and low > 0:
            return 0, None
        return shared, anchor

    def _history(self, mark: Watermark, low: int, through: int) -> dict[int, str]:
        """The event id the colony read at each sequence in (low, through] of this generation's
        stream: each epoch answers for the sequences above its base, the newest epoch first."""
        read: dict[int, str] = {}
        ceiling = through
        lineage = self.stores.watermarks.lineage(mark.knowledge_base, mark.instance_id, mark.generation, mark.stream)
        for epoch in reversed([m for m in lineage if m.epoch <= mark.epoch]):
            first, last = max(low, epoch.base) + 1, min(ceiling, epoch.sequence)
            for row in self.stores.inbox.between(epoch.stream_key, first, last):
                read[row.sequence] = row.event_id
            ceiling = min(ceiling, epoch.base)
            if ceiling <= low:
                break
        return read

    def _reconcile_gap(
        self, mark: Watermark, gap_at: int, outcome: PassOutcome, project: str, policy: AutoStudy
    ) -> Watermark:
        self._degrade(mark, f"gap: sequence {gap_at} is missing", "gap", outcome, project, policy)
        page = self.client.feed(
            mark.knowledge_base, generation=mark.generation, after=mark.sequence, limit=self.page_limit
        )
        sequences = [e.get("sequence") for e in page.envelopes]
        later = sorted(s for s in sequences if isinstance(s, int) and s > gap_at)
        to = (later[0] - 1) if later else gap_at
        self._force(mark, to, f"gap at {gap_at}: reconciled against the source list", [gap_at, to])
        return self._reread(mark)

    def _degrade(
        self, mark: Watermark, note: str, code: str, outcome: PassOutcome, project: str, policy: AutoStudy
    ) -> None:
        outcome.degraded.append(code)
        self.stores.watermarks.mark(mark, "degraded", note, self._stamp())
        self.checkpoint("degraded")
        self._reconcile(mark.knowledge_base, project, policy, outcome)

    def _force(self, mark: Watermark, to: int, note: str, reconciled: list[int] | None) -> None:
        current = self._reread(mark)
        if current.stream_key != mark.stream_key:  # a restore superseded this epoch meanwhile
            return
        if current.sequence > to:  # another pass went further meanwhile
            self.stores.watermarks.mark(current, "ok", note, self._stamp())
            return
        self.stores.watermarks.advance(current, to, self._stamp(), status="ok", note=note, reconciled=reconciled)

    def _reconcile(self, knowledge_base: str, project: str, policy: AutoStudy, outcome: PassOutcome) -> None:
        """The polling pass: the source list, studied as the revision setting allows."""
        if policy is AutoStudy.OFF:
            self.client.sources(knowledge_base)
        else:
            result = study_pass(
                self.client,
                self.stores.findings,
                self.stores.missions,
                knowledge_base,
                project,
                queue=policy is AutoStudy.ON,
            )
            outcome.findings += len(result.findings)
            outcome.mission_ids.extend(result.mission_ids)
        outcome.reconciled += 1
        self.checkpoint("reconciled")

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


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _same_stream(page: FeedPage, mark: Watermark) -> bool:
    return (page.stream, page.generation) == (mark.stream, mark.generation)


def _only_rechecked(page: FeedPage, mark: Watermark) -> bool:
    """Did a checked read answer nothing but the envelopes it re-read, with more to come?"""
    more = page.head_sequence is None or page.head_sequence > mark.sequence
    return more and bool(page.envelopes) and all(_rechecked(raw, mark) for raw in page.envelopes)


def _more_after(page: FeedPage, mark: Watermark, limit: int) -> bool:
    """Is there more to read after the watermark: the stated head, or else a full page?"""
    if page.head_sequence is not None:
        return page.head_sequence > mark.sequence
    return len(page.envelopes) >= limit


def _read_after(mark: Watermark, verify: bool) -> int:
    """The cursor: the watermark, or one before the anchor when that is lower and is to be checked."""
    if verify and mark.anchor_sequence is not None:
        return min(mark.anchor_sequence - 1, mark.sequence)
    return mark.sequence


def _only_the_anchor_expired(refused: FeedCursorRefused, mark: Watermark) -> bool:
    """cursor_expired for a checked read that a read from the watermark itself would not get."""
    earliest = _int(refused.details.get("earliest_sequence"))
    return refused.code == "cursor_expired" and earliest is not None and earliest <= mark.sequence + 1


def _rechecked(raw: dict[str, Any], mark: Watermark) -> bool:
    """Is this envelope one the read asked for again only to check it (anchor to watermark)?"""
    sequence = raw.get("sequence")
    return isinstance(sequence, int) and (mark.anchor_sequence or 0) <= sequence <= mark.sequence


def _divergence(page: FeedPage, mark: Watermark) -> tuple[str, int] | None:
    """Whether the producer still holds what the colony read: None when it does (or the page cannot
    tell), else the reason and the highest sequence worth comparing (never above the watermark).

    One envelope is enough: event ids are unique, so a history forked at or below the anchor has
    another envelope (or none) there. Between the anchor and the watermark the colony read nothing
    (it reconciled a gap or an expiry), so a message there is a fork too."""
    anchor = mark.anchor_sequence or 0
    if page.head_sequence is not None and page.head_sequence < max(anchor, mark.sequence):
        return "cursor_ahead", min(page.head_sequence, mark.sequence)
    held = {raw.get("sequence"): raw.get("event_id") for raw in page.envelopes}
    if anchor in held:
        if held[anchor] != mark.anchor_event_id:
            return "history_diverged", mark.sequence
    elif any(isinstance(s, int) and s > anchor for s in held):  # later envelopes, none at the anchor
        return "history_diverged", mark.sequence
    if any(isinstance(s, int) and anchor < s <= mark.sequence for s in held):
        return "history_diverged", mark.sequence
    return None


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
