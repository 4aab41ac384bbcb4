"""Dead letters over the local stack: an envelope the door refuses is dead-lettered by a sync,
listed, read whole, refused a replay (the build still refuses it), and discarded."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.conftest import LocalStack
from tests.e2e.test_feed import REF, admin, put_source, settle, sync  # noqa: F401 - admin is a fixture

pytestmark = pytest.mark.e2e


def test_an_envelope_refused_at_the_door_is_listed_and_discarded(
    http: httpx.Client,
    stack: LocalStack,
    admin: dict[str, str],  # noqa: F811 - the fixture imported above
) -> None:
    settle(http, admin, "suggest", "suggest")
    put_source(stack)
    bad = httpx.post(f"{stack.control_url}/projects/{REF}/feed/malformed", json={"kind": "header"}).json()
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
    receipts = httpx.get(f"{stack.control_url}/projects/{REF}/feed/receipts").json()["receipts"]
    assert any(r["event_id"] == bad["event_id"] and r["status"] == "failed" for r in receipts)
