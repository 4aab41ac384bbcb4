"""The consumer's ports, as the domain sees them: what the feed pass, its recovery, the
dead-letter upkeep and the operator's actions ask of the inbox, the watermarks, the actions,
the dead-letter queue and the event log, and of FORAGER (:class:`FeedClient`) — and nothing
else; :class:`FeedStores` hands them to a pass together, and :class:`PassOutcome` (with its
:class:`UpkeepOutcome`) is what a pass reports. The consumer (``consumer.py``), its recovery
(``recovery.py``) and the upkeep (``upkeep.py``) all read them here, none from another.

``storage/feed_store.py`` (``InboxStore``, ``WatermarkStore``, ``ActionStore``),
``storage/dead_letter_store.py`` (``DeadLetterStore``) and ``storage/event_log.py``
(``EventLog``) implement these over DynamoDB; the Hypothesis state machine
(``tests/unit/test_feed_state_machine.py``) runs the consumer against an in-memory
implementation (``tests/feed_memory.py``) as well.

A :data:`TransactItem` is opaque to the domain: a write one store hands out
(``record_item``, ``claim_item``, ``rearm_item``, ``dead_lettered_item``, ``event_item``)
for the dead-letter store to carry out in one transaction with its own write
(``file_with``, ``resolve_with``) — all of them or none.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from knowledge_service.storage.dead_letter_store import Attempt, DeadLetter, Resolution
from knowledge_service.storage.event_log import LoggedEvent
from knowledge_service.storage.feed_store import Action, ActionOutcome, InboxRow, Watermark, WatermarkStatus
from knowledge_service.storage.findings_store import FindingsStore
from knowledge_service.storage.missions import MissionBus
from knowledge_service.upstream.models import Capabilities, ExportList, FeedPage, ForagerSource, ReceiptAnswer

TransactItem = dict[str, Any]
PAGE_LIMIT = 500  # feed items asked of FORAGER a page


class InboxStorage(Protocol):
    """Every envelope, verbatim, keyed by its stream and sequence."""

    def record(self, rows: Iterable[InboxRow]) -> None: ...

    def get(self, key: str, sequence: int) -> InboxRow | None: ...

    def record_item(self, row: InboxRow) -> TransactItem: ...

    def between(self, key: str, first: int, last: int) -> list[InboxRow]: ...

    def stream(self, key: str, *, newest_first: bool = True, limit: int = 20) -> list[InboxRow]: ...

    def sequences(self, key: str) -> list[InboxRow]: ...

    def earlier_publication(
        self, knowledge_base: str, logical_content_hash: str, revision_id: str, *, before: tuple[str, int]
    ) -> bool: ...

    def exports(self, knowledge_base: str, limit: int = 20) -> list[InboxRow]: ...

    def export_ids(self, knowledge_base: str) -> set[str]: ...

    def prunable(self, key: str, through_sequence: int, older_than: str) -> list[InboxRow]: ...

    def delete(self, rows: Iterable[InboxRow]) -> int: ...


class WatermarkStorage(Protocol):
    """How far each producer generation's stream was read; every move conditional on the value read."""

    def all(self, knowledge_base: str) -> list[Watermark]: ...

    def knowledge_bases(self) -> set[str]: ...

    def get(self, knowledge_base: str, key: str) -> Watermark | None: ...

    def lineage(self, knowledge_base: str, instance_id: str, generation: str, stream: str) -> list[Watermark]: ...

    def start(self, mark: Watermark) -> Watermark: ...

    def advance(
        self,
        mark: Watermark,
        to: int,
        now: str,
        *,
        status: WatermarkStatus | None = None,
        note: str | None = None,
        reconciled: list[int] | None = None,
    ) -> bool: ...

    def anchor(self, mark: Watermark, anchor: tuple[int, str], now: str) -> bool: ...

    def restart(self, mark: Watermark, base: int, anchor: tuple[int, str] | None, note: str, now: str) -> Watermark: ...

    def mark(self, mark: Watermark, status: WatermarkStatus, note: str | None, now: str) -> None: ...


