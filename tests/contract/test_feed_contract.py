"""The change feed's client calls against the simulator, over loopback (docs/upstream-contract.md,
"Change feed"): the feed, the head revision, the source list, receipts, and each cursor refusal."""

from __future__ import annotations

import pytest

from knowledge_service.errors import UpstreamRefused
from knowledge_service.upstream.client import ForagerClient
from knowledge_service.upstream.models import EXPORT_COMPLETED, REVISION_PUBLISHED, FeedCursorRefused, FeedEnvelope
from local_engine.double import Double
from local_engine.serving.routing import ApiError

pytestmark = pytest.mark.contract

REF = "falcon"


def client_for(sim: Double) -> ForagerClient:
    return ForagerClient(sim.url, sim.token, timeout_seconds=2.0)


def test_a_new_source_publishes_a_revision_the_feed_answers_in_order(simulator: Double) -> None:
    simulator.put_source(REF, "onboarding.md", "# Onboarding\nDay one.")
    simulator.put_source(REF, "onboarding.md", "# Onboarding\nDay one, revised.", status="partial")
    simulator.publish_export(REF)

    page = client_for(simulator).feed(REF, generation=None, after=0)

    envelopes = [FeedEnvelope.model_validate(e) for e in page.envelopes]
    assert [e.sequence for e in envelopes] == [1, 2, 3]
    assert [e.event_type for e in envelopes] == [REVISION_PUBLISHED, REVISION_PUBLISHED, EXPORT_COMPLETED]
    assert page.head_sequence == 3 and page.stream == "knowledge"
    assert all(e.producer_instance_id == page.instance_id for e in envelopes)
    assert envelopes[1].payload["publication_sequence"] == 2
    assert envelopes[2].payload["revision_id"] == envelopes[1].payload["revision_id"]
    assert {"export_id", "export_format", "package_digest"} <= set(envelopes[2].payload)


def test_the_feed_answers_only_what_is_after_the_cursor_up_to_the_limit(simulator: Double) -> None:
    for n in range(5):
        simulator.put_source(REF, f"doc-{n}.md", f"text {n}")

    page = client_for(simulator).feed(REF, generation=None, after=2, limit=2)

    assert [e["sequence"] for e in page.envelopes] == [3, 4]


def test_head_revision_states_complete_or_partial_and_the_failed_sources(simulator: Double) -> None:
    client = client_for(simulator)
    assert client.head_revision(REF) is None  # nothing published yet

    simulator.put_source(REF, "a.md", "a", status="partial")
    head = client.head_revision(REF)

    assert head is not None
    assert head.publication_status == "partial"
    assert head.failed_source_count == 1
    assert head.publication_sequence == 1
    assert head.logical_content_hash.startswith("sha256:")


def test_sources_carry_each_sources_logical_content_hash(simulator: Double) -> None:
    simulator.put_source(REF, "fresh.md", "fresh text")

    sources = client_for(simulator).sources(REF)

    fresh = [s for s in sources if s.name == "fresh.md"]
    assert len(fresh) == 1
    assert fresh[0].project_ref == REF
    assert fresh[0].logical_content_hash


@pytest.mark.parametrize(
    ("fault", "after", "code"),
    [("expire", 0, "cursor_expired"), ("ahead", 2, "cursor_ahead"), ("generation", 0, "generation_changed")],
)
def test_each_cursor_refusal_is_the_clients_feed_cursor_refused(
    simulator: Double, fault: str, after: int, code: str
) -> None:
    client = client_for(simulator)
    simulator.put_source(REF, "a.md", "a")
    simulator.put_source(REF, "b.md", "b")
    generation = client.feed(REF, generation=None, after=0).generation
    simulator.feed_fault(REF, fault)

    with pytest.raises(FeedCursorRefused) as refused:
        client.feed(REF, generation=generation, after=after)

    assert refused.value.code == code
    assert "head_sequence" in refused.value.details
    assert isinstance(refused.value.__cause__, UpstreamRefused)


def test_cursor_expired_names_the_earliest_sequence_still_held(simulator: Double) -> None:
    simulator.put_source(REF, "a.md", "a")
    simulator.put_source(REF, "b.md", "b")
    simulator.feed_fault(REF, "expire")

    with pytest.raises(FeedCursorRefused) as refused:
        client_for(simulator).feed(REF, generation=None, after=0)

    assert refused.value.details["earliest_sequence"] == 3


