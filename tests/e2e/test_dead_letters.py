"""Dead letters over the local stack: an envelope the door refuses is dead-lettered by a sync,
listed, read whole, refused a replay (the build still refuses it), and discarded; and, with the
functions' clock moved 25 hours (``PUT /_local/clock``), a study that keeps failing becomes a dead
letter beside a door refusal, is replayed after the fix and studied, the other discarded, and the
event log read."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.e2e.test_feed import REF, admin, put_source, settle, sync  # noqa: F401 - admin is a fixture
from tests.localstack import LocalStack

pytestmark = pytest.mark.e2e


def test_an_envelope_refused_at_the_door_is_listed_and_discarded(
    http: httpx.Client,
    stack: LocalStack,
    admin: dict[str, str],  # noqa: F811 - the fixture imported above
) -> None:
    settle(http, admin, "suggest", "suggest")
    put_source(stack)
    bad = httpx.post(f"{stack.control_url}/projects/{REF}/feed/malformed", json={"kind": "header"}, timeout=30.0).json()
    put_source(stack)

    answer = sync(http, admin)
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["dead_lettered"] == 1
    assert "refused at the door" in answer.json()["message"]

    base = "/knowledge/feed/dead-letters"
    listed = http.get(base, headers=admin, params={"project": REF}).json()["data"]
    [row] = [r for r in listed["entries"] if r["event_id"] == bad["event_id"]]
    assert row["error_class"] == "header_invalid" and "envelope" not in row
    whole = http.get(f"{base}/{row['dead_letter_id']}", headers=admin, params={"project": REF}).json()["data"]
    assert bad["event_id"] in whole["envelope"]

    replay = http.post(
        f"{base}/{row['dead_letter_id']}/replay", headers=admin, json={"project": REF, "reason": "fixed_consumer"}
    )
    assert (replay.status_code, replay.json()["code"]) == (409, "refused_at_the_door")
    discard = http.post(
        f"{base}/{row['dead_letter_id']}/discard", headers=admin, json={"project": REF, "reason": "sender_error"}
    )
    assert discard.status_code == 200, discard.text
    after = http.get(base, headers=admin, params={"project": REF, "state": "all"}).json()["data"]["entries"]
    assert [r["state"] for r in after if r["dead_letter_id"] == row["dead_letter_id"]] == ["resolved"]
    receipts = httpx.get(f"{stack.control_url}/projects/{REF}/feed/receipts", timeout=30.0).json()["receipts"]
    assert any(r["event_id"] == bad["event_id"] and r["status"] == "failed" for r in receipts)


def test_a_door_refusal_and_an_exhausted_retry_are_listed_then_one_replayed_after_a_fix_and_the_other_discarded(
    http: httpx.Client,
    stack: LocalStack,
    admin: dict[str, str],  # noqa: F811 - the fixture imported above
    move_clock: Callable[[int], None],
) -> None:
    settle(http, admin, "suggest", "suggest")
    assert sync(http, admin).status_code == 200  # read what earlier tests left on the feed
    base = "/knowledge/feed/dead-letters"

    # Given an envelope the door refuses, and a revision whose study fails: the engine's source
    # list answers 5xx, a failure the retry lane retries
    bad = httpx.post(f"{stack.control_url}/projects/{REF}/feed/malformed", json={"kind": "header"}, timeout=30.0).json()
    stack.fault("5xx", path_prefix=f"/api/projects/{REF}/sources")
    revision = put_source(stack)
    first = sync(http, admin)
    assert first.status_code == 200, first.text
    assert first.json()["data"]["dead_lettered"] == 1 and first.json()["data"]["retrying"] >= 1
    listed = http.get(base, headers=admin, params={"project": REF}).json()["data"]
    assert revision["event_id"] not in {r["event_id"] for r in listed["entries"]}  # a retry is not a dead letter

    # When the clock moves 25 hours (moved, not waited) and the colony syncs again
    move_clock(25 * 3600)
    second = sync(http, admin)
    assert second.status_code == 200, second.text
    assert second.json()["data"]["dead_lettered"] >= 1
    assert "ran out after 24 hours and were dead-lettered" in second.json()["message"]

    # Then both are in the list
    listed = http.get(base, headers=admin, params={"project": REF}).json()["data"]
    by_event = {r["event_id"]: r for r in listed["entries"]}
    refused, exhausted = by_event[bad["event_id"]], by_event[revision["event_id"]]
    assert (refused["error_class"], exhausted["error_class"]) == ("header_invalid", "retries_exhausted")
    assert exhausted["attempts"] >= 1 and "envelope" not in exhausted
    receipts = httpx.get(f"{stack.control_url}/projects/{REF}/feed/receipts", timeout=30.0).json()["receipts"]
    assert {"event_id": revision["event_id"], "status": "failed"}.items() <= next(
        r for r in receipts if r["event_id"] == revision["event_id"]
    ).items()

    # When the engine is fixed, the exhausted one is replayed after the fix and the next sync studies it
    stack.fault(None)
    replay = http.post(
        f"{base}/{exhausted['dead_letter_id']}/replay",
        headers=admin,
        json={"project": REF, "reason": "fixed_engine", "after_fix": True, "change": "engine answers its sources"},
    )
    assert replay.status_code == 200, replay.text
    assert replay.json()["data"]["effect"] == "rearmed"
    third = sync(http, admin)
    assert third.status_code == 200 and third.json()["data"]["retried"] >= 1, third.text
    actions = http.get("/knowledge/feed", headers=admin, params={"project": REF}).json()["data"]["actions"]
    studied = [a for a in actions if a["revision_id"] == revision["payload"]["revision_id"]]
    assert [a["outcome"] for a in studied] == ["studied"]

    # ... and the refused one is discarded
    discard = http.post(
        f"{base}/{refused['dead_letter_id']}/discard", headers=admin, json={"project": REF, "reason": "sender_error"}
    )
    assert discard.status_code == 200, discard.text
    after = http.get(base, headers=admin, params={"project": REF, "state": "all"}).json()["data"]["entries"]
    states = {r["dead_letter_id"]: r["state"] for r in after}
    assert states[refused["dead_letter_id"]] == states[exhausted["dead_letter_id"]] == "resolved"

    # Then the event log says who did what, with no error text
    events = http.get("/knowledge/events", headers=admin, params={"project": REF, "limit": 50}).json()["data"]
    replayed = [e for e in events["events"] if e["event_type"] == "knowledge_dead_letter_replayed"]
    discarded = [e for e in events["events"] if e["event_type"] == "platform.deadletter.discarded"]
    assert any(e["payload"]["dead_letter_id"] == exhausted["dead_letter_id"] for e in replayed)
    assert any(e["payload"]["event_id"] == bad["event_id"] for e in discarded)
    # no error text in what the log keeps: its words, not its ids (a hashed id may hold the digits 503)
    said = [str({k: v for k, v in e["payload"].items() if not k.endswith("_id")}) for e in replayed]
    assert said and all("5" + "03" not in words and "answered" not in words for words in said), said
