"""The read routes over HTTP against the local stack, as a user calls them."""

from __future__ import annotations

import httpx
import pytest

from tests import demo
from tests.localstack import LocalStack, bearer

pytestmark = pytest.mark.e2e

FALCON_ITEM = demo.statement("falcon", "March 3, 2026")
HARBOUR_ITEM = demo.statement("harbour", "opens at 06:00")
BY_ID = [
    ("/knowledge/items/{}", FALCON_ITEM, HARBOUR_ITEM),
    ("/knowledge/items/{}/evidence", FALCON_ITEM, HARBOUR_ITEM),
    (
        "/knowledge/entities/{}",
        demo.entity("falcon", "Robert Smith"),
        demo.entity("harbour", "Kestrel Harbour Authority"),
    ),
    ("/knowledge/sources/{}", demo.source("falcon", "launch-plan.md"), demo.source("harbour", "safety.md")),
]


def read(http: httpx.Client, stack: LocalStack, path: str, **params: str) -> httpx.Response:
    return http.get(path, params={"project": "falcon", **params}, headers=bearer(stack.admin_token))


@pytest.mark.parametrize(
    ("path", "params", "keys"),
    [
        ("/knowledge/search", {"q": "launch date"}, {"query", "backend", "took_ms", "hits", "entities"}),
        ("/knowledge/entities", {"name": "Bob Smith"}, {"entities", "page", "page_size", "total"}),
        ("/knowledge/entities", {"type": "person"}, {"entities", "page", "page_size", "total"}),
        ("/knowledge/statements", {"status": "disputed"}, {"items", "page", "page_size", "total", "facets"}),
        ("/knowledge/duplicates", {}, {"duplicates", "pending"}),
        ("/knowledge/sources", {}, {"sources"}),
        ("/knowledge/conflicts", {"status": "all"}, {"conflicts"}),
    ],
)
def test_each_list_route_answers_its_shape(
    http: httpx.Client, stack: LocalStack, path: str, params: dict[str, str], keys: set[str]
) -> None:
    answer = read(http, stack, path, **params)
    assert answer.status_code == 200, answer.text
    assert set(answer.json()["data"]) == keys


def test_retrieve_answers_the_rendered_context(http: httpx.Client, stack: LocalStack) -> None:
    answer = http.post(
        "/knowledge/retrieve",
        json={"query": "why did the launch date change", "project": "falcon"},
        headers=bearer(stack.admin_token),
    )
    assert answer.status_code == 200, answer.text
    assert "April 10, 2026" in answer.json()["data"]["rendered"]


def test_another_knowledge_bases_ids_are_not_found_byte_identical(http: httpx.Client, stack: LocalStack) -> None:
    bound = http.post(
        "/knowledge/project-map",
        json={"project": "colony-docs", "knowledge_base": "harbour"},
        headers=bearer(stack.admin_token),
    )
    assert bound.status_code == 200, bound.text
    for template, ours, theirs in BY_ID:
        assert read(http, stack, template.format(ours)).status_code == 200
        assert read(http, stack, template.format(theirs), project="colony-docs").status_code == 200
        elsewhere = read(http, stack, template.format(theirs))
        missing = read(http, stack, template.format(theirs.split("_")[0] + "_" + "0" * 16))
        assert elsewhere.status_code == missing.status_code == 404
        assert elsewhere.json()["code"] == "not_found"
        assert elsewhere.content == missing.content


def test_foragers_outage_is_503_in_the_envelope(http: httpx.Client, stack: LocalStack) -> None:
    stack.fault("down")
    answer = read(http, stack, "/knowledge/search", q="launch")
    assert (answer.status_code, answer.json()["code"]) == (503, "knowledge_unreachable")
