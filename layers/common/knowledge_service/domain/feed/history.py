"""What a page says about the stream, decided without storage: pure functions of a watermark and
a page.

- :func:`reading_from` — which of a knowledge base's watermarks the next pass reads from;
- :func:`admit` — every item of a page through the door, with the sequence and event id it
  stands for (a run of unreadable items stands where its neighbours, the read's cursor and the
  head place it, when they do);
- :func:`contiguous` — the run from the watermark with no hole, the first missing sequence if
  a hole stops it, and the refusal that stops the stream (``protocol_unsupported``) if one does;
- :func:`divergence` — whether the producer still holds what the colony read (``cursor_ahead``,
  ``history_diverged``), and the helpers the read loop asks (:func:`read_after`,
  :func:`rechecked`, :func:`only_rechecked`, :func:`more_after`, :func:`only_the_anchor_expired`);
- :func:`decide` — read on, gap, diverged: the one question the loop asks of each page.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum

from knowledge_service.domain.feed.door import Admitted, Refused, parse
from knowledge_service.storage.feed_store import Watermark
from knowledge_service.upstream.models import FeedCursorRefused, FeedPage


@dataclass(frozen=True)
class Slot:
    """One item of a page after the door: where it stands and what it was judged."""

    sequence: int | None
    event_id: str | None
    judged: Admitted | Refused

    @property
    def stated(self) -> bool:
        """Does the envelope state its own sequence (rather than stand where its neighbours place it)?"""
        judged = self.judged
        return self.sequence is not None and (isinstance(judged, Admitted) or judged.sequence is not None)


class Step(StrEnum):
    READ_ON = "read_on"
    GAP = "gap"
    DIVERGED = "diverged"
    RECOVER = "recover"


@dataclass(frozen=True)
class Decision:
    step: Step
    run: list[Slot]
    gap_at: int | None = None
    stopped_at: Slot | None = None
    divergence: tuple[str, int] | None = None


def reading_from(marks: list[Watermark], instance_id: str, generation: str, stream: str) -> Watermark | None:
    """Of a knowledge base's watermarks, the one the next pass reads from: the newest epoch of the
    generation the engine states; else, before that generation has a row, the live row of the one
    read last (FORAGER answers it generation_changed, and the pass starts the new one at 0)."""
    stated = [m for m in marks if (m.instance_id, m.generation, m.stream) == (instance_id, generation, stream)]
    if stated:
        return max(stated, key=lambda m: m.epoch)
    live = [m for m in marks if m.instance_id == instance_id and m.stream == stream and m.superseded_by is None]
    return max(live, key=lambda m: m.updated_at, default=None)


def admit(page: FeedPage, after: int | None = None, limit: int | None = None) -> list[Slot]:
    """Every item through the door, each standing where it and its neighbours place it.

    A run of ``k`` items whose sequences cannot be read stands at ``s + 1 … s + k`` when what
    comes before it stands at ``s`` (the item before, or — for a run that opens the page — the
    cursor ``after`` the page was read from) and what follows stands at ``s + k + 1`` (the item
    after, or — for a run that closes the page — the head). Otherwise the run stands nowhere,
    and the hole it leaves is a gap. So two unreadable envelopes in a row, or one at the tail,
    are filed like one alone.

    A run that closes a page its read's ``limit`` cut short stands nowhere: what followed it was
    cut off, so the head borders nothing on the page, and agrees with the run by arithmetic alone
    — a producer that redelivers from an earlier sequence (at least once; the contract's
    ``redeliver``) answers a one-envelope read after ``s`` with an envelope that is not at
    ``s + 1``, and one whose pages come out of order may cut off the envelope the run seems to
    reach. The next read, from where the run stood, places it."""
    judged = [parse(item) for item in page.envelopes]
    sequences: list[int | None] = [j.envelope.sequence if isinstance(j, Admitted) else j.sequence for j in judged]
    cut = limit is not None and len(sequences) >= limit
    i = 0
    while i < len(sequences):
        if sequences[i] is not None:
            i += 1
            continue
        end = i
        while end < len(sequences) and sequences[end] is None:
            end += 1
        before = sequences[i - 1] if i > 0 else after
        # What follows a run that closes the page is the head, unless the read's limit cut the page:
        # then what followed it was cut off, and the head borders nothing on the page.
        following = sequences[end] if end < len(sequences) else None if cut else page.head_sequence
        count = end - i
        if before is not None and following == before + count + (1 if end < len(sequences) else 0):
            sequences[i:end] = range(before + 1, before + count + 1)
        i = end
    return [Slot(seq, _event_id(j), j) for seq, j in zip(sequences, judged, strict=True)]


def _event_id(judged: Admitted | Refused) -> str:
    """The event id an item is known by: its own, or — unreadable — a digest of its bytes."""
    if isinstance(judged, Admitted):
        return judged.envelope.event_id
    if judged.event_id is not None:
        return judged.event_id
    return "unreadable:" + hashlib.sha256(judged.text.encode("utf-8")).hexdigest()[:24]


def contiguous(slots: list[Slot], after: int) -> tuple[list[Slot], int | None, Slot | None]:
    """The run from ``after + 1`` with no hole; the first missing sequence when a hole stops it;
    the refusal that stops the stream (the run ends just before it) when one does."""
    by_sequence: dict[int, Slot] = {}
    for slot in slots:
        if slot.sequence is not None and slot.sequence > after:
            by_sequence.setdefault(slot.sequence, slot)
    run: list[Slot] = []
    expected = after + 1
    while expected in by_sequence:
        slot = by_sequence[expected]
        if isinstance(slot.judged, Refused) and slot.judged.stops_the_stream:
            return run, None, slot
        run.append(slot)
        expected += 1
    gap = expected if any(s > expected for s in by_sequence) else None
    return run, gap, None


def decide(
    page: FeedPage, mark: Watermark, verify: bool, after: int | None = None, limit: int | None = None
) -> Decision:
    """Of one page read from the cursor ``after`` (at most ``limit`` envelopes) for ``mark``:
    diverged (the producer no longer holds what was read), a gap short of which the run stops, or
    read on with the run (possibly empty, possibly stopped)."""
    slots = admit(page, after, limit)
    if verify and same_stream(page, mark) and (found := divergence(page, mark, slots)) is not None:
        return Decision(Step.DIVERGED, [], divergence=found)
    run, gap_at, stopped = contiguous(slots, mark.sequence)
    if gap_at is not None:
        return Decision(Step.GAP, run, gap_at=gap_at)
    return Decision(Step.READ_ON, run, stopped_at=stopped)


def held(page: FeedPage, slots: list[Slot] | None = None) -> dict[int | None, str | None]:
    """Sequence → event id of what the page holds (unreadable items by the digest of their bytes)."""
    return {s.sequence: s.event_id for s in (slots if slots is not None else admit(page))}


def same_stream(page: FeedPage, mark: Watermark) -> bool:
    return (page.stream, page.generation) == (mark.stream, mark.generation)


def rechecked(sequence: int | None, mark: Watermark) -> bool:
    """Is this envelope one the read asked for again only to check it (anchor to watermark)?"""
    return isinstance(sequence, int) and (mark.anchor_sequence or 0) <= sequence <= mark.sequence


def only_rechecked(page: FeedPage, mark: Watermark, after: int | None = None, limit: int | None = None) -> bool:
    """Did a checked read (from the cursor ``after``) answer nothing but the envelopes it re-read,
    with more to come?"""
    more = page.head_sequence is None or page.head_sequence > mark.sequence
    slots = admit(page, after, limit)
    return more and bool(slots) and all(rechecked(s.sequence, mark) for s in slots)


def more_after(page: FeedPage, mark: Watermark, limit: int) -> bool:
    """Is there more to read after the watermark: the stated head, or else a full page?"""
    if page.head_sequence is not None:
        return page.head_sequence > mark.sequence
    return len(page.envelopes) >= limit


def read_after(mark: Watermark, verify: bool) -> int:
    """The cursor: the watermark, or one before the anchor when that is lower and is to be checked."""
    if verify and mark.anchor_sequence is not None:
        return min(mark.anchor_sequence - 1, mark.sequence)
    return mark.sequence


def only_the_anchor_expired(refused: FeedCursorRefused, mark: Watermark) -> bool:
    """cursor_expired for a checked read that a read from the watermark itself would not get."""
    earliest = as_int(refused.details.get("earliest_sequence"))
    return refused.code == "cursor_expired" and earliest is not None and earliest <= mark.sequence + 1


def divergence(page: FeedPage, mark: Watermark, slots: list[Slot] | None = None) -> tuple[str, int] | None:
    """Whether the producer still holds what the colony read: None when it does (or the page cannot
    tell), else the reason and the highest sequence worth comparing (never above the watermark).

    One envelope is enough: event ids are unique, so a history forked at or below the anchor has
    another envelope (or none) there. Between the anchor and the watermark the colony read no
    envelope that states its sequence (it reconciled a gap or an expiry, or its neighbours placed
    an unreadable one), so one that states a sequence there is a fork too. Only envelopes that
    state their sequence are evidence: one placed by its neighbours on a page out of order may
    stand anywhere. (An anchor stored by an older build may still be an unreadable envelope, known
    by its bytes' digest: found on the page where nothing places it, it is still held.)"""
    anchor = mark.anchor_sequence or 0
    if page.head_sequence is not None and page.head_sequence < max(anchor, mark.sequence):
        return "cursor_ahead", min(page.head_sequence, mark.sequence)
    slots = slots if slots is not None else admit(page)
    holds = held(page, slots)
    stated = {s.sequence for s in slots if s.stated and s.sequence is not None}
    if anchor in holds:
        if holds[anchor] != mark.anchor_event_id:
            return "history_diverged", mark.sequence
    elif any(s > anchor for s in stated) and not _unplaced(slots, mark.anchor_event_id):
        return "history_diverged", mark.sequence  # later envelopes, none at the anchor
    if any(anchor < s <= mark.sequence for s in stated):
        return "history_diverged", mark.sequence
    return None


def _unplaced(slots: list[Slot], event_id: str | None) -> bool:
    """Does the page hold ``event_id`` where its neighbours could not place it? An anchor that is
    an unreadable envelope (known by the digest of its bytes) on a page out of order stands
    nowhere, yet the producer still holds it: no fork is seen there."""
    return event_id is not None and any(s.sequence is None and s.event_id == event_id for s in slots)


def as_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
