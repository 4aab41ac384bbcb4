"""What an operator does with a dead letter: the queue, one entry, replay and discard.

The domain functions the routes will call, against tables built from template.yaml (moto);
time is frozen, never slept.
"""

from __future__ import annotations

import random
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from moto.dynamodb.models import DynamoDBBackend

from knowledge_service.domain.feed import operator
from knowledge_service.domain.feed.consumer import FeedConsumer
from knowledge_service.domain.feed.operator import ReplayRequest
from knowledge_service.errors import BadRequest, Conflict, NotFound, PermissionDenied, UpstreamError
from knowledge_service.identity.principal import Permission
from knowledge_service.models import AutoStudy
from knowledge_service.runtime import Runtime
from knowledge_service.storage.dead_letter_store import DeadLetter
from local_engine.double import Double
from tests.conftest import ADMIN, Api
from tests.unit.test_dead_letters import REF, T0, Clock, Flaky, client, consumer

NOW = T0 + timedelta(days=2)


def _door_refused(rt: Runtime, sim: Double, kind: str = "header") -> DeadLetter:
    sim.put_source(REF, "a.md", "a")
    sim.publish_malformed(REF, kind)
    consumer(rt, sim, Clock()).run(REF, REF, AutoStudy.SUGGEST)
    [entry] = rt.dead_letters.all(REF)
    return entry


def _exhausted(rt: Runtime, sim: Double) -> tuple[DeadLetter, Flaky, FeedConsumer]:
    clock = Clock()
    flaky = Flaky(client(sim))
    flaky.error = UpstreamError("FORAGER answered 503")
    sim.put_source(REF, "a.md", "a")
    run = FeedConsumer(rt.feed_stores(), flaky, now=clock, rng=random.Random(1))  # type: ignore[arg-type]
    run.run(REF, REF, AutoStudy.SUGGEST)
    clock.at = T0 + timedelta(hours=24)
    run.run(REF, REF, AutoStudy.SUGGEST)
    [entry] = rt.dead_letters.all(REF)
    assert entry.error_class == "retries_exhausted"
    return entry, flaky, run


def _replay(rt: Runtime, entry: DeadLetter, actor: str = "ada", **kw: object) -> operator.ActionAnswer:
    request = ReplayRequest.model_validate({"project": REF, "reason": "fixed_engine", **kw})
    return operator.replay(
        rt.dead_letters, rt.inbox, rt.actions, rt.watermarks, entry, request, actor, AutoStudy.SUGGEST, NOW
    )


def test_the_queue_counts_and_rows_carry_no_envelope_or_error_text(knowledge_on: Runtime, forager: Double) -> None:
    _door_refused(knowledge_on, forager)
    listed = operator.queue(knowledge_on.dead_letters, knowledge_on.actions, REF, "unresolved", NOW)
    assert listed.counts.model_dump() == {"unresolved": 1, "escalated": 0, "retrying": 0, "resolved": 0}
    assert (listed.retention_days, listed.escalation_days) == (90, 180)
    assert set(listed.reasons) == {"replay", "discard"}
    dumped = listed.entries[0].model_dump_json()
    assert "envelope" not in dumped and "header:" not in dumped  # the reason text stays in the entry


def test_one_entry_whole_has_the_envelope_and_every_attempts_text(knowledge_on: Runtime, forager: Double) -> None:
    entry = _door_refused(knowledge_on, forager)
    whole = operator.detail(entry, NOW)
    assert whole.envelope == entry.envelope and whole.attempt_log[0].text


def test_another_bases_id_is_not_found(knowledge_on: Runtime, forager: Double) -> None:
    entry = _door_refused(knowledge_on, forager)
    with pytest.raises(NotFound):
        operator.entry_in_scope(knowledge_on.dead_letters, "harbour", entry.dead_letter_id)


def test_an_entry_whose_project_no_longer_reaches_its_base_is_a_conflict_and_unreachable(
    knowledge_on: Runtime, forager: Double
) -> None:
    entry = _door_refused(knowledge_on, forager)
    knowledge_on.config.unbind(REF)
    with pytest.raises(Conflict):
        operator.own_project_reaches(knowledge_on.config.bindings(), entry)
    listed = operator.installation_queue(knowledge_on.dead_letters, knowledge_on.config.bindings(), "all", NOW)
    assert [(r.knowledge_base, r.reachable) for r in listed.entries] == [(REF, False)]


