"""Dead letters: the door, the retry lane and the queue's upkeep, one behaviour a test.

Time is frozen, never slept: every consumer here reads a ``Clock`` the test moves.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from knowledge_service.domain.feed import door, feed_pass
from knowledge_service.domain.feed.consumer import FeedConsumer
from knowledge_service.domain.feed.policy import REVISIONS_OFF
from knowledge_service.domain.feed.retry import attempt as new_attempt, backoff, ceiling, fold
from knowledge_service.domain.feed.upkeep import ESCALATED_EVENT, Upkeep, is_escalated
from knowledge_service.domain.schedule import six_hourly_pass
from knowledge_service.errors import ServiceError, UpstreamError
from knowledge_service.models import AutoStudy
from knowledge_service.runtime import Runtime
from knowledge_service.storage.dead_letter_store import Attempt, DeadLetter, DeadLetterState, Resolution
from knowledge_service.upstream.client import ForagerClient
from knowledge_service.upstream.models import ForagerSource
from local_engine.double import Double

REF = "falcon"
T0 = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)


class Clock:
    def __init__(self, at: datetime = T0) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


class Flaky:
    """The simulator's client, with a study that fails (``error``) until told otherwise."""

    def __init__(self, inner: ForagerClient) -> None:
        self.inner = inner
        self.error: Exception | None = None

    def sources(self, project_ref: str) -> list[ForagerSource]:
        if self.error is not None:
            raise self.error
        return self.inner.sources(project_ref)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def client(sim: Double) -> ForagerClient:
    return ForagerClient(sim.url, sim.token, timeout_seconds=2.0)


def consumer(rt: Runtime, sim: Double | Flaky, clock: Clock) -> FeedConsumer:
    engine = sim if isinstance(sim, Flaky) else client(sim)
    return FeedConsumer(rt.feed_stores(), engine, now=clock, rng=random.Random(7))  # type: ignore[arg-type]


def envelope(sequence: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "protocol_version": 1,
        "event_id": f"evt_{sequence}",
        "event_type": "knowledge.revision.published",
        "sequence": sequence,
        "stream": "knowledge",
        "producer_instance_id": "fgi_x",
        "producer_generation": "gen_1",
        "occurred_at": "2026-09-10T14:02:11Z",
        "payload": {"revision_id": f"krev_{sequence}"},
        **extra,
    }


# ------------------------------------------------------------------ the door
@pytest.mark.parametrize(
    ("item", "refusal", "event_id"),
    [
        ("x" * (door.MAX_ENVELOPE_BYTES + 1), door.OVERSIZED, None),
        ('{"event_id": "evt_1", "sequence": 1', door.NOT_JSON, None),
        ("[1, 2]", door.NOT_AN_OBJECT, None),
        ('"just text"', door.NOT_AN_OBJECT, None),
        (envelope(protocol_version=2), door.PROTOCOL_UNSUPPORTED, "evt_1"),
        (envelope(protocol_version=True), door.PROTOCOL_UNSUPPORTED, "evt_1"),
        ({k: v for k, v in envelope().items() if k != "occurred_at"}, door.HEADER_INVALID, "evt_1"),
        (envelope(sequence="7"), door.HEADER_INVALID, None),
        (envelope(event_type="Not An Event Type"), door.HEADER_INVALID, "evt_1"),
    ],
)
def test_the_door_refuses_each_class_with_its_reason(item: object, refusal: str, event_id: str | None) -> None:
    judged = door.parse(item)
    assert isinstance(judged, door.Refused)
    assert judged.refusal == refusal
    assert judged.reason
    if event_id is not None:
        assert judged.event_id == event_id


def test_a_well_formed_envelope_passes_the_door_as_text_or_object() -> None:
    for item in (envelope(), json.dumps(envelope())):
        judged = door.parse(item)
        assert isinstance(judged, door.Admitted)
        assert judged.envelope.event_id == "evt_1"


def _exactly(size: int) -> bytes:
    body = envelope()
    body["payload"]["padding"] = ""
    base = len(json.dumps(body, separators=(",", ":")).encode())
    body["payload"]["padding"] = "p" * (size - base)
    text = json.dumps(body, separators=(",", ":")).encode()
    assert len(text) == size
    return text


