"""A producer restored from a backup without a new generation (``cursor_ahead`` and its
quieter twin): the sequences it reuses are read as a new epoch of the stream, nothing the
colony read before is overwritten, and each revision still has one action.

The consumer runs against the FORAGER simulator over loopback; ``feed_fault(ref, "ahead",
count)`` restores the producer ``count`` envelopes older.
"""

from __future__ import annotations

import pytest

from knowledge_service.domain.feed.consumer import FeedConsumer
from knowledge_service.domain.feed.ports import PassOutcome
from knowledge_service.models import AutoStudy
from knowledge_service.runtime import Runtime
from knowledge_service.storage.feed_store import Watermark
from knowledge_service.upstream.client import ForagerClient
from knowledge_service.upstream.models import FeedPage
from local_engine.double import Double
from tests.conftest import Api

REF = "falcon"


def run(
    rt: Runtime, sim: Double, policy: AutoStudy = AutoStudy.SUGGEST, *, client: type[ForagerClient] = ForagerClient
) -> PassOutcome:
    return FeedConsumer(rt.feed_stores(), client(sim.url, sim.token, timeout_seconds=2.0)).run(REF, REF, policy)


class Died(Exception):
    pass


def die_after_recording(rt: Runtime, sim: Double) -> None:
    """A pass that records its page and dies before acting or moving the watermark."""

    def die(step: str) -> None:
        if step == "recorded":
            raise Died(step)

    client = ForagerClient(sim.url, sim.token, timeout_seconds=2.0)
    with pytest.raises(Died):
        FeedConsumer(rt.feed_stores(), client, checkpoint=die).run(REF, REF, AutoStudy.SUGGEST)


def publish(sim: Double, count: int, prefix: str) -> list[dict[str, object]]:
    return [sim.put_source(REF, f"{prefix}{n}.md", f"{prefix} text {n}") for n in range(count)]


def lineage(rt: Runtime) -> list[Watermark]:
    (generation,) = {m.generation for m in rt.watermarks.all(REF)}
    (instance,) = {m.instance_id for m in rt.watermarks.all(REF)}
    return rt.watermarks.lineage(REF, instance, generation, "knowledge")


def recorded_event_ids(rt: Runtime) -> set[str]:
    return {row.event_id for mark in rt.watermarks.all(REF) for row in rt.inbox.sequences(mark.stream_key)}


def revisions_acted_on(rt: Runtime) -> list[str]:
    return [a.revision_id for a in rt.actions.all(REF)]


def test_publications_after_a_restore_that_reuse_read_sequences_are_recorded_and_acted_on(
    knowledge_on: Runtime, forager: Double
) -> None:
    before = publish(forager, 3, "before")
    run(knowledge_on, forager)
    forager.feed_fault(REF, "ahead", 2)  # back to sequence 1
    after = publish(forager, 3, "after")  # sequences 2, 3, 4: two of them already read once

    outcome = run(knowledge_on, forager)

    assert outcome.degraded == ["history_diverged"] and outcome.reconciled == 1
    assert {e["event_id"] for e in before + after} <= recorded_event_ids(knowledge_on)
    acted = revisions_acted_on(knowledge_on)
    assert sorted(acted) == sorted({e["payload"]["revision_id"] for e in before + after})  # type: ignore[index]
    old, new = lineage(knowledge_on)
    assert (old.sequence, old.superseded_by, old.status) == (3, new.stream_key, "ok")
    assert (new.epoch, new.base, new.sequence, new.status) == (1, 1, 4, "ok")
    assert "last one both histories share" in (new.note or "")


def test_the_rows_read_before_the_restore_stay_verbatim(knowledge_on: Runtime, forager: Double) -> None:
    publish(forager, 3, "before")
    run(knowledge_on, forager)
    old_rows = knowledge_on.inbox.sequences(lineage(knowledge_on)[0].stream_key)
    forager.feed_fault(REF, "ahead", 1)
    publish(forager, 2, "after")

    run(knowledge_on, forager)

    old, _new = lineage(knowledge_on)
    assert knowledge_on.inbox.sequences(old.stream_key) == old_rows


def test_a_restore_seen_before_anything_is_republished_answers_cursor_ahead_and_reads_on(
    knowledge_on: Runtime, forager: Double
) -> None:
    publish(forager, 3, "before")
    run(knowledge_on, forager)
    forager.feed_fault(REF, "ahead", 2)

    outcome = run(knowledge_on, forager)

    assert outcome.degraded == ["cursor_ahead"] and outcome.reconciled == 1
    assert [(m.epoch, m.base, m.sequence) for m in lineage(knowledge_on)] == [(0, 0, 3), (1, 1, 1)]
    after = publish(forager, 3, "after")
    assert run(knowledge_on, forager).degraded == []
    assert {e["event_id"] for e in after} <= recorded_event_ids(knowledge_on)
    assert lineage(knowledge_on)[-1].sequence == 4


