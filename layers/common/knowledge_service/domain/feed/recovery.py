"""Recovery (the change feed's recovery rules): a gap, ``cursor_expired``, ``cursor_ahead``,
``generation_changed`` or a history that diverged degrades the stream, reconciles against the
engine's source list — the polling pass — and only then marks it ok again.

A gap stops the pass short of it. Before the watermark passes the hole, the hole is read again
(a producer may have answered a short page); what the producer still cannot serve is passed
over, named in the pass's answer, and exports in it are reconciled from the engine's export
history so no arrival is hidden.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from knowledge_service.domain.feed.history import as_int, held as held_by, same_stream
from knowledge_service.domain.feed.ports import FeedClient, FeedStores, PassOutcome
from knowledge_service.domain.findings import study_pass
from knowledge_service.models import AutoStudy
from knowledge_service.storage.feed_store import InboxRow, Watermark, WatermarkStatus, envelope_text, stream_key
from knowledge_service.upstream.models import EXPORT_COMPLETED, ExportRow, FeedCursorRefused


class Recovery:
    """The consumer's recovery steps (a base of :class:`FeedConsumer`)."""

    stores: FeedStores
    client: FeedClient
    now: Callable[[], datetime]
    checkpoint: Callable[[str], None]
    page_limit: int

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

    def _reread(self, mark: Watermark) -> Watermark:
        return self._live(mark.knowledge_base, mark.instance_id, mark.generation, mark.stream)

    def _stamp(self) -> str:
        return self.now().isoformat()

    # ------------------------------------------------------------------ recovery
    def _recover(
        self, mark: Watermark, refused: FeedCursorRefused, outcome: PassOutcome, project: str, policy: AutoStudy
    ) -> Watermark:
        details = refused.details
        if refused.code == "cursor_ahead":  # the producer was restored to an older head
            head = as_int(details.get("head_sequence"))
            through = mark.sequence if head is None else min(head, mark.sequence)
            return self._restore(mark, refused.code, through, outcome, project, policy)
        self._degrade(mark, f"{refused.code}: {refused.message}", refused.code, outcome, project, policy)
        if refused.code == "generation_changed":
            caps = self.client.capabilities()
            self.stores.watermarks.mark(
                mark,
                WatermarkStatus.OK,
                f"superseded by generation {caps.generation}; reconciled against the source list",
                self._stamp(),
            )
            return self._live(
                mark.knowledge_base,
                caps.instance_id or mark.instance_id,
                caps.generation or mark.generation,
                mark.stream,
            )
        earliest = as_int(details.get("earliest_sequence"))
        to = mark.sequence if earliest is None else max(earliest - 1, mark.sequence)
        note = f"{refused.code}: reconciled against the source list"
        if to > mark.sequence:
            self._pass_over(mark, [mark.sequence + 1, to], outcome)
        self._force(mark, to, note, [mark.sequence + 1, to] if to > mark.sequence else None)
        return self._reread(mark)

    def _restore(
        self, mark: Watermark, code: str, through: int, outcome: PassOutcome, project: str, policy: AutoStudy
    ) -> Watermark:
        """The producer no longer holds the history read up to the watermark: reconcile, then read
        on as a new epoch from the last envelope (at or below ``through``) both histories hold."""
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
        """The last envelope at or below ``through`` that the producer holds exactly as the colony
        read it, with the same history before it: the new epoch's base and anchor; 0 — read
        everything the producer still holds again — when there is none in the one page compared.

        A sequence where neither holds an envelope is shared only *below* such an envelope (event
        ids are unique, so a history that still holds it was not restored past it). Above the last
        one, "nothing" on both sides proves nothing: the colony's nothing is a hole it reconciled
        or an envelope the door refused, the restored producer's may be a new envelope it lost —
        an export only the export history can tell of. So the new epoch reads from that envelope
        again, and a hole there is a gap, passed over with its exports reconciled."""
        low = max(0, through - self.page_limit)
        try:
            page = self.client.feed(mark.knowledge_base, generation=mark.generation, after=low, limit=self.page_limit)
        except FeedCursorRefused:
            return 0, None
        theirs = {s: e for s, e in held_by(page).items() if isinstance(s, int) and low < s <= through}
        ours = self._history(mark, low, through)
        anchor: tuple[int, str] | None = None
        for sequence in range(low + 1, through + 1):
            held = ours.get(sequence)
            if theirs.get(sequence) != held:
                break
            if held is not None:
                anchor = (sequence, held)
        if anchor is None:
            return 0, None
        return anchor[0], anchor

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

    def _hole_served(self, mark: Watermark, gap_at: int) -> bool:
        """Read the hole again from the watermark: does the producer serve ``gap_at`` now (it may
        have answered a short page)? Then the pass reads on and nothing is passed over."""
        try:
            page = self.client.feed(
                mark.knowledge_base, generation=mark.generation, after=mark.sequence, limit=self.page_limit
            )
        except FeedCursorRefused:
            return False
        return same_stream(page, mark) and gap_at in held_by(page)

    def _reconcile_gap(
        self, mark: Watermark, gap_at: int, outcome: PassOutcome, project: str, policy: AutoStudy
    ) -> Watermark:
        """The producer still cannot serve the hole: degrade, reconcile against the source list and
        the export history, and only then move the watermark past it."""
        self._degrade(mark, f"gap: sequence {gap_at} is missing", "gap", outcome, project, policy)
        page = self.client.feed(
            mark.knowledge_base, generation=mark.generation, after=mark.sequence, limit=self.page_limit
        )
        sequences = list(held_by(page))
        later = sorted(s for s in sequences if isinstance(s, int) and s > gap_at)
        to = (later[0] - 1) if later else gap_at
        self._pass_over(mark, [gap_at, to], outcome)
        self._force(mark, to, f"gap at {gap_at}: reconciled against the source list", [gap_at, to])
        return self._reread(mark)

    def _pass_over(self, mark: Watermark, hole: list[int], outcome: PassOutcome) -> None:
        """Before the watermark passes a hole the producer cannot serve: every completed export in
        FORAGER's export history that no inbox row records is recorded now, as a reconciled export
        row, so an export whose envelope was in the hole is not hidden. A history that cannot be
        read raises: the pass stops short of the hole and the next one tries again."""
        history = self.client.exports(mark.knowledge_base)
        known = self.stores.inbox.export_ids(mark.knowledge_base)
        stamp = self._stamp()
        rows = [
            reconciled_export_row(mark, hole, row, stamp)
            for row in history.exports
            if row.status == "completed" and row.export_id not in known
        ]
        if rows:
            self.stores.inbox.record(rows)
        outcome.passed_over.append(list(hole))
        outcome.exports_reconciled += len(rows)
        self.checkpoint("passed_over")

    def _degrade(
        self, mark: Watermark, note: str, code: str, outcome: PassOutcome, project: str, policy: AutoStudy
    ) -> None:
        outcome.degraded.append(code)
        self.stores.watermarks.mark(mark, WatermarkStatus.DEGRADED, note, self._stamp())
        self.checkpoint("degraded")
        self._reconcile(mark.knowledge_base, project, policy, outcome)

    def _force(self, mark: Watermark, to: int, note: str, reconciled: list[int] | None) -> None:
        current = self._reread(mark)
        if current.stream_key != mark.stream_key:  # a restore superseded this epoch meanwhile
            return
        if current.sequence > to:  # another pass went further meanwhile
            self.stores.watermarks.mark(current, WatermarkStatus.OK, note, self._stamp())
            return
        self.stores.watermarks.advance(
            current, to, self._stamp(), status=WatermarkStatus.OK, note=note, reconciled=reconciled
        )

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


RECONCILED = "reconciled:"


def reconciled_export_row(mark: Watermark, hole: list[int], export: ExportRow, received: str) -> InboxRow:
    """An export the feed's hole hid, recorded from the export history: its own key
    (``<stream>#reconciled#<export id>``, at the hole's last sequence), an event id naming it
    reconciled, and an envelope written from the history's row (never one that arrived)."""
    payload = {
        "revision_id": export.revision_id,
        "export_id": export.export_id,
        "export_format": export.format,
        "package_digest": f"sha256:{export.sha256}" if export.sha256 else None,
    }
    envelope = {
        "reconciled_from": "export_history",
        "passed_over": hole,
        "event_type": EXPORT_COMPLETED,
        "payload": payload,
    }
    return InboxRow(
        stream_key=f"{mark.stream_key}#reconciled#{export.export_id}",
        sequence=hole[-1],
        knowledge_base=mark.knowledge_base,
        event_id=f"{RECONCILED}{export.export_id}",
        event_type=EXPORT_COMPLETED,
        revision_id=export.revision_id,
        envelope=envelope_text(envelope),
        received_at=received,
        export=True,
    )