def test_a_16385_byte_envelope_is_never_parsed_while_16384_bytes_passes() -> None:
    parsed: list[int] = []

    def spy(data: bytes) -> object:
        parsed.append(len(data))
        return json.loads(data)

    over = door.parse(_exactly(16_385), parser=spy)
    assert isinstance(over, door.Refused) and over.refusal == door.OVERSIZED
    assert parsed == []  # never handed to the parser

    fits = door.parse(_exactly(16_384), parser=spy)
    assert isinstance(fits, door.Admitted)
    assert parsed == [16_384]


def test_the_schema_file_carries_its_registry_version() -> None:
    assert door.schema_version().startswith("envelope.schema.json@")
    assert door.registry_version() == json.loads(door.SCHEMA_PATH.read_text())["x-registry-version"]


@pytest.mark.parametrize("kind", ["oversized", "not_json", "not_an_object", "header"])
def test_a_refused_envelope_is_dead_lettered_not_recorded_and_the_stream_moves_past_it(
    knowledge_on: Runtime, forager: Double, kind: str
) -> None:
    forager.put_source(REF, "a.md", "a")
    bad = forager.publish_malformed(REF, kind)
    forager.put_source(REF, "b.md", "b")

    outcome = consumer(knowledge_on, forager, Clock()).run(REF, REF, AutoStudy.SUGGEST)

    assert (outcome.recorded, outcome.refused_at_the_door, outcome.watermark) == (2, 1, 3)
    [entry] = knowledge_on.dead_letters.all(REF)
    assert entry.error_class == {"header": "header_invalid"}.get(kind, kind)
    assert entry.sequence == bad["sequence"] and entry.state == "unresolved" and entry.envelope
    inbox = knowledge_on.inbox.sequences(knowledge_on.watermarks.all(REF)[0].stream_key)
    assert [r.sequence for r in inbox] == [1, 3]
    receipts = {r["event_id"]: r for r in forager.feed_receipts(REF)}
    if kind == "header":  # its event id can be read: the producer is told the class
        assert receipts[bad["event_id"]]["status"] == "failed"
        assert "header_invalid" in receipts[bad["event_id"]]["detail"]
    else:
        assert bad["event_id"] not in receipts


UNREADABLE = ["oversized", "not_json", "not_an_object"]


@pytest.mark.parametrize(
    "layout",
    [
        ["ok", "oversized", "oversized", "ok"],
        ["ok", "oversized", "not_json", "ok"],
        ["not_json", "not_an_object", "ok"],  # at the stream's start
        ["ok", "oversized", "not_json", "not_an_object"],  # a run at the tail
        ["oversized"],
        ["ok", "not_json", "ok", "oversized", "oversized", "oversized", "ok", "not_json"],
    ],
)
def test_every_unreadable_envelope_of_a_run_is_exactly_one_unresolved_entry_across_passes(
    knowledge_on: Runtime, forager: Double, layout: list[str]
) -> None:
    # Given a stream whose unreadable envelopes stand in runs, anywhere (the tail included)
    for i, kind in enumerate(layout):
        forager.put_source(REF, f"s{i}.md", str(i)) if kind == "ok" else forager.publish_malformed(REF, kind)
    run = consumer(knowledge_on, forager, Clock())
    # When the feed is read, then read again with nothing new, then again after one more envelope
    first = run.run(REF, REF, AutoStudy.SUGGEST)
    again = run.run(REF, REF, AutoStudy.SUGGEST)
    forager.put_source(REF, "after.md", "after")
    later = run.run(REF, REF, AutoStudy.SUGGEST)
    # Then each refused sequence is exactly one unresolved entry, nothing is passed over as a gap,
    # and no pass thinks the producer's history diverged
    refused = [i + 1 for i, kind in enumerate(layout) if kind != "ok"]
    entries = knowledge_on.dead_letters.all(REF)
    assert sorted(e.sequence for e in entries if e.state == "unresolved") == refused
    assert len(entries) == len(refused)
    for outcome in (first, again, later):
        assert outcome.degraded == [] and outcome.passed_over == []
    assert (first.watermark, again.watermark, later.watermark) == (len(layout), len(layout), len(layout) + 1)
    assert first.refused_at_the_door == len(refused) and again.refused_at_the_door == later.refused_at_the_door == 0