def test_a_skipped_sequence_is_a_gap_on_the_page(simulator: Double) -> None:
    simulator.put_source(REF, "a.md", "a")
    simulator.feed_fault(REF, "skip")
    simulator.put_source(REF, "b.md", "b")

    page = client_for(simulator).feed(REF, generation=None, after=0)

    assert [e["sequence"] for e in page.envelopes] == [1, 3]


def test_redelivery_answers_the_whole_feed_again_once(simulator: Double) -> None:
    client = client_for(simulator)
    simulator.put_source(REF, "a.md", "a")
    simulator.put_source(REF, "b.md", "b")
    simulator.feed_fault(REF, "redeliver")

    again = client.feed(REF, generation=None, after=2)
    after = client.feed(REF, generation=None, after=2)

    assert [e["sequence"] for e in again.envelopes] == [1, 2]
    assert after.envelopes == []


def test_a_restored_producer_reuses_sequences_under_new_event_ids_and_states_its_head(
    simulator: Double,
) -> None:
    """What restore detection relies on: every page carries head_sequence, and a sequence served
    again after a restore carries another event_id (ids are unique to one envelope)."""
    client = client_for(simulator)
    for name in ("a.md", "b.md", "c.md"):
        simulator.put_source(REF, name, name)
    before = {e["sequence"]: e["event_id"] for e in client.feed(REF, generation=None, after=0).envelopes}

    assert simulator.feed_fault(REF, "ahead", 2)["head_sequence"] == 1
    assert client.feed(REF, generation=None, after=0).head_sequence == 1
    simulator.put_source(REF, "d.md", "d")
    page = client.feed(REF, generation=None, after=0)

    assert page.head_sequence == 2
    assert [e["sequence"] for e in page.envelopes] == [1, 2]
    assert page.envelopes[0]["event_id"] == before[1]
    assert page.envelopes[1]["event_id"] != before[2]


@pytest.mark.parametrize("count", [0, -1, "2", True])
def test_a_restore_depth_that_is_not_a_positive_whole_number_is_refused(simulator: Double, count: object) -> None:
    with pytest.raises(ApiError, match="count must be a whole number"):
        simulator.feed_fault(REF, "ahead", count)  # type: ignore[arg-type]


def test_another_refusal_is_not_a_cursor_refusal(simulator: Double) -> None:
    with pytest.raises(UpstreamRefused) as refused:
        client_for(simulator).feed("no_such_project", generation=None, after=0)

    assert not isinstance(refused.value, FeedCursorRefused)
    assert refused.value.upstream_status == 404


def test_a_receipt_is_recorded_and_carries_an_idempotency_key(simulator: Double) -> None:
    envelope = simulator.put_source(REF, "a.md", "a")
    client = client_for(simulator)

    answer = client.receipt(REF, envelope["event_id"], "available", "recorded")
    client.receipt(REF, envelope["event_id"], "available", "recorded")  # a lost reply, retried

    assert answer.event_id == envelope["event_id"] and answer.status == "available"
    posts = [r for r in simulator.requests if r["method"] == "POST" and r["path"].endswith("/feed/receipts")]
    assert len(posts) == 2
    assert posts[0]["idempotency_key"] and posts[0]["idempotency_key"] == posts[1]["idempotency_key"]
    assert simulator.feed_receipts(REF) == [
        {"event_id": envelope["event_id"], "status": "available", "detail": "recorded", "synthesized": False}
    ]


def test_a_failed_receipt_uses_another_key_and_a_synthesized_one_says_so(simulator: Double) -> None:
    envelope = simulator.put_source(REF, "a.md", "a")
    client = client_for(simulator)

    client.receipt(REF, envelope["event_id"], "available", "recorded")
    client.receipt(REF, envelope["event_id"], "failed", "study failed")
    client.receipt(REF, "poll_x", "available", "polled", synthesized=True)

    keys = [r["idempotency_key"] for r in simulator.requests if r["path"].endswith("/feed/receipts")]
    assert len(set(keys)) == 3
    receipts = {r["event_id"]: r for r in simulator.feed_receipts(REF)}
    assert receipts[envelope["event_id"]]["status"] == "failed"
    assert receipts["poll_x"]["synthesized"] is True