def test_an_action_needs_a_named_actor() -> None:
    with pytest.raises(PermissionDenied):
        operator.require_actor(None)


def test_a_replay_the_door_still_refuses_adds_the_try_and_stays_unresolved(
    knowledge_on: Runtime, forager: Double
) -> None:
    entry = _door_refused(knowledge_on, forager)
    with pytest.raises(Conflict) as refused:
        _replay(knowledge_on, entry)
    assert refused.value.code == "refused_at_the_door"
    [after] = knowledge_on.dead_letters.all(REF)
    assert after.state == "unresolved" and sum(a.count for a in after.attempts) == 2


def test_replaying_an_exhausted_retry_rearms_its_action_never_a_second_one(
    knowledge_on: Runtime, forager: Double
) -> None:
    entry, flaky, run = _exhausted(knowledge_on, forager)
    flaky.error = None  # the fix

    answer = _replay(knowledge_on, entry, after_fix=True, change="engine 2.4.1")

    assert (answer.action, answer.effect) == ("replayed_after_fix", "rearmed")
    [action] = knowledge_on.actions.all(REF)
    assert action.outcome == "retrying"
    run.now = Clock(NOW)
    outcome = run.run(REF, REF, AutoStudy.SUGGEST)  # the retry lane's own runner studies it
    assert outcome.retried == 1
    assert [a.outcome for a in knowledge_on.actions.all(REF)] == ["studied"]
    [resolved] = knowledge_on.dead_letters.all(REF)
    assert resolved.resolution is not None and resolved.resolution.change == "engine 2.4.1"
    [event] = knowledge_on.events.recent(operator.REPLAYED_EVENT)
    assert event.actor == "ada" and "503" not in str(event.payload)