def test_an_unreadable_protocol_stops_the_stream_until_it_is_resolved(knowledge_on: Runtime, forager: Double) -> None:
    forager.put_source(REF, "a.md", "a")
    forager.publish_malformed(REF, "protocol")
    forager.put_source(REF, "b.md", "b")
    run = consumer(knowledge_on, forager, Clock())

    first = run.run(REF, REF, AutoStudy.SUGGEST)
    again = run.run(REF, REF, AutoStudy.SUGGEST)

    assert (first.watermark, again.watermark) == (1, 1)
    [entry] = knowledge_on.dead_letters.all(REF)
    assert entry.stopped_stream and entry.error_class == "protocol_unsupported"
    knowledge_on.dead_letters.resolve_with(
        entry, Resolution(action="discarded", actor="ada", reason="sender_error", at=T0.isoformat()), []
    )
    assert run.run(REF, REF, AutoStudy.SUGGEST).watermark == 3  # a discarded one is passed over


# ------------------------------------------------------------------ the retry lane
def test_backoff_stays_inside_zero_and_min_cap_two_to_the_n_over_100000_seeded_samples() -> None:
    rng = random.Random(20261130)
    for i in range(100_000):
        n = i % 40  # the n-th retry waits up to 2^n s (1 s first), capped at 300 s
        wait = backoff(n + 1, rng)
        assert 0.0 <= wait <= min(300.0, 2.0**n)
    assert ceiling(1) == 1.0 and ceiling(2) == 2.0 and ceiling(10) == 300.0 and ceiling(500) == 300.0


def test_identical_consecutive_attempts_fold_into_one_with_a_count() -> None:
    a = new_attempt(T0, "upstream_error", "503 from the engine")
    b = new_attempt(T0 + timedelta(seconds=5), "upstream_error", "503 from the engine")
    c = new_attempt(T0 + timedelta(seconds=9), "timeout", "too slow")
    folded = fold(fold(fold([], a), b), c)
    assert [(x.error_class, x.count) for x in folded] == [("upstream_error", 2), ("timeout", 1)]


def _retrying(rt: Runtime, sim: Double, clock: Clock) -> tuple[Flaky, FeedConsumer]:
    flaky = Flaky(client(sim))
    flaky.error = UpstreamError("FORAGER answered 503")
    sim.put_source(REF, "a.md", "a")
    run = FeedConsumer(rt.feed_stores(), flaky, now=clock, rng=random.Random(7))  # type: ignore[arg-type]
    outcome = run.run(REF, REF, AutoStudy.SUGGEST)
    assert (outcome.watermark, outcome.retrying) == (1, 1)
    return flaky, run


def test_a_retryable_failure_reads_retrying_the_watermark_moves_and_no_receipt_yet(
    knowledge_on: Runtime, forager: Double
) -> None:
    _retrying(knowledge_on, forager, Clock())
    [action] = knowledge_on.actions.all(REF)
    assert action.outcome == "retrying" and action.first_attempt_at == T0.isoformat()
    assert forager.feed_receipts(REF) == []


def test_a_non_retryable_failure_is_failed_at_once(knowledge_on: Runtime, forager: Double) -> None:
    flaky = Flaky(client(forager))
    flaky.error = ValueError("a defect")
    forager.put_source(REF, "a.md", "a")
    FeedConsumer(knowledge_on.feed_stores(), flaky, now=Clock()).run(REF, REF, AutoStudy.SUGGEST)  # type: ignore[arg-type]
    assert [a.outcome for a in knowledge_on.actions.all(REF)] == ["failed"]
    assert [r["status"] for r in forager.feed_receipts(REF)] == ["failed"]


def test_a_retry_that_succeeds_was_never_a_dead_letter(knowledge_on: Runtime, forager: Double) -> None:
    clock = Clock()
    flaky, run = _retrying(knowledge_on, forager, clock)
    flaky.error = None
    clock.at = T0 + timedelta(seconds=1)  # past the first backoff's ceiling
    outcome = run.run(REF, REF, AutoStudy.SUGGEST)
    assert (outcome.retried, outcome.retrying) == (1, 0)
    assert [a.outcome for a in knowledge_on.actions.all(REF)] == ["studied"]
    assert [r["status"] for r in forager.feed_receipts(REF)] == ["available"]
    assert knowledge_on.dead_letters.all(REF) == []


def test_only_a_pass_for_the_claiming_project_runs_its_retry(knowledge_on: Runtime, forager: Double) -> None:
    clock = Clock()
    flaky, run = _retrying(knowledge_on, forager, clock)
    flaky.error = None
    clock.at = T0 + timedelta(minutes=10)
    other = run.run(REF, "colony-docs", AutoStudy.SUGGEST)
    assert (other.retried, [a.outcome for a in knowledge_on.actions.all(REF)]) == (0, ["retrying"])
    assert run.run(REF, REF, AutoStudy.SUGGEST).retried == 1


