"""The change feed's rules, one behaviour a test: retention, the two lanes' sentences, the
four prune conditions, exports, the restore-then-republish flag, ``off``, the six-hourly pass."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from devstack.lambdas import FakeLambdaContext, load_handler
from knowledge_service.domain.feed.consumer import FeedConsumer
from knowledge_service.domain.feed.policy import POLL_OFF, REVISIONS_OFF
from knowledge_service.domain.feed.retention import DERIVATION, inbox_days
from knowledge_service.models import AutoStudy
from knowledge_service.runtime import Runtime
from knowledge_service.storage.feed_store import Action, InboxRow
from knowledge_service.upstream.client import ForagerClient
from local_engine.double import Double
from tests.conftest import TEMPLATE, Api

REF = "falcon"
EVENTS = Path(__file__).resolve().parents[2] / "events"
NOW = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
LONG_AGO = NOW - timedelta(days=200)


def study(rt: Runtime, auto: str, revision: str) -> None:
    current = rt.config.settings()
    rt.config.save_settings(
        current.model_copy(update={"knowledge_auto_study": auto, "knowledge_revision_study": revision})
    )


def sync(api: Api, project: str = REF) -> Any:
    return api.call("POST", "/knowledge/feed/sync", query={"project": project})


def feed(api: Api) -> dict[str, Any]:
    answer = api.call("GET", "/knowledge/feed", query={"project": REF})
    assert answer.status == 200, answer.body
    return answer.body["data"]  # type: ignore[no-any-return]


def consumer(rt: Runtime, sim: Double, at: datetime) -> FeedConsumer:
    return FeedConsumer(rt.feed_stores(), ForagerClient(sim.url, sim.token, timeout_seconds=2.0), now=lambda: at)


# ------------------------------------------------------------------ retention
def test_the_inbox_window_is_derived_max_times_two_with_a_floor() -> None:
    assert inbox_days(30, 90) == 180
    assert inbox_days(120, 90) == 240
    assert inbox_days(5, 10) == 30


def test_get_feed_reports_all_three_numbers_and_the_derivation(api: Api, knowledge_on: Runtime) -> None:
    retention = feed(api)["retention"]
    assert retention == {"inbox_days": 180, "dead_letter_days": 90, "feed_replay_days": 30, "derivation": DERIVATION}
    assert DERIVATION == "max(feed replay window, dead-letter retention) x 2, floor 30 days"


def test_sync_answers_pruned_and_retention_days(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    forager.put_source(REF, "a.md", "a")
    data = sync(api).body["data"]
    assert (data["pruned"], data["retention_days"]) == (0, 180)


# ------------------------------------------------------------------ the two lanes
def test_poll_off_revisions_on_ends_with_the_poll_sentence(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    study(knowledge_on, "off", "suggest")
    answer = sync(api)
    assert answer.status == 200, answer.body
    assert answer.body["message"].endswith("The six-hourly poll studied nothing: knowledge_auto_study is 'off'.")
    assert answer.body["data"]["message"].endswith(POLL_OFF)


def test_revisions_off_poll_on_ends_with_the_revisions_sentence(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    study(knowledge_on, "suggest", "off")
    answer = sync(api)
    assert answer.status == 200, answer.body
    assert answer.body["message"].endswith(
        "Revisions were recorded and acknowledged and not studied: knowledge_revision_study resolves to 'off'."
    )
    assert answer.body["data"]["message"].endswith(REVISIONS_OFF)


def test_nothing_is_appended_when_both_lanes_are_live(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    study(knowledge_on, "suggest", "on")
    message = sync(api).body["message"]
    assert POLL_OFF not in message and REVISIONS_OFF not in message


@pytest.mark.parametrize("revision", ["off", "inherit"])
def test_when_neither_lane_would_act_the_pass_refuses_naming_both(
    api: Api, knowledge_on: Runtime, forager: Double, revision: str
) -> None:
    study(knowledge_on, "off", revision)
    forager.put_source(REF, "a.md", "a")
    answer = sync(api)
    assert (answer.status, answer.body["code"]) == (409, "conflict")
    assert "knowledge_auto_study" in answer.body["message"]
    assert "knowledge_revision_study" in answer.body["message"]
    assert knowledge_on.watermarks.all(REF) == []  # refused before anything was read


# ------------------------------------------------------------------ off
def test_off_claims_nothing_but_records_acknowledges_and_advances(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    study(knowledge_on, "suggest", "off")
    forager.put_source(REF, "a.md", "a")
    forager.put_source(REF, "b.md", "b")

    data = sync(api).body["data"]

    assert (data["recorded"], data["acted"], data["watermark"], data["mission_ids"]) == (2, 0, 2, [])
    assert knowledge_on.actions.all(REF) == []
    view = feed(api)
    assert view["watermark"]["sequence"] == 2 and view["actions"] == []
    assert [r["sequence"] for r in view["inbox"]] == [2, 1]
    receipts = forager.feed_receipts(REF)
    assert {r["status"] for r in receipts} == {"available"} and len(receipts) == 2
    assert all("knowledge_revision_study is off" in r["detail"] for r in receipts)


# ------------------------------------------------------------------ exports
def test_exports_claim_nothing_and_are_read_back_out_of_the_envelope(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    study(knowledge_on, "suggest", "suggest")
    revision = forager.put_source(REF, "a.md", "a")
    exports = [forager.publish_export(REF) for _ in range(3)]

    data = sync(api).body["data"]

    assert (data["recorded"], data["acted"]) == (4, 1)
    view = feed(api)
    assert len(view["actions"]) == 1
    assert [e["sequence"] for e in view["exports"]] == [4, 3, 2]  # newest first
    newest = view["exports"][0]
    assert newest == {
        "sequence": 4,
        "revision_id": revision["payload"]["revision_id"],
        "export_id": exports[2]["payload"]["export_id"],
        "export_format": "anthill_package",
        "package_digest": exports[2]["payload"]["package_digest"],
        "reconciled": False,
    }
    assert all(r["publication_sequence"] is None for r in view["inbox"] if r["sequence"] > 1)


def test_an_export_whose_envelope_cannot_be_mined_still_appears_with_nulls(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    sync(api)  # makes the watermark, so GET /knowledge/feed has a stream
    (mark,) = knowledge_on.watermarks.all(REF)
    knowledge_on.inbox.record(
        [
            InboxRow(
                stream_key=mark.stream_key,
                sequence=9,
                knowledge_base=REF,
                event_id="evt_broken",
                event_type="knowledge.export.completed",
                revision_id="krev_x",
                envelope="{not json",
                received_at=NOW.isoformat(),
                export=True,
            )
        ]
    )
    (row,) = feed(api)["exports"]
    assert row == {
        "sequence": 9,
        "revision_id": "krev_x",
        "export_id": None,
        "export_format": None,
        "package_digest": None,
        "reconciled": False,
    }


# ------------------------------------------------------------------ restore-then-republish
def test_an_earlier_publication_of_the_same_content_raises_the_flag_at_claim_time(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    study(knowledge_on, "suggest", "suggest")
    first = forager.put_source(REF, "a.md", "original")
    forager.put_source(REF, "a.md", "edited")
    again = forager.put_source(REF, "a.md", "original")  # restored, then republished
    assert again["payload"]["logical_content_hash"] == first["payload"]["logical_content_hash"]

    sync(api)

    flags = {a["revision_id"]: a["republished"] for a in feed(api)["actions"]}
    assert len(flags) == 3
    assert flags.pop(again["payload"]["revision_id"]) is True
    assert set(flags.values()) == {False}  # the first, and the edit between, are not republications


# ------------------------------------------------------------------ the four prune conditions
def _published_long_ago(rt: Runtime, sim: Double, policy: AutoStudy, *, export: bool = False) -> FeedConsumer:
    sim.put_source(REF, "a.md", "a")
    if export:
        sim.publish_export(REF)
    past = consumer(rt, sim, LONG_AGO)
    past.run(REF, REF, policy)
    return consumer(rt, sim, NOW)


def _rows(rt: Runtime) -> list[InboxRow]:
    (mark,) = rt.watermarks.all(REF)
    return rt.inbox.sequences(mark.stream_key)


def test_a_row_is_pruned_when_all_four_hold(knowledge_on: Runtime, forager: Double) -> None:
    now = _published_long_ago(knowledge_on, forager, AutoStudy.SUGGEST)
    assert now.prune(REF) == 1
    assert _rows(knowledge_on) == []
    assert len(knowledge_on.actions.all(REF)) == 1  # the action table is never pruned


def test_a_row_inside_the_window_is_kept(knowledge_on: Runtime, forager: Double) -> None:
    forager.put_source(REF, "a.md", "a")
    consumer(knowledge_on, forager, NOW - timedelta(days=179)).run(REF, REF, AutoStudy.SUGGEST)
    assert consumer(knowledge_on, forager, NOW).prune(REF) == 0
    assert len(_rows(knowledge_on)) == 1


def test_a_row_above_its_streams_watermark_is_kept(knowledge_on: Runtime, forager: Double) -> None:
    now = _published_long_ago(knowledge_on, forager, AutoStudy.SUGGEST)
    (mark,) = knowledge_on.watermarks.all(REF)
    (recorded,) = _rows(knowledge_on)
    ahead = recorded.model_copy(update={"sequence": mark.sequence + 1, "event_id": "evt_ahead"})
    knowledge_on.inbox.record([ahead])  # same revision, claimed, old — but past the watermark

    assert now.prune(REF) == 1
    assert [r.sequence for r in _rows(knowledge_on)] == [mark.sequence + 1]


def test_an_export_row_is_kept(knowledge_on: Runtime, forager: Double) -> None:
    now = _published_long_ago(knowledge_on, forager, AutoStudy.SUGGEST, export=True)
    assert now.prune(REF) == 1
    assert [r.export for r in _rows(knowledge_on)] == [True]


def test_a_row_whose_action_was_never_claimed_is_kept(knowledge_on: Runtime, forager: Double) -> None:
    now = _published_long_ago(knowledge_on, forager, AutoStudy.OFF)
    assert now.prune(REF) == 0
    assert len(_rows(knowledge_on)) == 1


def test_a_prune_that_fails_is_logged_and_does_not_fail_the_pass(
    knowledge_on: Runtime, forager: Double, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    forager.put_source(REF, "a.md", "a")

    def broken(*args: object, **kwargs: object) -> list[InboxRow]:
        raise RuntimeError("the table is unreachable")

    monkeypatch.setattr(knowledge_on.inbox, "prunable", broken)
    outcome = consumer(knowledge_on, forager, NOW).run(REF, REF, AutoStudy.SUGGEST)

    assert (outcome.recorded, outcome.acted, outcome.pruned, outcome.watermark) == (1, 1, 0, 1)
    assert "the inbox prune failed" in caplog.text


# ------------------------------------------------------------------ the six-hourly pass
def test_the_six_hourly_pass_runs_one_pass_per_bound_project(knowledge_on: Runtime, forager: Double) -> None:
    knowledge_on.config.bind("colony-docs", "harbour", "test")
    forager.put_source(REF, "a.md", "a")
    forager.put_source("harbour", "h.md", "h")
    props = TEMPLATE.functions()["ScheduleFunction"]["Properties"]
    handler = load_handler(TEMPLATE.path.parent / props["CodeUri"], props["Handler"], "lambda_ScheduleFunction")

    report = handler(json.loads((EVENTS / "schedule_six_hourly.json").read_text()), FakeLambdaContext("schedule"))

    assert report["bound_projects"] == ["colony-docs", "falcon"]
    assert [(p["project"], p["knowledge_base"]) for p in report["passes"]] == [
        ("colony-docs", "harbour"),
        ("falcon", "falcon"),
    ]
    assert all(p["answer"]["recorded"] == 1 for p in report["passes"])
    for knowledge_base in ("falcon", "harbour"):
        (mark,) = knowledge_on.watermarks.all(knowledge_base)
        assert (mark.sequence, mark.status) == (1, "ok")


def test_the_six_hourly_pass_reports_a_refused_project_and_runs_the_others(
    knowledge_on: Runtime, forager: Double
) -> None:
    study(knowledge_on, "off", "off")
    props = TEMPLATE.functions()["ScheduleFunction"]["Properties"]
    handler = load_handler(TEMPLATE.path.parent / props["CodeUri"], props["Handler"], "lambda_ScheduleFunction")

    report = handler(json.loads((EVENTS / "schedule_six_hourly.json").read_text()), FakeLambdaContext("schedule"))

    (only,) = report["passes"]
    assert only["answer"] is None and "knowledge_revision_study" in only["refused"]


# ------------------------------------------------------------------ exactly once
def studies_of(sim: Double, knowledge_base: str = REF) -> int:
    """How many times FORAGER was asked for the sources a study reads."""
    return len(
        [r for r in sim.requests if r["method"] == "GET" and r["path"] == f"/api/projects/{knowledge_base}/sources"]
    )


def test_a_second_claim_of_one_revision_is_refused_and_leaves_the_first_untouched(knowledge_on: Runtime) -> None:
    first = Action(
        knowledge_base=REF,
        effect_key="inst#rev_1#study#v1",
        instance_id="inst",
        revision_id="rev_1",
        action_type="study",
        policy_version=1,
        project="falcon",
        event_id="ev_1",
        claimed_at="2026-11-30T06:00:00Z",
    )
    assert knowledge_on.actions.claim(first) is True
    again = first.model_copy(update={"claimed_at": "2026-11-30T07:00:00Z", "event_id": "ev_2", "project": "other"})

    assert knowledge_on.actions.claim(again) is False

    (kept,) = knowledge_on.actions.all(REF)
    assert (kept.claimed_at, kept.event_id, kept.project) == ("2026-11-30T06:00:00Z", "ev_1", "falcon")


def test_two_passes_reading_one_page_study_a_revision_once(knowledge_on: Runtime, forager: Double) -> None:
    """Pass A reads and records a page; before it claims, pass B reads the same page and runs
    to the end. A's claim must lose: the revision is studied once, its claim is B's."""
    study(knowledge_on, "suggest", "suggest")
    forager.put_source(REF, "a.md", "a")
    before = studies_of(forager)
    late = NOW + timedelta(minutes=5)

    def interleave(step: str) -> None:
        if step == "recorded":
            consumer(knowledge_on, forager, NOW).run(REF, "falcon", AutoStudy.SUGGEST)

    first = FeedConsumer(
        knowledge_on.feed_stores(),
        ForagerClient(forager.url, forager.token, timeout_seconds=2.0),
        now=lambda: late,
        checkpoint=interleave,
    )
    first.run(REF, "falcon", AutoStudy.SUGGEST)

    assert studies_of(forager) - before == 1  # FORAGER asked once
    (action,) = knowledge_on.actions.all(REF)
    assert action.claimed_at == NOW.isoformat()  # pass B's claim, never overwritten by A's
    assert action.outcome == "studied"


# ---------------------------------------------------------------------- mutation survivor (issue 39)
def test_two_different_refusals_at_one_sequence_are_two_dead_letters_and_one_again_is_one() -> None:
    """A door refusal's id is its lineage, its sequence and its bytes: the same bytes again are
    one entry (a redelivery), two different envelopes at one sequence are two."""
    from knowledge_service.domain.feed.consumer import door_entry_id
    from knowledge_service.storage.feed_store import Watermark

    mark = Watermark(knowledge_base="falcon", stream_key="k", instance_id="i", generation="g1", stream="s")
    first, other = '{"sequence": 7, "a": 1}', '{"sequence": 7, "a": 2}'
    assert door_entry_id(mark, 7, first) == door_entry_id(mark, 7, first)
    assert door_entry_id(mark, 7, first) != door_entry_id(mark, 7, other)
    assert door_entry_id(mark, 7, first) != door_entry_id(mark, 8, first)
    assert door_entry_id(mark, 7, first) != door_entry_id(mark.model_copy(update={"generation": "g2"}), 7, first)
