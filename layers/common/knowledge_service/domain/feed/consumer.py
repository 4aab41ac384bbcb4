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
5. move the watermark, conditionally, from the value read to the last kept sequence.

A crash before 5 re-reads the page next time: recording is idempotent and the claim is
conditional. An action claimed but never finished (crash after 3's claim) reads
``claimed`` and the next pass studies it. A gap, ``cursor_expired``, ``cursor_ahead`` or
``generation_changed`` marks the stream degraded, reconciles against the source list, and
only then marks it ok again.
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
        stream = "knowledge"
        mark = self._current(knowledge_base, instance, generation, stream)
        recoveries = 0
        while True:
            try:
                page = self.client.feed(
                    knowledge_base, generation=mark.generation, after=mark.sequence, limit=self.page_limit
                )
            except FeedCursorRefused as refused:
                recoveries += 1
                if recoveries > MAX_RECOVERIES:
                    break
                mark = self._recover(mark, refused, outcome, project, revision_study)
                continue
            self.checkpoint("read")
            if page.stream != mark.stream or page.generation != mark.generation or page.instance_id != instance:
                mark = self._watermark(knowledge_base, page.instance_id, page.generation, page.stream)
            kept, gap_at = self._contiguous(page, mark.sequence)
            outcome.received += len(page.envelopes)
            if kept:
                self._record(mark, kept)
                outcome.recorded += len(kept)
                self.checkpoint("recorded")
                failed = self._act(mark, kept, project, revision_study, outcome)
                self.checkpoint("acted")
                self._receipts(knowledge_base, kept, failed, revision_study, outcome)
                self.checkpoint("receipted")
                last = kept[-1][0].sequence
                if not self.stores.watermarks.advance(mark, last, self._stamp()):
                    # Another pass moved it first: read it again and go on from there.
                    mark = self._reread(mark)
                    continue
                mark = mark.model_copy(update={"sequence": last})
                self.checkpoint("advanced")
            if gap_at is not None:
                recoveries += 1
                if recoveries > MAX_RECOVERIES:
                    break
                mark = self._reconcile_gap(mark, gap_at, outcome, project, revision_study)
                continue
            if len(page.envelopes) < self.page_limit or not kept:
                break
        self._resume_interrupted(knowledge_base, instance, project, revision_study, outcome)
        outcome.pruned = self.prune(knowledge_base)
        outcome.watermark = mark.sequence
        return outcome

    # ------------------------------------------------------------------ reading
    def _watermark(self, knowledge_base: str, instance: str, generation: str, stream: str) -> Watermark:
        key = stream_key(knowledge_base, instance, generation, stream)
        found = self.stores.watermarks.get(knowledge_base, key)
        if found is not None:
            return found
        return self.stores.watermarks.start(
            Watermark(
                knowledge_base=knowledge_base,
                stream_key=key,
                instance_id=instance,
                generation=generation,
                stream=stream,
                updated_at=self._stamp(),
            )
        )

    def _current(self, knowledge_base: str, instance: str, generation: str, stream: str) -> Watermark:
        """The stream's watermark for the generation the engine states; when there is none yet but an
        older generation's is, read from that one, so FORAGER answers generation_changed and the
        pass degrades, reconciles against the source list, and only then starts the new one at 0."""
        found = self.stores.watermarks.get(knowledge_base, stream_key(knowledge_base, instance, generation, stream))
        if found is not None:
            return found
        older = [
            m
            for m in self.stores.watermarks.all(knowledge_base)
            if m.instance_id == instance and m.stream == stream and m.generation != generation
        ]
        if older:
            return max(older, key=lambda m: m.updated_at)
        return self._watermark(knowledge_base, instance, generation, stream)

    def _reread(self, mark: Watermark) -> Watermark:
        found = self.stores.watermarks.get(mark.knowledge_base, mark.stream_key)
        assert found is not None
        return found

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
        outcome.degraded.append(refused.code)
        self.stores.watermarks.mark(mark, "degraded", f"{refused.code}: {refused.message}", self._stamp())
        self.checkpoint("degraded")
        self._reconcile(mark.knowledge_base, project, policy, outcome)
        if refused.code == "generation_changed":
            caps = self.client.capabilities()
            self.stores.watermarks.mark(
                mark,
                "ok",
                f"superseded by generation {caps.generation}; reconciled against the source list",
                self._stamp(),
            )
            return self._watermark(
                mark.knowledge_base,
                caps.instance_id or mark.instance_id,
                caps.generation or mark.generation,
                mark.stream,
            )
        details = refused.details
        if refused.code == "cursor_expired":
            to = max(int(details.get("earliest_sequence", mark.sequence + 1)) - 1, mark.sequence)
        else:  # cursor_ahead: the producer was restored to an older head
            to = int(details.get("head_sequence", mark.sequence))
        note = f"{refused.code}: reconciled against the source list"
        reconciled = [mark.sequence + 1, to] if to > mark.sequence else None
        self._force(mark, to, note, reconciled)
        return self._reread(mark)

    def _reconcile_gap(
        self, mark: Watermark, gap_at: int, outcome: PassOutcome, project: str, policy: AutoStudy
    ) -> Watermark:
        outcome.degraded.append("gap")
        self.stores.watermarks.mark(mark, "degraded", f"gap: sequence {gap_at} is missing", self._stamp())
        self.checkpoint("degraded")
        self._reconcile(mark.knowledge_base, project, policy, outcome)
        page = self.client.feed(
            mark.knowledge_base, generation=mark.generation, after=mark.sequence, limit=self.page_limit
        )
        sequences = [e.get("sequence") for e in page.envelopes]
        later = sorted(s for s in sequences if isinstance(s, int) and s > gap_at)
        to = (later[0] - 1) if later else gap_at
        self._force(mark, to, f"gap at {gap_at}: reconciled against the source list", [gap_at, to])
        return self._reread(mark)

    def _force(self, mark: Watermark, to: int, note: str, reconciled: list[int] | None) -> None:
        current = self._reread(mark)
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