def test_a_redelivered_revision_after_a_restore_claims_nothing_twice(knowledge_on: Runtime, forager: Double) -> None:
    publish(forager, 4, "before")
    run(knowledge_on, forager)
    forager.feed_fault(REF, "ahead", 1)
    publish(forager, 1, "after")
    forager.feed_fault(REF, "redeliver")  # and the next read answers from sequence 1

    run(knowledge_on, forager)
    run(knowledge_on, forager)

    acted = revisions_acted_on(knowledge_on)
    assert len(acted) == len(set(acted)) == 5


def test_a_second_restore_below_the_first_fork_reads_from_the_older_epoch(
    knowledge_on: Runtime, forager: Double
) -> None:
    publish(forager, 5, "first")
    run(knowledge_on, forager)
    forager.feed_fault(REF, "ahead", 1)
    publish(forager, 2, "second")  # epoch 1 starts after 4
    run(knowledge_on, forager)
    forager.feed_fault(REF, "ahead", 4)  # back to sequence 2: below epoch 1's base
    third = publish(forager, 3, "third")

    run(knowledge_on, forager)

    assert [(m.epoch, m.base) for m in lineage(knowledge_on)] == [(0, 0), (1, 4), (2, 2)]
    assert {e["event_id"] for e in third} <= recorded_event_ids(knowledge_on)
    assert lineage(knowledge_on)[-1].sequence == 5


def test_off_reads_a_restored_producer_and_still_claims_nothing(knowledge_on: Runtime, forager: Double) -> None:
    publish(forager, 2, "before")
    run(knowledge_on, forager, AutoStudy.OFF)
    forager.feed_fault(REF, "ahead", 1)
    after = publish(forager, 2, "after")

    outcome = run(knowledge_on, forager, AutoStudy.OFF)

    assert outcome.degraded == ["history_diverged"]
    assert {e["event_id"] for e in after} <= recorded_event_ids(knowledge_on)
    assert knowledge_on.actions.all(REF) == []


def test_the_feed_view_shows_the_live_epoch_and_the_superseded_row(
    knowledge_on: Runtime, forager: Double, api: Api
) -> None:
    publish(forager, 2, "before")
    run(knowledge_on, forager)
    forager.feed_fault(REF, "ahead", 1)
    latest = publish(forager, 2, "after")[-1]
    run(knowledge_on, forager)

    view = api.call("GET", "/knowledge/feed", query={"project": REF}).body["data"]

    assert view["watermark"]["sequence"] == latest["sequence"] == 3
    assert view["inbox"][0]["sequence"] == 3
    rows = sorted(view["watermarks"], key=lambda m: m["epoch"])
    assert [(m["epoch"], m["base"]) for m in rows] == [(0, 0), (1, 1)]
    assert rows[0]["superseded_by"] and rows[1]["superseded_by"] is None


def test_when_only_the_watermarks_own_envelope_left_the_window_the_pass_reads_on_unchecked(
    knowledge_on: Runtime, forager: Double
) -> None:
    publish(forager, 3, "before")
    run(knowledge_on, forager)
    forager.feed_fault(REF, "expire")  # sequences 1-3 leave the replay window; the cursor at 3 is still good
    publish(forager, 2, "later")

    outcome = run(knowledge_on, forager)

    assert (outcome.degraded, outcome.recorded) == ([], 2)
    assert lineage(knowledge_on)[-1].sequence == 5


def test_a_restore_right_after_a_restore_is_seen_from_the_shared_anchor(knowledge_on: Runtime, forager: Double) -> None:
    publish(forager, 4, "first")
    run(knowledge_on, forager)
    forager.feed_fault(REF, "ahead", 1)
    run(knowledge_on, forager)  # cursor_ahead: epoch 1 starts after 3, nothing read in it yet
    forager.feed_fault(REF, "ahead", 2)  # back to sequence 1
    again = publish(forager, 4, "again")  # sequences 2-5

    outcome = run(knowledge_on, forager)

    assert outcome.degraded == ["history_diverged"]
    assert [(m.epoch, m.base) for m in lineage(knowledge_on)] == [(0, 0), (1, 3), (2, 1)]
    assert {e["event_id"] for e in again} <= recorded_event_ids(knowledge_on)


