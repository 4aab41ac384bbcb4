"""Page search end to end on the local stack: a page written by ``kb import`` and one written by
an agent's ``brain_put`` (store ``project``) are found by ``GET kb/search`` and ``brain_search``
within 5 s of their writes' answers; a deleted page is no longer found."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_kb_command import Hub, exported, hub  # noqa: F401 (hub: the fixture)
from tests.e2e.test_mcp import mission, payload, role, run, session

pytestmark = pytest.mark.e2e

FINDABLE_WITHIN_SECONDS = 5.0


def found(base: Hub, q: str) -> list[str]:
    answer = base.http.get(f"{base.base}/search", params={"q": q})
    assert answer.status_code == 200, answer.text
    return [h["path"] for h in answer.json()["hits"]]


def within(seconds: float, check: Any) -> float:
    """How long ``check()`` took to hold, polled until ``seconds`` have passed (then it fails)."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < seconds, f"not within {seconds} s"
        time.sleep(0.1)
    return time.monotonic() - start


def test_imported_and_agent_written_pages_are_found_within_5_s_and_a_deleted_one_is_not(
    hub: Hub,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    # Given a page the folder adds, imported with kb
    folder = exported(hub, tmp_path)
    (folder / "harbour.md").write_text("---\ntype: Concept\ntitle: Harbour\n---\nThe pilot boat waits at the mole.\n")
    imported = hub.kb("import", "--dir", str(folder))
    assert imported.code == 0, imported.err
    # Then it is found within 5 s of the import's answer
    within(FINDABLE_WITHIN_SECONDS, lambda: found(hub, "pilot boat") == ["/fs/harbour.md"])

    # Given a page an agent writes into the knowledge base over MCP
    credential = mission(hub.stack, role(hub.stack, ["brain_put", "brain_search"]), project=hub.project)

    async def agent() -> list[str]:
        async with session(hub.stack, credential) as client:
            put = await client.call_tool(
                "brain_put",
                {
                    "path": "/ops/lamp.md",
                    "content": "# Lamp\n\nThe lighthouse lamp turns at dusk.\n",
                    "store": "project",
                },
            )
            assert not put.isError and payload(put)["ok"], payload(put)
            searched = await client.call_tool("brain_search", {"q": "lighthouse"})
            assert not searched.isError, payload(searched)
            return [h["path"] for h in payload(searched)["hits"]]

    # Then the agent finds it itself, and the human's search does within 5 s
    assert run(agent) == ["/fs/ops/lamp.md"]
    within(FINDABLE_WITHIN_SECONDS, lambda: found(hub, "lighthouse") == ["/fs/ops/lamp.md"])

    # When a page is deleted, then it is no longer found
    hub.delete("harbour.md")
    within(FINDABLE_WITHIN_SECONDS, lambda: found(hub, "pilot boat") == [])
