"""Schemathesis hooks for the fuzz run (loaded through ``SCHEMATHESIS_HOOKS``).

After each call that may have changed what the next call relies on (settings, bindings),
put it back: knowledge on, pointed at the simulator, falcon and the console default
bound to falcon. The fuzz run
is sequential (one worker), so the next case always starts from that state.
"""

from __future__ import annotations

import os
from typing import Any

import httpx
import schemathesis

RESTORE_AFTER = ("/settings", "/knowledge/project-map", "/knowledge/bases")


@schemathesis.hook
def after_call(context: Any, case: Any, response: Any) -> None:
    if case.path not in RESTORE_AFTER:
        return
    base_url, token, simulator = (
        os.environ["FUZZ_BASE_URL"],
        os.environ["FUZZ_TOKEN"],
        os.environ["FUZZ_FORAGER_ENDPOINT"],
    )
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        client.post(
            "/settings",
            json={
                "knowledge_enabled": True,
                "knowledge_forager_endpoint": simulator,
                "knowledge_forager_token": os.environ["FUZZ_FORAGER_TOKEN"],
            },
        )
        restore_bindings(client)


def restore_bindings(client: httpx.Client) -> None:
    """falcon, and the console default, read FORAGER's falcon: reads without ?project= reach
    the engine instead of stopping at not_found."""
    client.post("/knowledge/project-map", json={"project": "falcon", "knowledge_base": "falcon"})
    client.post("/knowledge/project-map", json={"project": "", "knowledge_base": "falcon"})