class ActionStorage(Protocol):
    """One action per revision under its effect key; never pruned."""

    def claim(self, action: Action) -> bool: ...

    def finish(self, action: Action, outcome: ActionOutcome, findings: int, mission_ids: list[str]) -> None: ...

    def get(self, knowledge_base: str, effect_key: str) -> Action | None: ...

    def retry_later(
        self, action: Action, attempts: list[dict[str, Any]], first_at: str, next_at: str, receipt: str | None
    ) -> None: ...

    def settle_receipt(self, action: Action, status: str) -> None: ...

    def dead_lettered_item(self, action: Action, dead_letter_id: str) -> TransactItem: ...

    def rearm_item(self, action: Action, project: str, now: str) -> TransactItem: ...

    def claim_item(self, action: Action) -> TransactItem: ...

    def all(self, knowledge_base: str) -> list[Action]: ...

    def claimed_revisions(self, knowledge_base: str, instance_id: str, revision_ids: set[str]) -> set[str]: ...


class DeadLetterStorage(Protocol):
    """The dead-letter queue: entries are filed, resolved once, reduced, stamped — never removed."""

    def file(self, entry: DeadLetter) -> bool: ...

    def file_with(self, entry: DeadLetter, others: list[TransactItem]) -> bool: ...

    def add_attempts(self, entry: DeadLetter, attempts: list[Attempt], at: str) -> bool: ...

    def get(self, knowledge_base: str, dead_letter_id: str) -> DeadLetter | None: ...

    def all(self, knowledge_base: str) -> list[DeadLetter]: ...

    def unresolved_everywhere(self) -> list[DeadLetter]: ...

    def knowledge_bases(self) -> set[str]: ...

    def everything(self) -> list[DeadLetter]: ...

    def unreduced(self, knowledge_base: str, resolved_before: str) -> Iterator[list[DeadLetter]]: ...

    def reduce(self, entry: DeadLetter, envelope: str | None, attempts: list[Attempt], at: str) -> bool: ...

    def escalate(self, entry: DeadLetter, at: str) -> bool: ...

    def event_item(self, event: LoggedEvent, project: str) -> TransactItem: ...

    def resolve_with(self, entry: DeadLetter, resolution: Resolution, others: list[TransactItem]) -> bool: ...


class EventStorage(Protocol):
    """The colony's event log (an operator's act and the upkeep's escalations)."""

    def record(self, event_type: str, actor: str, payload: dict[str, Any]) -> LoggedEvent: ...


class FeedClient(Protocol):
    """What the consumer needs of FORAGER (``ForagerClient`` is one; tests hand in a fake)."""

    def capabilities(self) -> Capabilities: ...

    def feed(self, project_ref: str, *, generation: str | None, after: int, limit: int = PAGE_LIMIT) -> FeedPage: ...

    def sources(self, project_ref: str) -> list[ForagerSource]: ...

    def exports(self, project_ref: str) -> ExportList: ...

    def receipt(
        self, project_ref: str, event_id: str, status: str, detail: str, *, synthesized: bool = False
    ) -> ReceiptAnswer: ...


@dataclass(frozen=True)
class FeedStores:
    inbox: InboxStorage
    watermarks: WatermarkStorage
    actions: ActionStorage
    findings: FindingsStore
    missions: MissionBus | None
    dead_letters: DeadLetterStorage | None = None
    events: EventStorage | None = None


@dataclass
class UpkeepOutcome:
    dead_lettered: int = 0
    scrubbed: int = 0
    escalated: int = 0
    scrub_failed: bool = False


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
    refused_at_the_door: int = 0  # envelopes the door filed as dead letters this pass
    dead_lettered: int = 0  # entries filed this pass (door refusals and exhausted retries)
    retried: int = 0  # retries run this pass (succeeded or not)
    retrying: int = 0  # this project's retries still waiting after the pass
    owed_receipts: int = 0  # failed receipts owed for exhausted retries, sent this pass
    upkeep: UpkeepOutcome = field(default_factory=UpkeepOutcome)
    passed_over: list[list[int]] = field(default_factory=list)  # [first, last] holes the producer could not serve
    exports_reconciled: int = 0  # exports recorded from the export history when a hole was passed over
