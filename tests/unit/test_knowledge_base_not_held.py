"""A project bound to a knowledge base FORAGER no longer holds: every route that asks FORAGER
about the base itself answers ``404 not_found`` in one sentence (``domain/scope.py``,
``NOT_HELD``), whichever group serves it."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge_service.domain.scope import NOT_HELD
from knowledge_service.runtime import Runtime
from tests import demo
from tests.conftest import Api

ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "/knowledge/conflicts", None),  # reads
    ("GET", "/knowledge/statements", None),
    ("GET", "/knowledge/duplicates", None),
    ("GET", "/knowledge/sources", None),
    ("GET", "/knowledge/exports", None),  # exports
    ("POST", "/knowledge/exports", {"format": "jsonl"}),
    ("GET", "/knowledge/jobs", None),  # ingestion
    ("POST", "/knowledge/conflicts/{id}/reopen", None),  # curation
    ("POST", "/knowledge/duplicates/{id}/decide", {"action": "keep_apart"}),
]
RECORD = {
    "conflicts": demo.conflict("falcon", "duplicate"),
    "duplicates": demo.candidate("falcon", "Robert Smith", "R. Smith"),
}


@pytest.mark.parametrize(("method", "route", "body"), ROUTES, ids=[f"{m} {r}" for m, r, _ in ROUTES])
def test_a_base_forager_does_not_hold_is_404_in_one_sentence_on_every_route(
    api: Api, knowledge_on: Runtime, method: str, route: str, body: Any
) -> None:
    knowledge_on.config.bind("colony-docs", "vanished", "test")
    path = route.replace("{id}", RECORD[route.split("/")[2]]) if "{id}" in route else route
    answer = api.call(method, path, body=body, query={"project": "colony-docs"}, resource=route)
    assert (answer.status, answer.body["code"], answer.body["message"]) == (404, "not_found", NOT_HELD)
