"""The feed consumer as a state machine: deliver, redeliver, reorder, short pages, gap, new
generation, a producer restored from a backup without a new generation, a crash between any
two steps of a pass, two passes interleaved, a policy change.

It drives ``FeedConsumer`` against an in-memory producer (``FakeFeed``) and the consumer's storage
ports (``domain/feed/ports.py``) held in memory (``tests/feed_memory.py``) — and, in a second run,
the DynamoDB stores on moto tables
built from template.yaml, and holds after every step:

- no envelope lost: every sequence an epoch's watermark covers is in that epoch's inbox,
  or inside a range it records as reconciled against the source list (a true gap); and
  after a whole pass, every envelope the producer holds at or below the watermark that
  owns its sequence was recorded there with the same event id — a restored producer's new
  envelopes are never taken for ones already read;
- the watermark never past a gap that was not reconciled (the same checks);
- no revision with two actions;
- under on/suggest every revision at or below a watermark has its action and every action
  names a recorded revision; under off there are no actions at all.

Issue 13 adds the door (an envelope refused at it is dead-lettered, never recorded: it counts
as read, and is not lost), retryable study failures (the engine failing), time passing
(24 hours: retries exhausted into dead letters), and the operator's replays and discards; and
one more law: no unresolved dead letter is changed by upkeep (only escalation's stamp).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from moto import mock_aws

from devstack.template import create_resources
from knowledge_service.domain.feed import operator
from knowledge_service.domain.feed.consumer import FeedConsumer
from knowledge_service.domain.feed.operator import ReplayRequest
from knowledge_service.domain.feed.ports import FeedStores
from knowledge_service.errors import Conflict, UpstreamError
from knowledge_service.models import AutoStudy
from knowledge_service.runtime import runtime
from knowledge_service.storage.feed_store import Watermark
from knowledge_service.upstream.models import (
    Capabilities,
    ExportList,
    ExportRow,
    FeedCursorRefused,
    FeedPage,
    ForagerSource,
    ReceiptAnswer,
)
from tests.budget import sized
from tests.conftest import TEMPLATE
from tests.feed_memory import MemoryActions, MemoryDeadLetters, MemoryEvents, MemoryInbox, MemoryWatermarks

KB = "falcon"
_EXAMPLES = itertools.count()
INSTANCE = "fgi_state"
NOW = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
STEPS = (
    "read",
    "anchored",
    "recorded",
    "claimed",
    "acted",
    "receipted",
    "advanced",
    "degraded",
    "reconciled",
    "passed_over",
)


class Crash(Exception):
    pass


class FakeFeed:
    """A producer: revisions and exports on a numbered stream, per generation."""

    def __init__(self) -> None:
        self.generation = "gen_1"
        self.streams: dict[str, list[dict[str, Any]]] = {"gen_1": []}
        self.next_sequence = 1
        self.revisions: list[str] = []
        self.redeliver = False
        self.reorder = False
        self.short = False  # answer one envelope a page, whatever the limit asked
        self.receipts: list[tuple[str, str]] = []
        self.counter = 0
        self.failing = False  # the engine's study calls fail (a retryable failure)
        # The export history: (generation, sequence, export id) of every export completed, and of
        # those whose envelope the producer lost (a hole it can no longer serve).
        self.history: list[tuple[str, int, str]] = []
        self.lost: set[str] = set()

    def publish(self, export: bool = False, lost: bool = False) -> None:
        self.counter += 1
        if export and self.revisions:
            self.history.append((self.generation, self.next_sequence, f"exp_{self.counter}"))
            payload: dict[str, Any] = {
                "revision_id": self.revisions[-1],
                "export_id": f"exp_{self.counter}",
                "export_format": "anthill_package",
                "package_digest": "sha256:x",
            }
            event_type = "knowledge.export.completed"
        else:
            revision = f"krev_{self.counter}"
            self.revisions.append(revision)
            payload = {
                "revision_id": revision,
                "publication_sequence": len(self.revisions),
                "logical_content_hash": f"sha256:{self.counter % 3}",
                "publication_status": "complete",
                "record_count": 1,
                "failed_source_count": 0,
            }
            event_type = "knowledge.revision.published"
        if lost:
            self.lost.add(f"exp_{self.counter}")
            self.next_sequence += 1
            return
        self.streams[self.generation].append(
            {
                "protocol_version": 1,
                "event_id": f"evt_{self.counter}",
                "event_type": event_type,
                "sequence": self.next_sequence,
                "stream": "knowledge",
                "producer_instance_id": INSTANCE,
                "producer_generation": self.generation,
                "occurred_at": "2026-09-10T14:02:11Z",
                "payload": payload,
            }
        )
        self.next_sequence += 1

    def publish_refused(self) -> None:
        """An envelope the door refuses (its header has no occurred_at), at the next sequence."""
        self.counter += 1
        self.streams[self.generation].append(
            {
                "protocol_version": 1,
                "event_id": f"evt_{self.counter}",
                "event_type": "knowledge.revision.published",
                "sequence": self.next_sequence,
                "stream": "knowledge",
                "producer_instance_id": INSTANCE,
                "producer_generation": self.generation,
                "payload": {"revision_id": f"krev_bad_{self.counter}"},
            }
        )
        self.next_sequence += 1

    def publish_unreadable(self, kind: str) -> None:
        """An envelope whose sequence the door cannot read (oversized, or not JSON), at the next one."""
        self.counter += 1
        sequence = self.next_sequence
        text = (
            json.dumps({"event_id": f"evt_{self.counter}", "sequence": sequence, "padding": "x" * 17_000})
            if kind == "oversized"
            else '{"event_id": "evt_broken", "sequence": ' + str(sequence)
        )
        self.streams[self.generation].append({"sequence": sequence, "event_id": f"evt_{self.counter}", "text": text})
        self.next_sequence += 1

    def skip(self) -> None:
        self.next_sequence += 1

    def held(self) -> tuple[str, tuple[str, ...]]:
        return self.generation, tuple(e["event_id"] for e in self.streams[self.generation])

    def restore(self, older_by: int) -> None:
        """Restored from a backup ``older_by`` envelopes older, same generation: sequences are reused."""
        stream = self.streams[self.generation]
        del stream[max(0, len(stream) - older_by) :]
        self.next_sequence = (stream[-1]["sequence"] if stream else 0) + 1
        self.history = [h for h in self.history if h[0] != self.generation or h[1] < self.next_sequence]

    def new_generation(self) -> None:
        self.generation = f"gen_{len(self.streams) + 1}"
        self.streams[self.generation] = []
        self.next_sequence = 1

    # -- the feed client protocol --------------------------------------------------------
    def capabilities(self) -> Capabilities:
        return Capabilities(instance_id=INSTANCE, generation=self.generation, change_feed=True)

    def feed(self, project_ref: str, *, generation: str | None, after: int, limit: int = 500) -> FeedPage:
        if generation and generation != self.generation:
            raise FeedCursorRefused("generation_changed", "new generation", {})
        envelopes = self.streams[self.generation]
        head = envelopes[-1]["sequence"] if envelopes else 0
        if after > head:
            raise FeedCursorRefused("cursor_ahead", "ahead", {"head_sequence": head})
        start = 0 if self.redeliver else after
        page: list[dict[str, Any] | str] = [
            e["text"] if "text" in e else dict(e) for e in envelopes if e["sequence"] > start
        ][: 1 if self.short else limit]
        if self.reorder:
            random.Random(after).shuffle(page)
        return FeedPage(
            instance_id=INSTANCE, generation=self.generation, stream="knowledge", envelopes=page, head_sequence=head
        )

    def sources(self, project_ref: str) -> list[ForagerSource]:
        if self.failing:
            raise UpstreamError("the engine answered 503")
        return [ForagerSource(source_id="src_1", project_ref=KB, name="a.md", logical_content_hash="sha256:a")]

    def exports(self, project_ref: str) -> ExportList:
        if self.failing:
            raise UpstreamError("the engine answered 503")
        return ExportList(
            exports=[
                ExportRow(export_id=e, project_ref=KB, format="anthill", status="completed", revision_id="krev")
                for _, _, e in reversed(self.history)
            ]
        )

    def receipt(
        self, project_ref: str, event_id: str, status: str, detail: str, *, synthesized: bool = False
    ) -> ReceiptAnswer:
        self.receipts.append((event_id, status))
        return ReceiptAnswer(event_id=event_id, status=status)


class FeedMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        # One moto for the whole run (tables are made once); each example reads its own
        # knowledge base, so examples never see each other's rows.
        global KB  # noqa: PLW0603 - the fake producer and the invariants read it
        KB = f"kb{next(_EXAMPLES)}"
        self.stores = self.make_stores()
        self.clock = NOW
        self.touched: set[str] = set()  # dead letters an operator acted on (upkeep never may)
        self.seen: dict[str, dict[str, Any]] = {}
        self.feed = FakeFeed()
        self.policy = AutoStudy.ON
        # What the producer held when a whole pass last ran over an honest feed (one that was not
        # answering every read from sequence 1, which no pass can read past).
        self.read_through: object = None
        # Whether every page so far came in order and whole, with no hole: only then can an
        # unreadable run be placed between its neighbours (a shuffled or one-envelope page, or a
        # hole beside it, leaves it a gap).
        self.in_order = True

    def make_stores(self) -> FeedStores:
        """The consumer's ports in memory (``tests/feed_memory.py``); the study's own findings and
        missions stay on moto. ``TableFeedMachine`` runs the same rules over the tables."""
        rt = runtime()
        events = MemoryEvents()
        return FeedStores(
            MemoryInbox(),
            MemoryWatermarks(),
            MemoryActions(),
            rt.findings,
            rt.missions,
            MemoryDeadLetters(events),
            events,
        )

    @initialize(policy=st.sampled_from(list(AutoStudy)))
    def choose_policy(self, policy: AutoStudy) -> None:
        self.policy = policy

    def consumer(self, crash_at: str | None = None, interleave: bool = False) -> FeedConsumer:
        def checkpoint(step: str) -> None:
            if interleave and step == "recorded":
                FeedConsumer(self.stores, self.feed, now=lambda: self.clock).run(KB, "falcon", self.policy)
            if step == crash_at:
                raise Crash(step)

        return FeedConsumer(
            self.stores, self.feed, checkpoint=checkpoint, page_limit=4, now=lambda: self.clock, rng=random.Random(3)
        )

    # -- the producer ---------------------------------------------------------------------
    @rule(count=st.integers(1, 3))
    def deliver(self, count: int) -> None:
        for _ in range(count):
            self.feed.publish()

    @rule()
    def export(self) -> None:
        self.feed.publish(export=True)

    @rule()
    def export_lost(self) -> None:
        """An export completed and its envelope was lost — a hole the producer cannot serve again —
        and a revision after it, so a read sees the hole."""
        if not self.feed.revisions:
            self.feed.publish()
        self.feed.publish(export=True, lost=True)
        self.feed.publish()
        self.in_order = False

    @rule()
    def refused_at_the_door(self) -> None:
        self.feed.publish_refused()

    @rule(count=st.integers(1, 3), kind=st.sampled_from(["oversized", "not_json"]))
    def unreadable_run(self, count: int, kind: str) -> None:
        """A run of envelopes whose sequence cannot be read, wherever the stream stands (its tail included)."""
        for _ in range(count):
            self.feed.publish_unreadable(kind)

    @rule(on=st.booleans())
    def engine_fails(self, on: bool) -> None:
        self.feed.failing = on

    @rule(hours=st.sampled_from([1, 25]))
    def time_passes(self, hours: int) -> None:
        self.clock += timedelta(hours=hours)

    @rule(after_fix=st.booleans())
    def replay_one(self, after_fix: bool) -> None:
        waiting = [e for e in self.stores.dead_letters.all(KB) if e.state == "unresolved"]  # type: ignore[union-attr]
        if not waiting:
            return
        entry = waiting[0]
        self.touched.add(entry.dead_letter_id)
        request = ReplayRequest(project="falcon", reason="fixed_engine", after_fix=after_fix, change="fix")
        with contextlib.suppress(Conflict):
            operator.replay(
                self.stores.dead_letters,  # type: ignore[arg-type]
                self.stores.inbox,
                self.stores.actions,
                self.stores.watermarks,
                entry,
                request,
                "ada",
                self.policy,
                self.clock,
            )

    @rule()
    def discard_one(self) -> None:
        waiting = [e for e in self.stores.dead_letters.all(KB) if e.state == "unresolved"]  # type: ignore[union-attr]
        if waiting:
            self.touched.add(waiting[0].dead_letter_id)
            operator.discard(
                self.stores.dead_letters,  # type: ignore[arg-type]
                waiting[0],
                "ada",
                "sender_error",
                self.clock,
                lambda: "unenrolled",
            )

    @rule()
    def gap(self) -> None:
        self.feed.skip()
        self.in_order = False  # an unreadable envelope beside a hole cannot be placed

    @rule(on=st.booleans())
    def redeliver(self, on: bool) -> None:
        self.feed.redeliver = on

    @rule(on=st.booleans())
    def reorder(self, on: bool) -> None:
        self.feed.reorder = on
        self.in_order &= not on

    @rule(on=st.booleans())
    def short_pages(self, on: bool) -> None:
        self.feed.short = on
        self.in_order &= not on

    @rule()
    def new_generation(self) -> None:
        self.feed.new_generation()

    @rule(older_by=st.integers(1, 3), then_published=st.integers(0, 5))
    def restore(self, older_by: int, then_published: int) -> None:
        """Restored from a backup without a new generation, and maybe publishing again before the
        next pass: its new envelopes reuse sequences the colony already read."""
        self.feed.restore(older_by)
        for _ in range(then_published):
            self.feed.publish()

    @precondition(lambda self: self.policy is not AutoStudy.OFF)
    @rule(policy=st.sampled_from([AutoStudy.ON, AutoStudy.SUGGEST]))
    def change_policy(self, policy: AutoStudy) -> None:
        self.policy = policy

    # -- the consumer ---------------------------------------------------------------------
    @rule()
    def run_pass(self) -> None:
        try:
            self.consumer().run(KB, "falcon", self.policy)
        except UpstreamError:  # the engine failed the reconciliation: the pass ends, as a crash would
            return
        self.read_through = self.feed.held() if not self.feed.redeliver else None

    @rule(step=st.sampled_from(STEPS))
    def crash_mid_pass(self, step: str) -> None:
        with contextlib.suppress(Crash, UpstreamError):
            self.consumer(crash_at=step).run(KB, "falcon", self.policy)

    @rule()
    def concurrent_passes(self) -> None:
        try:
            self.consumer(interleave=True).run(KB, "falcon", self.policy)
        except UpstreamError:
            return
        self.read_through = self.feed.held() if not self.feed.redeliver else None

    # -- what must always hold ------------------------------------------------------------
    @invariant()
    def no_envelope_lost_and_no_unreconciled_gap(self) -> None:
        for mark in self.stores.watermarks.all(KB):
            recorded = {r.sequence for r in self.stores.inbox.sequences(mark.stream_key)}
            refused = self.refused(mark.stream_key)
            missing = [
                s for s in range(mark.base + 1, mark.sequence + 1) if s not in recorded | covered(mark) | refused
            ]
            assert not missing, (mark.generation, mark.epoch, mark.sequence, missing)

    @precondition(lambda self: self.read_through == self.feed.held())
    @invariant()
    def no_envelope_the_producer_holds_is_taken_for_another(self) -> None:
        lineage = self.stores.watermarks.lineage(KB, INSTANCE, self.feed.generation, "knowledge")
        rows = {m.epoch: {r.sequence: r.event_id for r in self.stores.inbox.sequences(m.stream_key)} for m in lineage}
        for envelope in self.feed.streams[self.feed.generation]:
            sequence = envelope["sequence"]
            owner = max((m for m in lineage if m.base < sequence), key=lambda m: m.epoch, default=None)
            if owner is None or sequence > owner.sequence or sequence in covered(owner):
                continue  # not read yet, or reconciled against the source list
            if sequence in self.refused(owner.stream_key) and sequence not in rows[owner.epoch]:
                continue  # refused at the door: dead-lettered, never recorded
            assert rows[owner.epoch].get(sequence) == envelope["event_id"], (owner.epoch, sequence)

    @precondition(lambda self: self.read_through == self.feed.held())
    @invariant()
    def no_export_hidden_by_a_hole(self) -> None:
        """An export whose envelope was lost in a hole the watermark has passed is recorded from the
        export history (a reconciled export row)."""
        lineage = self.stores.watermarks.lineage(KB, INSTANCE, self.feed.generation, "knowledge")
        if not lineage:
            return
        through = lineage[-1].sequence
        recorded = self.stores.inbox.export_ids(KB)
        hidden = [
            e
            for generation, sequence, e in self.feed.history
            if generation == self.feed.generation and sequence <= through and e not in recorded
        ]
        assert not hidden, hidden

    def refused(self, key: str) -> set[int]:
        """The sequences of ``key``'s stream the door filed. A dead letter's id is the stream's
        lineage, the sequence and the bytes (``door_entry_id``), so an envelope another epoch of the
        same stream filed is that one entry in every epoch: its filing counts here too. (On a page
        out of order the door may have placed an unreadable envelope where another stands; the
        entry is still the one that sequence is filed under.)"""
        return {
            e.sequence
            for e in self.stores.dead_letters.all(KB)  # type: ignore[union-attr]
            if e.sequence is not None and e.error_class != "retries_exhausted" and lineage(e.stream_key) == lineage(key)
        }

    @precondition(lambda self: self.in_order)
    @invariant()
    def no_unreadable_envelope_is_passed_over(self) -> None:
        """An unreadable envelope the watermark has passed, in a run of any length anywhere in the
        stream, was filed as a dead letter, never passed over as a gap."""
        lineage = self.stores.watermarks.lineage(KB, INSTANCE, self.feed.generation, "knowledge")
        for envelope in self.feed.streams[self.feed.generation]:
            if "text" not in envelope:
                continue
            sequence = envelope["sequence"]
            owner = max((m for m in lineage if m.base < sequence), key=lambda m: m.epoch, default=None)
            if owner is None or sequence > owner.sequence:
                continue  # not read yet
            assert sequence in self.refused(owner.stream_key), (sequence, owner.reconciled_over)

    @invariant()
    def each_refused_sequence_is_one_entry(self) -> None:
        """A sequence the door refused is filed once, however often it is read again (no epoch
        opened by a misread anchor files it anew: a one-envelope probe that a redelivering producer
        answers from an earlier sequence places nothing, ``history.admit``)."""
        filed = Counter(
            (e.sequence, e.envelope)
            for e in self.stores.dead_letters.all(KB)  # type: ignore[union-attr]
            if e.error_class != "retries_exhausted"
        )
        assert all(n == 1 for n in filed.values()), filed

    @invariant()
    def no_unresolved_dead_letter_changed_by_upkeep(self) -> None:
        for entry in self.stores.dead_letters.all(KB):  # type: ignore[union-attr]
            now = entry.model_dump(exclude={"escalated_at"})
            before = self.seen.setdefault(entry.dead_letter_id, now)
            if entry.state == "unresolved" and entry.dead_letter_id not in self.touched:
                assert now == before, entry.dead_letter_id
            self.seen[entry.dead_letter_id] = now

    @invariant()
    def no_revision_with_two_actions(self) -> None:
        counts = Counter(a.revision_id for a in self.stores.actions.all(KB))
        assert all(n == 1 for n in counts.values()), counts

    @invariant()
    def effects_are_the_revisions_read(self) -> None:
        actions = {a.revision_id for a in self.stores.actions.all(KB)}
        if self.policy is AutoStudy.OFF:
            assert actions == set()
            return
        below: set[str] = set()
        recorded: set[str] = set()
        for mark in self.stores.watermarks.all(KB):
            for row in self.stores.inbox.sequences(mark.stream_key):
                if row.revision_id and not row.export:
                    recorded.add(row.revision_id)
                    if row.sequence <= mark.sequence:
                        below.add(row.revision_id)
        assert below <= actions <= recorded, (below - actions, actions - recorded)


def lineage(key: str) -> str:
    """A stream key without its epoch (``…#knowledge#e2`` → ``…#knowledge``)."""
    return re.sub(r"#e\d+$", "", key)


def covered(mark: Watermark) -> set[int]:
    return {s for first, last in mark.reconciled_over for s in range(first, last + 1)}


class TableFeedMachine(FeedMachine):
    """The same rules and laws over the DynamoDB stores (moto): the real store is proven too."""

    def make_stores(self) -> FeedStores:
        rt = runtime()
        return FeedStores(rt.inbox, rt.watermarks, rt.actions, rt.findings, rt.missions, rt.dead_letters, rt.events)


_SETTINGS = {
    "stateful_step_count": 20,
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
}
FeedMachine.TestCase.settings = settings(max_examples=sized(ci=60, deep=300), **_SETTINGS)  # type: ignore[arg-type]
# Over the DynamoDB stores on moto each example is slow (21 s at load 4, 50 s at load 7 for the 15):
# kept at 15 in CI all the same: this run is the one that holds the stores' conditional writes
# to the laws; make deep runs 60.
TableFeedMachine.TestCase.settings = settings(max_examples=sized(ci=15, deep=60), **_SETTINGS)  # type: ignore[arg-type]


@pytest.mark.usefixtures("aws_env")
def test_the_feed_consumer_keeps_its_laws_over_the_storage_ports_in_memory() -> None:
    with mock_aws():
        create_resources(TEMPLATE, boto3.client("dynamodb"), boto3.client("s3"), boto3.client("events"))
        FeedMachine.TestCase("runTest").runTest()


@pytest.mark.usefixtures("aws_env")
def test_the_feed_consumer_keeps_its_laws_over_the_dynamodb_stores() -> None:
    with mock_aws():
        create_resources(TEMPLATE, boto3.client("dynamodb"), boto3.client("s3"), boto3.client("events"))
        TableFeedMachine.TestCase("runTest").runTest()


# -- fixed sequences: failures Hypothesis found, replayed on every run (a clean clone has no database)
Steps = list[tuple[str, dict[str, Any]]]

# The shrunk failure found on main (258dda6) over the tables: a producer restored past an envelope the
# door refused, then an export lost where that envelope stood.
FOUND_OVER_THE_TABLES: Steps = [
    ("choose_policy", {"policy": AutoStudy.SUGGEST}),
    ("change_policy", {"policy": AutoStudy.ON}),
    ("concurrent_passes", {}),
    ("reorder", {"on": False}),
    *[("concurrent_passes", {})] * 4,
    ("replay_one", {"after_fix": False}),
    *[("concurrent_passes", {})] * 2,
    ("refused_at_the_door", {}),
    ("export", {}),
    ("concurrent_passes", {}),
    ("reorder", {"on": True}),
    ("run_pass", {}),
    ("restore", {"older_by": 2, "then_published": 0}),
    ("change_policy", {"policy": AutoStudy.SUGGEST}),
    ("export_lost", {}),
    ("concurrent_passes", {}),
]
# The same, reduced: sequence 1 refused at the door, 2 read; restored to empty; an export lost at 1.
RESTORED_OVER_A_REFUSAL: Steps = [
    ("choose_policy", {"policy": AutoStudy.SUGGEST}),
    ("refused_at_the_door", {}),
    ("export", {}),  # no revision yet: publishes one, at 2
    ("run_pass", {}),
    ("restore", {"older_by": 2, "then_published": 0}),
    ("export_lost", {}),  # the export at 1 lost, a revision at 2
    ("run_pass", {}),
]
# A gap reconciled at 2, then the producer restored to 1 and an export lost at 2 again.
RESTORED_OVER_A_RECONCILED_GAP: Steps = [
    ("choose_policy", {"policy": AutoStudy.ON}),
    ("deliver", {"count": 1}),
    ("gap", {}),
    ("deliver", {"count": 1}),
    ("run_pass", {}),
    ("restore", {"older_by": 1, "then_published": 0}),
    ("export_lost", {}),
    ("run_pass", {}),
]

# An unreadable envelope at 1 and an export at 2 under redelivery, read by two passes interleaved: the
# inner pass probed the outer's anchor (2) with a one-envelope read, the producer answered from 1,
# and the door placed that unreadable envelope at 2 by the cursor and the head alone — a false
# history_diverged, a new epoch, and sequence 1 filed a second time.
PROBED_UNDER_REDELIVERY: Steps = [
    ("choose_policy", {"policy": AutoStudy.OFF}),
    ("redeliver", {"on": True}),
    ("unreadable_run", {"count": 1, "kind": "oversized"}),
    ("export", {}),
    ("concurrent_passes", {}),
]

# Found over the tables: three unreadable envelopes read first on a page out of order (placed by the
# cursor and the head in the shuffled order, so the one standing at 3 is another's bytes), then a
# cut, shuffled page that places an unreadable one at the head: anchored on an envelope its
# neighbours placed, the pass read a fork, opened an epoch and filed everything again.
ANCHORED_ON_A_PLACED_ENVELOPE: Steps = [
    ("choose_policy", {"policy": AutoStudy.OFF}),
    ("crash_mid_pass", {"step": "acted"}),
    ("run_pass", {}),
    ("reorder", {"on": True}),
    ("unreadable_run", {"count": 3, "kind": "not_json"}),
    ("run_pass", {}),
    ("refused_at_the_door", {}),
    ("reorder", {"on": True}),
    ("export", {}),
    ("refused_at_the_door", {}),
    ("reorder", {"on": False}),
    ("discard_one", {}),
    ("export", {}),
    ("reorder", {"on": True}),
    ("gap", {}),
    ("discard_one", {}),
    ("crash_mid_pass", {"step": "acted"}),
]
# Found over the tables: a producer restored (twice) that still holds the envelope the door refused
# at 1: the new epoch's read of it filed it a second time.
RESTORED_OVER_A_FILED_REFUSAL: Steps = [
    ("choose_policy", {"policy": AutoStudy.OFF}),
    *[("concurrent_passes", {})] * 3,
    ("refused_at_the_door", {}),
    *[("concurrent_passes", {})] * 3,
    ("refused_at_the_door", {}),
    ("restore", {"older_by": 1, "then_published": 2}),
    *[("concurrent_passes", {})] * 2,
    ("restore", {"older_by": 1, "then_published": 0}),
    ("concurrent_passes", {}),
]

# Found in memory by CI: an unreadable envelope closing a page the limit cut short (the producer
# redelivering from 1, out of order) was placed at the head, where an export stood that the cut left
# off the page: a false fork, a new epoch, and the unreadable ones passed over there.
PLACED_AT_THE_HEAD_OF_A_CUT_PAGE: Steps = [
    ("choose_policy", {"policy": AutoStudy.OFF}),
    ("reorder", {"on": True}),
    ("unreadable_run", {"count": 3, "kind": "oversized"}),
    ("refused_at_the_door", {}),
    ("export", {}),
    ("concurrent_passes", {}),
    ("redeliver", {"on": True}),
    ("concurrent_passes", {}),
]

# Found in memory by CI: three unreadable envelopes read out of order, the export after them lost
# to a restore: the new epoch files the envelope the first read placed at 3 under the same entry.
RESTORED_OVER_A_SHUFFLED_RUN: Steps = [
    ("choose_policy", {"policy": AutoStudy.OFF}),
    ("reorder", {"on": True}),
    ("unreadable_run", {"count": 3, "kind": "oversized"}),
    ("export", {}),
    ("concurrent_passes", {}),
    ("restore", {"older_by": 1, "then_published": 0}),
    ("concurrent_passes", {}),
]


def keep_the_laws(machine: FeedMachine) -> None:
    """Every invariant the machine states, as Hypothesis checks them (two only after a whole pass)."""
    machine.no_envelope_lost_and_no_unreconciled_gap()
    machine.each_refused_sequence_is_one_entry()
    machine.no_unresolved_dead_letter_changed_by_upkeep()
    machine.no_revision_with_two_actions()
    machine.effects_are_the_revisions_read()
    if machine.read_through == machine.feed.held():
        machine.no_envelope_the_producer_holds_is_taken_for_another()
        machine.no_export_hidden_by_a_hole()


@contextlib.contextmanager
def replayed(machine_class: type[FeedMachine], steps: Steps) -> Iterator[FeedMachine]:
    """A fresh machine on fresh tables, ``steps`` run on it with the laws checked after each."""
    with mock_aws():
        create_resources(TEMPLATE, boto3.client("dynamodb"), boto3.client("s3"), boto3.client("events"))
        machine = machine_class()
        for name, arguments in steps:
            getattr(machine, name)(**arguments)
            keep_the_laws(machine)
        yield machine


@pytest.mark.usefixtures("aws_env")
@pytest.mark.parametrize("machine_class", [FeedMachine, TableFeedMachine], ids=["in_memory", "dynamodb"])
@pytest.mark.parametrize(
    "steps",
    [FOUND_OVER_THE_TABLES, RESTORED_OVER_A_REFUSAL, RESTORED_OVER_A_RECONCILED_GAP],
    ids=["found_over_the_tables", "restored_over_a_refusal", "restored_over_a_reconciled_gap"],
)
def test_an_export_lost_where_a_restored_producer_reuses_a_sequence_the_colony_holds_nothing_at_is_reconciled(
    machine_class: type[FeedMachine], steps: Steps
) -> None:
    """Given a sequence the colony holds no inbox row at (refused at the door, or a reconciled gap),
    when the producer is restored below it and loses an export there, then the next pass reads the
    new epoch from the last envelope both histories hold, meets the hole, and records the export
    from the export history: the laws hold after every step."""
    with replayed(machine_class, steps) as machine:
        assert machine.read_through == machine.feed.held()
        lost = machine.feed.lost
        assert lost and lost <= machine.stores.inbox.export_ids(KB)


@pytest.mark.usefixtures("aws_env")
@pytest.mark.parametrize("machine_class", [FeedMachine, TableFeedMachine], ids=["in_memory", "dynamodb"])
def test_a_probe_answered_from_an_earlier_sequence_opens_no_epoch_and_files_nothing_twice(
    machine_class: type[FeedMachine],
) -> None:
    """Given an unreadable envelope at 1 and an export at 2 on a producer that redelivers from 1,
    when a pass runs inside another (the inner one probes the anchor the outer one set), then no
    history_diverged is reported, one epoch holds the stream and sequence 1 is one dead letter."""
    with replayed(machine_class, PROBED_UNDER_REDELIVERY) as machine:
        marks = machine.stores.watermarks.all(KB)
        assert [(m.epoch, m.sequence) for m in marks] == [(0, 2)]
        assert [e.sequence for e in machine.stores.dead_letters.all(KB)] == [1]  # type: ignore[union-attr]


@pytest.mark.usefixtures("aws_env")
@pytest.mark.parametrize("machine_class", [FeedMachine, TableFeedMachine], ids=["in_memory", "dynamodb"])
@pytest.mark.parametrize(
    "steps",
    [
        ANCHORED_ON_A_PLACED_ENVELOPE,
        RESTORED_OVER_A_FILED_REFUSAL,
        PLACED_AT_THE_HEAD_OF_A_CUT_PAGE,
        RESTORED_OVER_A_SHUFFLED_RUN,
    ],
    ids=[
        "anchored_on_a_placed_envelope",
        "restored_over_a_filed_refusal",
        "placed_at_the_head_of_a_cut_page",
        "restored_over_a_shuffled_run",
    ],
)
def test_a_refused_envelope_is_one_dead_letter_however_its_stream_is_read_again(
    machine_class: type[FeedMachine], steps: Steps
) -> None:
    """The sequences Hypothesis found: every law holds after every step, each refused sequence
    filed once among them (``keep_the_laws``)."""
    with replayed(machine_class, steps):
        pass
