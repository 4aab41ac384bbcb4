"""A gap in the feed (issue 13): the hole is read again before it is passed; what the producer can
no longer serve is passed over, named in the sync answer, and the exports in it are reconciled from
FORAGER's export history so that no arrival is hidden."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from knowledge_service.domain.feed.consumer import FeedConsumer
from knowledge_service.errors import UpstreamError
from knowledge_service.models import AutoStudy
from knowledge_service.runtime import Runtime
from knowledge_service.upstream.client import ForagerClient
from knowledge_service.upstream.models import ExportList
from local_engine.double import Double
from tests.conftest import Api

REF = "falcon"


def sync(api: Api) -> dict[str, Any]:
    answer = api.call("POST", "/knowledge/feed/sync", query={"project": REF})
    assert answer.status == 200, answer.body
    return answer.body["data"]  # type: ignore[no-any-return]


def feed(api: Api) -> dict[str, Any]:
    answer = api.call("GET", "/knowledge/feed", query={"project": REF})
    assert answer.status == 200, answer.body
    return answer.body["data"]  # type: ignore[no-any-return]


def test_a_hole_the_producer_serves_when_read_again_is_read_and_not_passed_over(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    # Given a producer whose first answer leaves out sequence 2 (a short answer with a hole in it)
    forager.put_source(REF, "a.md", "one")
    forager.feed_fault(REF, "hide")
    hidden = forager.put_source(REF, "b.md", "two")
    forager.put_source(REF, "c.md", "three")

    # When the colony syncs
    data = sync(api)

    # Then the hole was read again and served: nothing degraded, nothing passed over, all three recorded
    assert (data["degraded"], data["passed_over"], data["recorded"], data["watermark"]) == ([], [], 3, 3)
    rows = knowledge_on.inbox.sequences(knowledge_on.watermarks.all(REF)[0].stream_key)
    assert [r.event_id for r in rows if r.sequence == 2] == [hidden["event_id"]]
    assert "Passed over" not in data["message"]


def test_an_export_lost_in_a_hole_is_recorded_from_the_export_history_and_named(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    # Given an export whose knowledge.export.completed the producer can no longer serve
    revision = forager.put_source(REF, "a.md", "one")
    forager.feed_fault(REF, "lose")
    lost = forager.publish_export(REF)
    forager.put_source(REF, "b.md", "two")

    # When the colony syncs
    data = sync(api)

    # Then the hole is passed over and said so, and the export is not hidden
    assert data["passed_over"] == [[2, 2]]
    assert data["exports_reconciled"] == 1
    assert data["degraded"] == ["gap"] and data["watermark"] == 3
    assert "Passed over sequence(s) 2" in data["message"]
    assert "1 export(s) were recorded from FORAGER's export history" in data["message"]
    (export,) = feed(api)["exports"]
    assert export["export_id"] == lost["payload"]["export_id"]
    assert export["revision_id"] == revision["payload"]["revision_id"]
    assert (export["reconciled"], export["sequence"], export["export_format"]) == (True, 2, "anthill")
    assert export["package_digest"] is not None and export["package_digest"].startswith("sha256:")


def test_an_export_already_recorded_is_not_reconciled_again(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    # Given one export that arrived on the feed, then a hole holding another
    forager.put_source(REF, "a.md", "one")
    arrived = forager.publish_export(REF)
    sync(api)
    forager.feed_fault(REF, "lose")
    lost = forager.publish_export(REF)
    forager.put_source(REF, "b.md", "two")

    # When the colony syncs past the hole, twice
    first = sync(api)
    forager.feed_fault(REF, "lose")
    forager.put_source(REF, "c.md", "three")
    forager.put_source(REF, "d.md", "four")
    second = sync(api)

    # Then only the lost one is reconciled, once
    assert (first["passed_over"], first["exports_reconciled"]) == ([[3, 3]], 1)
    assert (second["passed_over"], second["exports_reconciled"]) == ([[5, 5]], 0)
    exports = feed(api)["exports"]
    assert sorted((e["export_id"], e["reconciled"]) for e in exports) == sorted(
        [(arrived["payload"]["export_id"], False), (lost["payload"]["export_id"], True)]
    )


class _HistoryDown(ForagerClient):
    def exports(self, project_ref: str) -> ExportList:
        raise UpstreamError("the export history answered 503")


def test_a_hole_is_not_passed_while_the_export_history_cannot_be_read(knowledge_on: Runtime, forager: Double) -> None:
    # Given a hole the producer cannot serve, and an export history that does not answer
    forager.put_source(REF, "a.md", "one")
    forager.feed_fault(REF, "lose")
    lost = forager.publish_export(REF)
    forager.put_source(REF, "b.md", "two")
    now = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
    down = FeedConsumer(
        knowledge_on.feed_stores(), _HistoryDown(forager.url, forager.token, timeout_seconds=2.0), now=lambda: now
    )

    # When a pass meets the hole, it stops short of it
    with pytest.raises(UpstreamError):
        down.run(REF, "falcon", AutoStudy.SUGGEST)
    (mark,) = knowledge_on.watermarks.all(REF)
    assert (mark.sequence, mark.status) == (1, "degraded")

    # Then a pass that can read the history passes over it and records the export
    up = FeedConsumer(
        knowledge_on.feed_stores(), ForagerClient(forager.url, forager.token, timeout_seconds=2.0), now=lambda: now
    )
    outcome = up.run(REF, "falcon", AutoStudy.SUGGEST)
    assert (outcome.passed_over, outcome.exports_reconciled, outcome.watermark) == ([[2, 2]], 1, 3)
    assert lost["payload"]["export_id"] in knowledge_on.inbox.export_ids(REF)
