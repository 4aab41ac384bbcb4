"""The local stack migrates its saved state on start (``storage/migrations.py``, issue 30):
items a stack of an earlier version saved under keys this version no longer reads (in its
snapshot or its journal) are found under their new keys after the next start."""

from __future__ import annotations

from pathlib import Path

import pytest

from devstack.stack import Stack, start_stack
from knowledge_service.storage.config_store import ConfigStore
from knowledge_service.storage.event_log import EventLog
from knowledge_service.storage.page_store import PageStore
from knowledge_service.storage.verbs import VerbAudit

pytestmark = pytest.mark.e2e

OLD_EVENT = {
    "event_type": "knowledge_base_created",
    "recorded": "2026-11-01T00:00:00+00:00#old-event",
    "log": "all",
    "event_id": "old-event",
    "at": "2026-11-01T00:00:00+00:00",
    "actor": "ada",
    "payload": {"project": "heron", "knowledge_base": "heron-kb"},
}
OLD_AUDIT = {"workspace": "heron", "recorded": "2026-11-01T00:00:00+00:00#a0", "verb": "knowledge.list"}


def _start(state_dir: Path) -> Stack:
    return start_stack(state_dir=state_dir, api_port=0, moto_port=0, forager_port=0, forager_control_port=0)


def test_old_shaped_items_in_the_saved_state_are_found_after_a_start(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = _start(state)
    try:
        dynamodb = first.resource("dynamodb")
        config = dynamodb.Table(first.env["CONFIG_TABLE"])
        # what a stack before issue 30 saved: every binding in the one `binding` partition, one
        # page meta item a project, event rows by type alone, audit rows by workspace alone
        dynamodb.Table(first.env["PAGES_TABLE"]).put_item(
            Item={"pk": "META#heron", "sk": "#", "gen": 3, "used_bytes": 99}
        )
        dynamodb.Table(first.env["EVENT_LOG_TABLE"]).put_item(Item=OLD_EVENT)
        dynamodb.Table(first.env["VERB_AUDIT_TABLE"]).put_item(Item=OLD_AUDIT)
        config.put_item(
            Item={
                "pk": "binding",
                "sk": "project#heron",
                "project": "heron",
                "knowledge_base": "heron-kb",
                "state": "bound",
            }
        )
    finally:
        first.stop()
    second = _start(state)
    try:
        dynamodb = second.resource("dynamodb")
        config_store = ConfigStore(dynamodb, second.env["CONFIG_TABLE"], second.env["PROJECTS_TABLE"])
        assert "heron" in {b.project for b in config_store.bindings()}
        found = config_store.scope("heron").binding
        assert found is not None and found.knowledge_base == "heron-kb"
        old = dynamodb.Table(second.env["CONFIG_TABLE"]).get_item(Key={"pk": "binding", "sk": "project#heron"})
        assert "Item" not in old
        pages = PageStore(dynamodb, second.env["PAGES_TABLE"], None, "", None, "")
        assert pages.generation("heron") == (3, 99)
        assert "Item" not in pages.table.get_item(Key={"pk": "META#heron", "sk": "#"})
        events = EventLog(dynamodb, second.env["EVENT_LOG_TABLE"])
        assert [e.event_id for e in events.recent("knowledge_base_created")] == ["old-event"]
        audit = VerbAudit(dynamodb, second.env["VERB_AUDIT_TABLE"])
        assert [r["recorded"] for r in audit.rows("heron")] == [OLD_AUDIT["recorded"]]
    finally:
        second.stop()
