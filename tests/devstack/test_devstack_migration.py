"""The local stack migrates its saved state on start (``storage/migrations.py``, issue 30):
items a stack of an earlier version saved under keys this version no longer reads (in its
snapshot or its journal) are found under their new keys after the next start."""

from __future__ import annotations

from pathlib import Path

import pytest

from devstack.stack import Stack, start_stack
from knowledge_service.storage.config_store import ConfigStore
from knowledge_service.storage.page_store import PageStore

pytestmark = pytest.mark.e2e


def _start(state_dir: Path) -> Stack:
    return start_stack(state_dir=state_dir, api_port=0, moto_port=0, forager_port=0, forager_control_port=0)


def test_old_shaped_items_in_the_saved_state_are_found_after_a_start(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = _start(state)
    try:
        dynamodb = first.resource("dynamodb")
        config = dynamodb.Table(first.env["CONFIG_TABLE"])
        # what a stack before issue 30 saved: every binding in the one `binding` partition, one
        # page meta item a project
        dynamodb.Table(first.env["PAGES_TABLE"]).put_item(
            Item={"pk": "META#heron", "sk": "#", "gen": 3, "used_bytes": 99}
        )
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
    finally:
        second.stop()