def test_a_retry_failing_24_hours_after_its_first_attempt_is_dead_lettered_exactly_at_t(
    knowledge_on: Runtime, forager: Double
) -> None:
    clock = Clock()
    _flaky, run = _retrying(knowledge_on, forager, clock)
    for minutes in (5, 60, 600):  # still failing, identical attempts
        clock.at = T0 + timedelta(minutes=minutes)
        run.run(REF, REF, AutoStudy.SUGGEST)

    clock.at = T0 + timedelta(hours=24) - timedelta(seconds=1)
    assert run.upkeep(REF).dead_lettered == 0
    clock.at = T0 + timedelta(hours=24)
    outcome = run.run(REF, REF, AutoStudy.SUGGEST)

    assert outcome.dead_lettered == 1 and outcome.owed_receipts == 1
    [entry] = knowledge_on.dead_letters.all(REF)
    assert entry.error_class == "retries_exhausted" and entry.header_validated and entry.envelope
    assert [(a.error_class, a.count) for a in entry.attempts] == [("upstream_error", 4)]
    [action] = knowledge_on.actions.all(REF)
    assert (action.outcome, action.receipt_owed, action.dead_letter_id) == ("dead_lettered", None, entry.dead_letter_id)
    receipts = forager.feed_receipts(REF)
    assert [r["status"] for r in receipts] == ["failed"] and "retries_exhausted" in receipts[0]["detail"]


# ------------------------------------------------------------------ upkeep
def entry(kb: str, n: int, *, resolved_days: float | None, dead_days: float, now: datetime = T0) -> DeadLetter:
    stamp = (now - timedelta(days=dead_days)).isoformat()
    body = DeadLetter(
        knowledge_base=kb,
        dead_letter_id=f"dl_{n:06d}",
        error_class="header_invalid" if n % 2 else "retries_exhausted",
        project=kb,
        sequence=n,
        event_id=f"evt_{n}",
        event_type="knowledge.revision.published",
        envelope=json.dumps(envelope(n)),
        header_validated=n % 2 == 0,
        attempts=[Attempt(at=stamp, error_class="timeout", text="too slow", fingerprint="sha256:x", build="b")],
        schema_version="envelope.schema.json@1",
        registry_version="1",
        first_seen_at=stamp,
        last_attempt_at=stamp,
        dead_lettered_at=stamp,
    )
    if resolved_days is None:
        return body
    at = (now - timedelta(days=resolved_days)).isoformat()
    return body.model_copy(
        update={
            "state": DeadLetterState.RESOLVED,
            "resolved_at": at,
            "resolution": Resolution(action="discarded", actor="ada", reason="sender_error", at=at),
        }
    )


def _upkeep(rt: Runtime) -> Upkeep:
    return Upkeep(rt.dead_letters, rt.actions, rt.inbox, rt.events)


def test_the_scrub_reduces_a_resolved_entry_exactly_90_days_after_resolution(knowledge_on: Runtime) -> None:
    validated, unvalidated = entry(REF, 2, resolved_days=0, dead_days=1), entry(REF, 3, resolved_days=0, dead_days=1)
    for e in (validated, unvalidated):
        knowledge_on.dead_letters.file(e)
    upkeep = _upkeep(knowledge_on)

    assert upkeep.run(REF, T0 + timedelta(days=90) - timedelta(seconds=1)).scrubbed == 0
    assert upkeep.run(REF, T0 + timedelta(days=90)).scrubbed == 2

    kept = {e.dead_letter_id: e for e in knowledge_on.dead_letters.all(REF)}
    assert json.loads(kept["dl_000002"].envelope or "") == door.header_of(envelope(2))  # its header, validated
    assert kept["dl_000003"].envelope is None  # an unvalidated header keeps nothing of itself
    for e in kept.values():
        assert [(a.error_class, a.fingerprint, a.build, a.text) for a in e.attempts] == [
            ("timeout", "sha256:x", "b", None)
        ]
    assert upkeep.run(REF, T0 + timedelta(days=400)).scrubbed == 0  # reduced once; the row stays