def test_a_restore_after_a_reconciled_gap_records_what_now_stands_where_the_gap_was(
    knowledge_on: Runtime, forager: Double
) -> None:
    publish(forager, 2, "first")
    forager.feed_fault(REF, "skip")
    publish(forager, 1, "after the gap")  # sequence 4; 3 is a gap
    assert run(knowledge_on, forager).degraded == ["gap"]
    forager.feed_fault(REF, "ahead", 2)  # back to sequence 1
    again = publish(forager, 4, "again")  # sequences 2-5, one where the gap was

    outcome = run(knowledge_on, forager)

    assert outcome.degraded == ["history_diverged"]
    assert {e["event_id"] for e in again} <= recorded_event_ids(knowledge_on)
    assert lineage(knowledge_on)[-1].base == 1


def test_rows_a_dead_pass_recorded_above_the_watermark_are_not_overwritten_by_a_restored_producer(
    knowledge_on: Runtime, forager: Double
) -> None:
    first = publish(forager, 1, "first")
    run(knowledge_on, forager)
    dying = publish(forager, 2, "recorded, never advanced")
    die_after_recording(knowledge_on, forager)
    assert lineage(knowledge_on)[0].sequence == 1  # recorded through 3, the watermark still at 1
    forager.feed_fault(REF, "ahead", 2)
    again = publish(forager, 2, "republished")  # sequences 2 and 3 again, other envelopes

    outcome = run(knowledge_on, forager)

    assert outcome.degraded == ["history_diverged"]
    assert {e["event_id"] for e in dying + again} <= recorded_event_ids(knowledge_on)
    # The dead pass died before acting; what the restore dropped was reconciled, what it published is acted on.
    acted = revisions_acted_on(knowledge_on)
    assert len(acted) == len(set(acted))
    assert set(acted) == {e["payload"]["revision_id"] for e in first + again}  # type: ignore[index]


def test_a_reconciliation_that_cannot_finish_leaves_the_stream_degraded_until_a_pass_does(
    knowledge_on: Runtime, forager: Double, api: Api
) -> None:
    publish(forager, 2, "before")
    run(knowledge_on, forager)
    forager.feed_fault(REF, "ahead", 1)
    publish(forager, 2, "after")
    forager.set_fault("5xx", path_prefix=f"/api/projects/{REF}/sources")  # the source list fails

    failed = api.call("POST", "/knowledge/feed/sync", query={"project": REF})

    assert failed.status == 502, failed.body
    view = api.call("GET", "/knowledge/feed", query={"project": REF}).body["data"]
    assert view["watermark"]["status"] == "degraded"
    assert (view["watermark"]["note"] or "").startswith("history_diverged:")
    assert [m["epoch"] for m in view["watermarks"]] == [0]  # nothing read on before the reconciliation

    forager.clear_faults()
    healed = api.call("POST", "/knowledge/feed/sync", query={"project": REF})

    assert healed.status == 200, healed.body
    assert healed.body["data"]["degraded"] == ["history_diverged"] and healed.body["data"]["reconciled"] == 1
    view = api.call("GET", "/knowledge/feed", query={"project": REF}).body["data"]
    assert (view["watermark"]["status"], view["watermark"]["sequence"]) == ("ok", 3)
    assert {m["epoch"] for m in view["watermarks"]} == {0, 1}


class ShortPages(ForagerClient):
    """A producer that answers at most one envelope a page, whatever the limit asked."""

    def feed(self, project_ref: str, *, generation: str | None, after: int, limit: int = 500) -> FeedPage:
        return super().feed(project_ref, generation=generation, after=after, limit=1)


def test_short_pages_cannot_slip_a_restored_producers_envelopes_onto_a_dead_passs_rows(
    knowledge_on: Runtime, forager: Double
) -> None:
    first = publish(forager, 1, "first")
    run(knowledge_on, forager)
    dying = publish(forager, 3, "recorded, never advanced")  # sequences 2-4
    die_after_recording(knowledge_on, forager)
    forager.feed_fault(REF, "ahead", 3)  # back to sequence 1
    again = publish(forager, 3, "republished")  # 2-4 again, other envelopes

    outcome = run(knowledge_on, forager, client=ShortPages)

    assert outcome.degraded == ["history_diverged"]
    assert {e["event_id"] for e in dying + again} <= recorded_event_ids(knowledge_on)
    assert set(revisions_acted_on(knowledge_on)) == {e["payload"]["revision_id"] for e in first + again}  # type: ignore[index]
