"""The event log's and the verb audit's shards are read by eight threads at once through one
boto3 resource. boto3 builds a query's condition objects with one builder a client, reset at the
start of each call, so two threads could take each other's placeholders and a shard's query read
another shard, silently: a full run under load (two `make test` side by side) lost the newest
event of a page that way. Each read now builds its own expressions (``toolkit.expressions``).

Here the window is held open: every placeholder boto3's builder hands out waits a moment, so the
threads interleave inside it on every read. Before the fix the event log's pages (a key condition
and a filter: several placeholders a query, so a reset between two of them renames one) came
back with rows missing; now every row is read once, in order. The audit's query has one name and
one value, which a reset could not mix up; it passes its conditions the same way, and is held here
to the same law."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from boto3.dynamodb.conditions import ConditionExpressionBuilder

from knowledge_service.runtime import Runtime

ROWS = 40


@pytest.fixture
def interleaving(monkeypatch: pytest.MonkeyPatch) -> None:
    def pausing(original: Any) -> Any:
        def placeholder(self: ConditionExpressionBuilder) -> str:
            time.sleep(0.001)  # another thread runs here
            return str(original(self))

        return placeholder

    for name in ("_get_name_placeholder", "_get_value_placeholder"):
        monkeypatch.setattr(ConditionExpressionBuilder, name, pausing(getattr(ConditionExpressionBuilder, name)))


@pytest.mark.usefixtures("interleaving")
def test_an_event_log_paged_through_reads_every_row_once_newest_first(knowledge_on: Runtime) -> None:
    for n in range(ROWS):
        knowledge_on.events.record("knowledge_curated", "opal", {"act": f"act_{n:02}", "project": "falcon"})
    seen: list[str] = []
    before: str | None = None
    while True:
        page, before = knowledge_on.events.page(act=None, project="falcon", limit=7, before=before)
        seen += [event.payload["act"] for event in page]
        if before is None:
            break
    assert seen == [f"act_{n:02}" for n in reversed(range(ROWS))]
    recent = knowledge_on.events.recent("knowledge_curated", limit=ROWS)
    assert [event.payload["act"] for event in recent] == seen


@pytest.mark.usefixtures("interleaving")
def test_a_workspaces_audit_reads_every_row_once_oldest_first(knowledge_on: Runtime) -> None:
    start = datetime(2026, 12, 2, tzinfo=UTC)
    recorded = [f"{(start + timedelta(seconds=n)).isoformat()}#{n:032x}" for n in range(ROWS)]
    for stamp in recorded:
        knowledge_on.verb_audit.record({"workspace": "falcon", "recorded": stamp, "verb": "knowledge.get"})
    assert [row["recorded"] for row in knowledge_on.verb_audit.rows("falcon")] == recorded