def test_escalation_stamps_once_at_180_days_with_one_event_of_ids_and_counts(knowledge_on: Runtime) -> None:
    for n in (1, 2):
        knowledge_on.dead_letters.file(entry(REF, n, resolved_days=None, dead_days=0))
    upkeep = _upkeep(knowledge_on)
    line = T0 + timedelta(days=180)

    assert upkeep.run(REF, line - timedelta(seconds=1)).escalated == 0
    [one] = knowledge_on.dead_letters.all(REF)[:1]
    assert not is_escalated(one, line - timedelta(seconds=1)) and is_escalated(one, line)  # read time, before the stamp
    assert upkeep.run(REF, line).escalated == 2
    assert upkeep.run(REF, line + timedelta(days=1)).escalated == 0  # stamped once

    [event] = knowledge_on.events.recent(ESCALATED_EVENT)
    assert event.payload == {"knowledge_base": REF, "dead_letter_ids": ["dl_000001", "dl_000002"], "count": 2}
    assert "too slow" not in json.dumps(event.payload, default=str)
    assert all(e.escalated_at == line.isoformat() for e in knowledge_on.dead_letters.all(REF))


class MemoryDeadLetters:
    """The dead-letter store's upkeep surface, in memory, with the table's conditions (the
    population property sweeps 10,000 entries; moto would take minutes)."""

    def __init__(self, entries: list[DeadLetter]) -> None:
        self.rows = {e.dead_letter_id: e for e in entries}

    def all(self, knowledge_base: str) -> list[DeadLetter]:
        return [e for e in self.rows.values() if e.knowledge_base == knowledge_base]

    def unreduced(self, knowledge_base: str, resolved_before: str) -> Any:
        found = sorted(
            (
                e
                for e in self.all(knowledge_base)
                if e.state == "resolved" and e.reduced_at is None and (e.resolved_at or "") <= resolved_before
            ),
            key=lambda e: e.resolved_at or "",
        )
        for start in range(0, len(found), 200):
            yield found[start : start + 200]

    def reduce(self, entry: DeadLetter, envelope: str | None, attempts: list[Attempt], at: str) -> bool:
        row = self.rows[entry.dead_letter_id]
        if row.state != "resolved" or row.reduced_at is not None:
            return False
        self.rows[entry.dead_letter_id] = row.model_copy(
            update={"envelope": envelope, "attempts": attempts, "reduced_at": at}
        )
        return True

    def escalate(self, entry: DeadLetter, at: str) -> bool:
        row = self.rows[entry.dead_letter_id]
        if row.state != "unresolved" or row.escalated_at is not None:
            return False
        self.rows[entry.dead_letter_id] = row.model_copy(update={"escalated_at": at})
        return True


class NoRetries:
    def all(self, knowledge_base: str) -> list[Any]:
        return []


def test_a_population_of_10000_entries_swept_repeatedly_never_loses_or_changes_an_unresolved_one() -> None:
    rng = random.Random(13)
    population = [
        entry(REF, n, resolved_days=None if n % 3 == 0 else rng.uniform(0, 400), dead_days=rng.uniform(0, 400))
        for n in range(10_000)
    ]
    store = MemoryDeadLetters(population)
    unresolved = {e.dead_letter_id: e.model_dump() for e in population if e.state == "unresolved"}
    upkeep = Upkeep(store, NoRetries(), None, None)  # type: ignore[arg-type]

    reduced = 0
    for days in (0, 45, 90, 90, 200, 365):
        reduced += upkeep.run(REF, T0 + timedelta(days=days)).scrubbed
        after = store.rows
        assert len(after) == 10_000  # nothing lost, no row removed
        for key, before in unresolved.items():
            now = after[key].model_dump()
            # The escalation stamp is the one thing upkeep adds to an unresolved entry.
            assert {k: v for k, v in now.items() if k != "escalated_at"} == {
                k: v for k, v in before.items() if k != "escalated_at"
            }
    assert reduced == sum(1 for e in population if e.state == "resolved")  # every resolved one, once
    assert all(e.envelope is None or "payload" not in e.envelope for e in after.values() if e.reduced_at)


def test_a_sync_with_the_engine_down_still_says_what_the_upkeep_did(knowledge_on: Runtime) -> None:
    knowledge_on.dead_letters.file(entry(REF, 1, resolved_days=None, dead_days=200))
    settings = knowledge_on.config.settings()
    broken = ForagerClient("http://127.0.0.1:9", "token", timeout_seconds=0.5)
    with pytest.raises(ServiceError) as refused:
        feed_pass(knowledge_on.feed_stores(), broken, settings, REF, REF)
    assert "escalated" in str(refused.value)


