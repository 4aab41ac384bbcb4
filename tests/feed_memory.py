"""An in-memory implementation of the consumer's storage ports (``domain/feed/ports.py``).

It keeps the conditions the DynamoDB stores write (a claim only where none stands, a watermark
moved only from the value read and never once superseded, a resolution only of an unresolved
entry, a transaction all or nothing) so the state machine's laws mean the same against it as
against the tables. A transaction item here is ``{"memory": (check, apply)}``: ``file_with`` and
``resolve_with`` check every item before applying any.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from knowledge_service.domain.feed.ports import TransactItem
from knowledge_service.storage.dead_letter_store import (
    RESOLVED,
    SCRUB_BATCH,
    UNRESOLVED,
    Attempt,
    DeadLetter,
    Resolution,
)
from knowledge_service.storage.event_log import LoggedEvent, new_event
from knowledge_service.storage.feed_store import Action, ActionOutcome, InboxRow, Watermark, WatermarkStatus, stream_key

Check = Callable[[], bool]
Apply = Callable[[], None]


def _item(check: Check, apply: Apply) -> TransactItem:
    return {"memory": (check, apply)}


def _transact(items: list[TransactItem]) -> bool:
    steps: list[tuple[Check, Apply]] = [item["memory"] for item in items]
    if not all(check() for check, _ in steps):
        return False
    for _, apply in steps:
        apply()
    return True


class MemoryInbox:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, int], InboxRow] = {}

    def record(self, rows: Iterable[InboxRow]) -> None:
        for row in rows:
            self.rows[(row.stream_key, row.sequence)] = row.model_copy(deep=True)

    def get(self, key: str, sequence: int) -> InboxRow | None:
        found = self.rows.get((key, sequence))
        return found.model_copy(deep=True) if found else None

    def record_item(self, row: InboxRow) -> TransactItem:
        return _item(lambda: True, lambda: self.record([row]))

    def between(self, key: str, first: int, last: int) -> list[InboxRow]:
        return [r for r in self.sequences(key) if first <= r.sequence <= last]

    def stream(self, key: str, *, newest_first: bool = True, limit: int = 20) -> list[InboxRow]:
        rows = self.sequences(key)
        return (list(reversed(rows)) if newest_first else rows)[:limit]

    def sequences(self, key: str) -> list[InboxRow]:
        return sorted((r.model_copy(deep=True) for (k, _), r in self.rows.items() if k == key), key=_by_sequence)

    def earlier_publication(
        self, knowledge_base: str, logical_content_hash: str, revision_id: str, *, before: tuple[str, int]
    ) -> bool:
        stream, sequence = before
        return any(
            r.knowledge_base == knowledge_base
            and r.logical_content_hash == logical_content_hash
            and r.revision_id
            and not r.export
            and (r.stream_key != stream or r.sequence < sequence)
            and r.revision_id != revision_id
            for r in self.rows.values()
        )

    def exports(self, knowledge_base: str, limit: int = 20) -> list[InboxRow]:
        rows = [r for r in self.rows.values() if r.export and r.knowledge_base == knowledge_base]
        return sorted(rows, key=lambda r: r.received_at, reverse=True)[:limit]

    def export_ids(self, knowledge_base: str) -> set[str]:
        found: set[str] = set()
        for row in self.exports(knowledge_base, limit=len(self.rows) + 1):
            try:
                export_id = (json.loads(row.envelope).get("payload") or {}).get("export_id")
            except (ValueError, AttributeError):
                continue
            if isinstance(export_id, str) and export_id:
                found.add(export_id)
        return found

    def prunable(self, key: str, through_sequence: int, older_than: str) -> list[InboxRow]:
        return [
            r
            for r in self.sequences(key)
            if r.sequence <= through_sequence and r.received_at < older_than and not r.export
        ]

    def delete(self, rows: Iterable[InboxRow]) -> int:
        count = 0
        for row in rows:
            self.rows.pop((row.stream_key, row.sequence), None)
            count += 1
        return count


def _by_sequence(row: InboxRow) -> int:
    return row.sequence


class MemoryWatermarks:
    def __init__(self) -> None:
        self.marks: dict[tuple[str, str], Watermark] = {}

    def all(self, knowledge_base: str) -> list[Watermark]:
        return sorted(
            (m.model_copy(deep=True) for (kb, _), m in self.marks.items() if kb == knowledge_base),
            key=lambda m: m.stream_key,
        )

    def knowledge_bases(self) -> set[str]:
        return {kb for kb, _ in self.marks}

    def get(self, knowledge_base: str, key: str) -> Watermark | None:
        found = self.marks.get((knowledge_base, key))
        return found.model_copy(deep=True) if found else None

    def lineage(self, knowledge_base: str, instance_id: str, generation: str, stream: str) -> list[Watermark]:
        mine = [
            m
            for m in self.all(knowledge_base)
            if (m.instance_id, m.generation, m.stream) == (instance_id, generation, stream)
        ]
        return sorted(mine, key=lambda m: m.epoch)

    def start(self, mark: Watermark) -> Watermark:
        self.marks.setdefault((mark.knowledge_base, mark.stream_key), mark.model_copy(deep=True))
        return self.marks[(mark.knowledge_base, mark.stream_key)].model_copy(deep=True)

    def _live(self, mark: Watermark) -> Watermark | None:
        found = self.marks.get((mark.knowledge_base, mark.stream_key))
        return found if found is not None and found.superseded_by is None else None

    def advance(
        self,
        mark: Watermark,
        to: int,
        now: str,
        *,
        status: WatermarkStatus | None = None,
        note: str | None = None,
        reconciled: list[int] | None = None,
    ) -> bool:
        found = self._live(mark)
        if found is None or found.sequence != mark.sequence:
            return False
        found.sequence, found.updated_at = to, now
        if status is not None:
            found.status, found.note = status, note
        if reconciled is not None:
            found.reconciled_over = [*found.reconciled_over, list(reconciled)]
        return True

    def anchor(self, mark: Watermark, anchor: tuple[int, str], now: str) -> bool:
        found = self._live(mark)
        if found is None or found.sequence != mark.sequence:
            return False
        if (found.anchor_sequence, found.anchor_event_id) != (mark.anchor_sequence, mark.anchor_event_id):
            return False
        found.anchor_sequence, found.anchor_event_id, found.updated_at = anchor[0], anchor[1], now
        return True

    def restart(self, mark: Watermark, base: int, anchor: tuple[int, str] | None, note: str, now: str) -> Watermark:
        key = stream_key(mark.knowledge_base, mark.instance_id, mark.generation, mark.stream, mark.epoch + 1)
        found = self.marks.get((mark.knowledge_base, mark.stream_key))
        if (mark.knowledge_base, key) in self.marks or found is None or found.superseded_by is not None:
            return self.lineage(mark.knowledge_base, mark.instance_id, mark.generation, mark.stream)[-1]
        successor = mark.model_copy(
            update={
                "stream_key": key,
                "epoch": mark.epoch + 1,
                "base": base,
                "sequence": base,
                "anchor_sequence": anchor[0] if anchor else None,
                "anchor_event_id": anchor[1] if anchor else None,
                "status": "ok",
                "note": note,
                "reconciled_over": [],
                "superseded_by": None,
                "updated_at": now,
            }
        )
        self.marks[(mark.knowledge_base, key)] = successor.model_copy(deep=True)
        found.superseded_by, found.status, found.updated_at = key, "ok", now
        found.note = (
            f"superseded by epoch {successor.epoch}: the producer was restored; its history after sequence {base} "
            "is read there"
        )
        return successor

    def mark(self, mark: Watermark, status: WatermarkStatus, note: str | None, now: str) -> None:
        found = self._live(mark)
        if found is not None:
            found.status, found.note, found.updated_at = status, note, now


class MemoryActions:
    def __init__(self) -> None:
        self.actions: dict[tuple[str, str], Action] = {}

    def _put(self, action: Action) -> None:
        self.actions[(action.knowledge_base, action.effect_key)] = action.model_copy(deep=True)

    def claim(self, action: Action) -> bool:
        if (action.knowledge_base, action.effect_key) in self.actions:
            return False
        self._put(action)
        return True

    def _found(self, action: Action) -> Action:
        return self.actions[(action.knowledge_base, action.effect_key)]

    def finish(self, action: Action, outcome: ActionOutcome, findings: int, mission_ids: list[str]) -> None:
        found = self._found(action)
        found.outcome, found.findings, found.mission_ids = outcome, findings, list(mission_ids)

    def get(self, knowledge_base: str, effect_key: str) -> Action | None:
        found = self.actions.get((knowledge_base, effect_key))
        return found.model_copy(deep=True) if found else None

    def retry_later(
        self, action: Action, attempts: list[dict[str, Any]], first_at: str, next_at: str, receipt: str | None
    ) -> None:
        found = self._found(action)
        found.outcome, found.attempts, found.first_attempt_at = "retrying", list(attempts), first_at
        found.next_attempt_at, found.receipt_owed = next_at, receipt

    def settle_receipt(self, action: Action, status: str) -> None:
        found = self._found(action)
        if found.receipt_owed == status:
            found.receipt_owed = None

    def dead_lettered_item(self, action: Action, dead_letter_id: str) -> TransactItem:
        def apply() -> None:
            found = self._found(action)
            found.outcome, found.receipt_owed, found.dead_letter_id = "dead_lettered", "failed", dead_letter_id
            found.next_attempt_at = None

        return _item(lambda: self._found(action).outcome == "retrying", apply)

    def rearm_item(self, action: Action, project: str, now: str) -> TransactItem:
        def apply() -> None:
            found = self._found(action)
            found.outcome, found.next_attempt_at, found.first_attempt_at = "retrying", now, now
            found.attempts, found.project, found.receipt_owed = [], project, None

        return _item(lambda: self._found(action).outcome == "dead_lettered", apply)

    def claim_item(self, action: Action) -> TransactItem:
        return _item(lambda: (action.knowledge_base, action.effect_key) not in self.actions, lambda: self._put(action))

    def all(self, knowledge_base: str) -> list[Action]:
        return sorted(
            (a.model_copy(deep=True) for (kb, _), a in self.actions.items() if kb == knowledge_base),
            key=lambda a: a.effect_key,
        )

    def claimed_revisions(self, knowledge_base: str, instance_id: str, revision_ids: set[str]) -> set[str]:
        return revision_ids & {a.revision_id for a in self.all(knowledge_base) if a.instance_id == instance_id}


class MemoryDeadLetters:
    def __init__(self, events: MemoryEvents) -> None:
        self.entries: dict[tuple[str, str], DeadLetter] = {}
        self.events = events

    def _absent(self, entry: DeadLetter) -> bool:
        return (entry.knowledge_base, entry.dead_letter_id) not in self.entries

    def _found(self, entry: DeadLetter) -> DeadLetter:
        return self.entries[(entry.knowledge_base, entry.dead_letter_id)]

    def _put(self, entry: DeadLetter) -> None:
        self.entries[(entry.knowledge_base, entry.dead_letter_id)] = entry.model_copy(deep=True)

    def file(self, entry: DeadLetter) -> bool:
        return _transact([_item(lambda: self._absent(entry), lambda: self._put(entry))])

    def file_with(self, entry: DeadLetter, others: list[TransactItem]) -> bool:
        return _transact([_item(lambda: self._absent(entry), lambda: self._put(entry)), *others])

    def add_attempts(self, entry: DeadLetter, attempts: list[Attempt], at: str) -> bool:
        found = self.entries.get((entry.knowledge_base, entry.dead_letter_id))
        if found is None or found.state != UNRESOLVED:
            return False
        found.attempts, found.last_attempt_at = [a.model_copy() for a in attempts], at
        return True

    def get(self, knowledge_base: str, dead_letter_id: str) -> DeadLetter | None:
        found = self.entries.get((knowledge_base, dead_letter_id))
        return found.model_copy(deep=True) if found else None

    def all(self, knowledge_base: str) -> list[DeadLetter]:
        return sorted(
            (e.model_copy(deep=True) for (kb, _), e in self.entries.items() if kb == knowledge_base),
            key=lambda e: e.dead_letter_id,
        )

    def unresolved_everywhere(self) -> list[DeadLetter]:
        return [e for e in self.everything() if e.state == UNRESOLVED]

    def knowledge_bases(self) -> set[str]:
        return {kb for kb, _ in self.entries}

    def everything(self) -> list[DeadLetter]:
        return [e.model_copy(deep=True) for e in self.entries.values()]

    def unreduced(self, knowledge_base: str, resolved_before: str) -> Iterator[list[DeadLetter]]:
        due = sorted(
            (
                e
                for e in self.all(knowledge_base)
                if e.state == RESOLVED
                and e.reduced_at is None
                and e.resolved_at is not None
                and e.resolved_at <= resolved_before
            ),
            key=lambda e: e.resolved_at or "",
        )
        for start in range(0, len(due), SCRUB_BATCH):
            yield due[start : start + SCRUB_BATCH]

    def reduce(self, entry: DeadLetter, envelope: str | None, attempts: list[Attempt], at: str) -> bool:
        found = self.entries.get((entry.knowledge_base, entry.dead_letter_id))
        if found is None or found.state != RESOLVED or found.reduced_at is not None:
            return False
        found.attempts, found.reduced_at, found.envelope = [a.model_copy() for a in attempts], at, envelope
        return True

    def escalate(self, entry: DeadLetter, at: str) -> bool:
        found = self.entries.get((entry.knowledge_base, entry.dead_letter_id))
        if found is None or found.state != UNRESOLVED or found.escalated_at is not None:
            return False
        found.escalated_at = at
        return True

    def event_item(self, event: LoggedEvent, project: str) -> TransactItem:
        return _item(lambda: True, lambda: self.events.logged.append(event))

    def resolve_with(self, entry: DeadLetter, resolution: Resolution, others: list[TransactItem]) -> bool:
        def unresolved() -> bool:
            found = self.entries.get((entry.knowledge_base, entry.dead_letter_id))
            return found is not None and found.state == UNRESOLVED

        def apply() -> None:
            found = self._found(entry)
            found.state, found.resolution, found.resolved_at = RESOLVED, resolution.model_copy(), resolution.at

        return _transact([_item(unresolved, apply), *others])


class MemoryEvents:
    def __init__(self) -> None:
        self.logged: list[LoggedEvent] = []

    def record(self, event_type: str, actor: str, payload: dict[str, Any]) -> LoggedEvent:
        event = new_event(event_type, actor, payload)
        self.logged.append(event)
        return event