@pytest.fixture
def single_threaded_emulator(monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulator in single-threaded mode: one request at a time, so a transaction is atomic
    (the local stack's emulator serves requests this way; in-process moto does not)."""
    serving = threading.Lock()
    original = DynamoDBBackend.transact_write_items

    def one_at_a_time(self: DynamoDBBackend, *args: Any, **kwargs: Any) -> Any:
        with serving:
            return original(self, *args, **kwargs)

    monkeypatch.setattr(DynamoDBBackend, "transact_write_items", one_at_a_time)


@pytest.mark.usefixtures("single_threaded_emulator")
def test_of_two_concurrent_replays_exactly_one_proceeds_in_each_of_50_trials(
    knowledge_on: Runtime, forager: Double
) -> None:
    entry, _flaky, _run = _exhausted(knowledge_on, forager)
    table = knowledge_on.dead_letters._table
    for trial in range(50):
        table.put_item(Item={**entry.model_dump(exclude_none=True), "unresolved_flag": "unresolved"})
        knowledge_on.actions._table.update_item(
            Key={"knowledge_base": REF, "effect_key": entry.effect_key},
            UpdateExpression="SET outcome = :d",
            ExpressionAttributeValues={":d": "dead_lettered"},
        )
        results: list[str] = []
        start = threading.Barrier(2)

        def go(actor: str, start: threading.Barrier = start, results: list[str] = results) -> None:
            start.wait()
            try:
                _replay(knowledge_on, entry, actor=actor)
                results.append("won")
            except Conflict:
                results.append("lost")

        threads = [threading.Thread(target=go, args=(name,)) for name in ("ada", "bo")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results) == ["lost", "won"], f"trial {trial}: {results}"
    assert len(knowledge_on.events.recent(operator.REPLAYED_EVENT, limit=200)) == 50  # the loser logged nothing
    assert len(knowledge_on.actions.all(REF)) == 1


def test_discard_resolves_with_who_and_why_and_logs_the_contracts_event(knowledge_on: Runtime, forager: Double) -> None:
    entry = _door_refused(knowledge_on, forager)
    answer = operator.discard(knowledge_on.dead_letters, entry, "ada", "sender_error", NOW, lambda: "unused")
    assert (answer.action, answer.reconciliation_forced) == ("discarded", False)
    [event] = knowledge_on.events.recent(operator.DISCARDED_EVENT)
    assert set(event.payload) == {
        "event_id",
        "event_type",
        "record_class",
        "actor_id",
        "reason_code",
        "reconciliation_forced",
    }
    assert event.payload["actor_id"] == "ada" and event.payload["reason_code"] == "sender_error"
    with pytest.raises(Conflict):
        operator.discard(knowledge_on.dead_letters, entry, "bo", "duplicate", NOW, lambda: "unused")


def test_a_commercial_discard_whose_reconciliation_fails_is_409_and_the_entry_stays(
    knowledge_on: Runtime, forager: Double
) -> None:
    entry = _door_refused(knowledge_on, forager).model_copy(update={"event_type": "billing.invoice.issued"})

    def unreachable() -> str:
        raise UpstreamError("the account service did not answer")

    with pytest.raises(Conflict) as refused:
        operator.discard(knowledge_on.dead_letters, entry, "ada", "obsolete", NOW, unreachable)
    assert refused.value.code == "reconciliation_failed"
    assert knowledge_on.dead_letters.all(REF)[0].state == "unresolved"

    answer = operator.discard(knowledge_on.dead_letters, entry, "ada", "obsolete", NOW, lambda: "unenrolled")
    assert answer.reconciliation_forced
    assert knowledge_on.dead_letters.all(REF)[0].resolution.reconciliation == "unenrolled"  # type: ignore[union-attr]


# ------------------------------------------------------------------ the routes
def test_the_routes_list_read_refuse_a_replay_at_the_door_and_discard(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    entry = _door_refused(knowledge_on, forager)
    base = "/knowledge/feed/dead-letters"

    listed = api.call("GET", base, query={"project": REF})
    assert listed.status == 200, listed.raw
    assert [r["dead_letter_id"] for r in listed.body["data"]["entries"]] == [entry.dead_letter_id]
    whole = api.call("GET", f"{base}/{entry.dead_letter_id}", query={"project": REF}, resource=f"{base}/{{id}}")
    assert whole.status == 200 and whole.body["data"]["envelope"] == entry.envelope

    replayed = api.call(
        "POST",
        f"{base}/{entry.dead_letter_id}/replay",
        body={"project": REF, "reason": "fixed_consumer"},
        resource=f"{base}/{{id}}/replay",
    )
    assert (replayed.status, replayed.body["code"]) == (409, "refused_at_the_door")
    discard = f"{base}/{{id}}/discard"
    wrong = api.call(
        "POST",
        f"{base}/{entry.dead_letter_id}/discard",
        body={"project": REF, "reason": "free text"},
        resource=discard,
    )
    assert wrong.status == 400  # a typed reason, not free text

    discarded = api.call(
        "POST",
        f"{base}/{entry.dead_letter_id}/discard",
        body={"project": REF, "reason": "sender_error"},
        resource=discard,
    )
    assert discarded.status == 200, discarded.raw
    assert discarded.body["data"]["actor"] == "ada"
    assert api.call("GET", base, query={"project": REF}).body["data"]["counts"]["resolved"] == 1
    everywhere = api.call("GET", base, query={"installation": "true", "state": "all"})
    assert [(r["knowledge_base"], r["reachable"]) for r in everywhere.body["data"]["entries"]] == [(REF, True)]


def test_the_installations_list_takes_manage_knowledge(api: Api, knowledge_on: Runtime) -> None:
    viewer = ADMIN.model_copy(update={"permissions": frozenset(ADMIN.permissions) - {Permission.MANAGE_KNOWLEDGE}})
    answer = api.call("GET", "/knowledge/feed/dead-letters", query={"installation": "true"}, principal=viewer)
    assert answer.status == 403


def test_status_counts_the_colonys_unresolved_escalated_and_unreachable_dead_letters(
    api: Api, knowledge_on: Runtime
) -> None:
    from tests.unit.test_dead_letters import entry

    assert api.call("GET", "/knowledge/status").body["data"]["dead_letters"]["unresolved"] == 0
    knowledge_on.dead_letters.file(entry(REF, 1, resolved_days=None, dead_days=0, now=datetime.now(UTC)))
    knowledge_on.dead_letters.file(entry(REF, 2, resolved_days=None, dead_days=181, now=datetime.now(UTC)))
    knowledge_on.dead_letters.file(entry("harbour", 3, resolved_days=None, dead_days=200, now=datetime.now(UTC)))
    knowledge_on.dead_letters.file(entry(REF, 4, resolved_days=1, dead_days=300, now=datetime.now(UTC)))

    counts = api.call("GET", "/knowledge/status").body["data"]["dead_letters"]

    assert counts == {
        "scope": "colony",
        "unresolved": 3,
        "escalated": 2,  # at read time, before any stamp
        "unreachable": 1,  # harbour's entry: its project (harbour) is bound nowhere
        "unreachable_escalated": 1,
        "escalation_days": 180,
    }


def test_the_discard_event_is_read_on_get_knowledge_events_in_the_entrys_project(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    # Given a dead letter filed under falcon, discarded (the event's payload is the contract's six)
    entry = _door_refused(knowledge_on, forager)
    operator.discard(knowledge_on.dead_letters, entry, "ada", "sender_error", NOW, lambda: "unused")

    # When the operator reads the event log for falcon
    answer = api.call("GET", "/knowledge/events", query={"project": REF})

    # Then the discard is there, its payload still exactly the contract's, and not in another project's log
    assert answer.status == 200, answer.body
    [event] = [e for e in answer.body["data"]["events"] if e["event_type"] == operator.DISCARDED_EVENT]
    assert event["payload"]["event_id"] == entry.event_id
    assert "scope_project" not in event and "project" not in event["payload"]
    knowledge_on.config.bind("colony-docs", "harbour", "test")
    elsewhere = api.call("GET", "/knowledge/events", query={"project": "colony-docs"})
    assert elsewhere.status == 200
    assert [e for e in elsewhere.body["data"]["events"] if e["event_type"] == operator.DISCARDED_EVENT] == []


def test_the_discard_events_of_a_project_are_filtered_by_their_dotted_type(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    # Given a discarded dead letter and a curation act in the same project's log
    entry = _door_refused(knowledge_on, forager)
    operator.discard(knowledge_on.dead_letters, entry, "ada", "sender_error", NOW, lambda: "unused")
    knowledge_on.events.record("knowledge_curated", "ada", {"act": "merge", "project": REF})

    # When the operator asks for the discards alone, by the event type the log writes
    answer = api.call("GET", "/knowledge/events", query={"project": REF, "act": operator.DISCARDED_EVENT})

    # Then exactly the discard is read
    assert answer.status == 200, answer.body
    assert [e["event_type"] for e in answer.body["data"]["events"]] == [operator.DISCARDED_EVENT]


@pytest.mark.parametrize("act", [".deadletter", "platform..discarded", "platform.", "Platform.x", "a." + "b" * 63])
def test_an_act_that_is_no_event_type_is_400_naming_act(api: Api, knowledge_on: Runtime, act: str) -> None:
    answer = api.call("GET", "/knowledge/events", query={"project": REF, "act": act})
    assert (answer.status, answer.body["code"]) == (400, "bad_request"), answer.body
    assert "act" in answer.body["message"]


# ------------------------------------------------------------------ the nets (issue 25)
def _fresh(rt: Runtime, entry: DeadLetter) -> DeadLetter:
    found = rt.dead_letters.get(REF, entry.dead_letter_id)
    assert found is not None
    return found


def test_after_its_project_is_unbound_an_entrys_read_and_replay_are_409_and_change_nothing(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    entry, flaky, _run = _exhausted(knowledge_on, forager)
    flaky.error = None
    knowledge_on.config.unbind(REF)
    knowledge_on.config.bind("colony-docs", REF, "test")  # the base stays reachable, through another project
    base = "/knowledge/feed/dead-letters"
    actions_before = knowledge_on.actions.all(REF)

    whole = api.call(
        "GET", f"{base}/{entry.dead_letter_id}", query={"project": "colony-docs"}, resource=f"{base}/{{id}}"
    )
    replayed = api.call(
        "POST",
        f"{base}/{entry.dead_letter_id}/replay",
        body={"project": "colony-docs", "reason": "fixed_binding"},
        resource=f"{base}/{{id}}/replay",
    )

    for answer in (whole, replayed):
        assert (answer.status, answer.body["code"]) == (409, "conflict"), answer.raw
        assert answer.body["data"] is None and "envelope" not in answer.raw
    after = _fresh(knowledge_on, entry)
    assert (after.state, after.resolution, after.attempts) == ("unresolved", None, entry.attempts)
    assert knowledge_on.actions.all(REF) == actions_before
    assert knowledge_on.events.recent(operator.REPLAYED_EVENT) == []


def test_a_second_replay_of_a_resolved_entry_is_already_resolved_and_adds_no_attempt(
    knowledge_on: Runtime, forager: Double
) -> None:
    door_refused = _door_refused(knowledge_on, forager)
    operator.discard(knowledge_on.dead_letters, door_refused, "ada", "sender_error", NOW, lambda: "unused")
    resolved = _fresh(knowledge_on, door_refused)
    with pytest.raises(Conflict) as refused:
        _replay(knowledge_on, resolved)
    assert refused.value.code == "already_resolved"
    assert _fresh(knowledge_on, door_refused).attempts == resolved.attempts
    assert knowledge_on.events.recent(operator.REPLAYED_EVENT) == []


def test_a_second_replay_of_a_replayed_entry_is_already_resolved(knowledge_on: Runtime, forager: Double) -> None:
    entry, flaky, _run = _exhausted(knowledge_on, forager)
    flaky.error = None
    _replay(knowledge_on, entry)
    replayed = _fresh(knowledge_on, entry)
    with pytest.raises(Conflict) as refused:
        _replay(knowledge_on, replayed, actor="bo")
    assert refused.value.code == "already_resolved"
    after = _fresh(knowledge_on, entry)
    assert (after.attempts, after.resolution) == (replayed.attempts, replayed.resolution)
    assert len(knowledge_on.events.recent(operator.REPLAYED_EVENT)) == 1


def test_a_second_discard_of_a_commercial_entry_does_not_reconcile_again(
    knowledge_on: Runtime, forager: Double
) -> None:
    entry = _door_refused(knowledge_on, forager).model_copy(update={"event_type": "billing.invoice.issued"})
    reads: list[str] = []

    def reconcile() -> str:
        reads.append("read")
        return "enrolled"

    operator.discard(knowledge_on.dead_letters, entry, "ada", "obsolete", NOW, reconcile)
    assert reads == ["read"]
    resolved = _fresh(knowledge_on, entry).model_copy(update={"event_type": "billing.invoice.issued"})
    with pytest.raises(Conflict) as refused:
        operator.discard(knowledge_on.dead_letters, resolved, "bo", "duplicate", NOW, reconcile)
    assert refused.value.code == "already_resolved"
    assert reads == ["read"]
    assert len(knowledge_on.events.recent(operator.DISCARDED_EVENT)) == 1


def test_a_replay_after_a_fix_that_names_no_change_is_400_naming_change(knowledge_on: Runtime, forager: Double) -> None:
    entry, flaky, _run = _exhausted(knowledge_on, forager)
    flaky.error = None
    for change in (None, ""):
        with pytest.raises(BadRequest) as refused:
            _replay(knowledge_on, entry, after_fix=True, change=change)
        assert refused.value.field == "change"
    assert _fresh(knowledge_on, entry).state == "unresolved"
    assert knowledge_on.events.recent(operator.REPLAYED_EVENT) == []


def test_replaying_the_entry_that_stopped_its_stream_moves_the_watermark_past_it_at_once(
    knowledge_on: Runtime, forager: Double, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a stream stopped before an envelope of a protocol this build could not read
    from knowledge_service.domain.feed import door

    forager.put_source(REF, "a.md", "a")
    forager.publish_malformed(REF, "protocol")
    forager.put_source(REF, "b.md", "b")
    consumer(knowledge_on, forager, Clock()).run(REF, REF, AutoStudy.SUGGEST)
    [entry] = knowledge_on.dead_letters.all(REF)
    assert entry.stopped_stream and [m.sequence for m in knowledge_on.watermarks.all(REF)] == [1]
    # When the build learns that protocol (the fix) and the entry is replayed after it
    monkeypatch.setattr(door, "PROTOCOL_VERSIONS", frozenset({1, 2}))
    schema = door._validator()  # the header schema of protocol 1, less its protocol_version
    monkeypatch.setattr(door, "_validator", lambda: lambda value: schema({**value, "protocol_version": 1}))
    answer = _replay(knowledge_on, entry, after_fix=True, change="reads protocol 2")
    # Then the stream moves past the entry at once, before any pass reads it again
    assert answer.action == "replayed_after_fix"
    assert [m.sequence for m in knowledge_on.watermarks.all(REF)] == [entry.sequence]