# ------------------------------------------------------------------ the two lanes, and the timer's upkeep
def test_the_six_hourly_pass_never_polls_an_engine_that_has_a_feed(knowledge_on: Runtime, forager: Double) -> None:
    """docs/api.md, "The two lanes": with revisions off and the poll on, the pass consumes the feed,
    records and acknowledges, and studies nothing — the poll lane is for an engine without a feed."""
    settings = knowledge_on.config.settings()
    knowledge_on.config.save_settings(
        settings.model_copy(update={"knowledge_auto_study": "on", "knowledge_revision_study": "off"})
    )
    forager.put_source(REF, "a.md", "a")  # a new source a poll would file a finding for

    report = six_hourly_pass(knowledge_on.config, knowledge_on.upstream, knowledge_on.feed_stores())

    [only] = report.passes
    assert only.answer is not None
    assert (only.answer.recorded, only.answer.acted, only.answer.findings, only.answer.synthesized) == (1, 0, 0, False)
    assert knowledge_on.findings.open_count() == 0
    assert only.answer.message.endswith(REVISIONS_OFF)


def test_the_timer_runs_upkeep_for_an_unbound_knowledge_base_whatever_the_settings(
    knowledge_on: Runtime,
) -> None:
    knowledge_on.dead_letters.file(entry("harbour", 1, resolved_days=None, dead_days=200, now=datetime.now(UTC)))
    settings = knowledge_on.config.settings()
    knowledge_on.config.save_settings(
        settings.model_copy(update={"knowledge_auto_study": "off", "knowledge_revision_study": "off"})
    )

    report = six_hourly_pass(knowledge_on.config, knowledge_on.upstream, knowledge_on.feed_stores())

    assert [(u.knowledge_base, u.escalated) for u in report.upkeep] == [("harbour", 1)]
    assert "escalated" in report.sentence


def test_the_timer_reads_the_product_clock_it_is_given(knowledge_on: Runtime) -> None:
    """The six-hourly pass runs on the runtime's clock (movable only under the local stack): an
    entry 100 days old is escalated by a pass whose clock reads 100 days on, not by today's."""
    today = datetime.now(UTC)
    knowledge_on.dead_letters.file(entry("harbour", 1, resolved_days=None, dead_days=100, now=today))
    settings = knowledge_on.config.settings()
    knowledge_on.config.save_settings(
        settings.model_copy(update={"knowledge_auto_study": "off", "knowledge_revision_study": "off"})
    )
    stores = knowledge_on.feed_stores()

    now_report = six_hourly_pass(knowledge_on.config, knowledge_on.upstream, stores, now=lambda: today)
    later = today + timedelta(days=100)
    later_report = six_hourly_pass(knowledge_on.config, knowledge_on.upstream, stores, now=lambda: later)

    assert [u.escalated for u in now_report.upkeep] == [0]
    assert [u.escalated for u in later_report.upkeep] == [1]
    assert later_report.ran_at == later


# ------------------------------------------------------------------ actions on GET /knowledge/feed
def test_feed_actions_are_newest_first_bounded_and_the_cursor_walks_the_rest() -> None:
    from knowledge_service.domain.feed.view import ACTIONS_PAGE, recent_actions
    from knowledge_service.errors import BadRequest
    from knowledge_service.storage.feed_store import Action

    actions = [
        Action(
            knowledge_base=REF,
            effect_key=f"fgi#krev_{n:02d}#study_revision#v1",
            instance_id="fgi",
            revision_id=f"krev_{n:02d}",
            action_type="study_revision",
            policy_version=1,
            project=REF,
            event_id=f"evt_{n}",
            claimed_at=(T0 + timedelta(minutes=n // 2)).isoformat(),  # pairs share a claim time
        )
        for n in range(45)
    ]
    random.Random(5).shuffle(actions)
    seen: list[str] = []
    page, cursor = recent_actions(actions, None)
    while True:
        assert len(page) <= ACTIONS_PAGE
        seen += [a.revision_id for a in page]
        if cursor is None:
            break
        page, cursor = recent_actions(actions, cursor)
    assert seen == [f"krev_{n:02d}" for n in reversed(range(45))]  # every one once, newest first
    with pytest.raises(BadRequest):
        recent_actions(actions, "not-a-cursor")
