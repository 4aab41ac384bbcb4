"""GET /knowledge/changes pages (issue 56: 2,189 findings in one answer took 26.5 s): newest
first, ``limit`` at a time, ``next_cursor`` to the next page. The law: walking the pages reads
every finding the status selects exactly once, in order, whatever the page size and however many
findings share their time (a pass files all of its findings at one second). A cursor is a
position; any value of its shape reads a page of the caller's knowledge base, never another's."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from knowledge_service.domain.findings import FINDINGS_PAGE_DEFAULT, FINDINGS_PAGE_MAX
from knowledge_service.domain.identifiers import CHANGES_CURSOR_PATTERN
from knowledge_service.runtime import Runtime
from knowledge_service.storage.findings_store import Finding, FindingStatus
from tests.conftest import Api

REF = "falcon"


def finding(base: str, n: int, second: int) -> Finding:
    return Finding(
        id=f"{base}{n:05d}".encode().hex()[:24],
        knowledge_base=base,
        project_ref=base,
        source_id=f"src_{n:05d}",
        source_name=f"docs/{n}.md",
        kind="new",
        previous_hash=None,
        current_hash=f"h{n}",
        detected_at=f"2026-12-08T00:00:{second:02d}Z",
    )


def listed(api: Api, **query: str) -> Any:
    return api.call("GET", "/knowledge/changes", query={"project": REF, **query})


def walk(api: Api, status: str, limit: int) -> list[str]:
    seen: list[str] = []
    cursor: str | None = None
    while True:
        answer = listed(api, status=status, limit=str(limit), **({"cursor": cursor} if cursor else {}))
        assert answer.status == 200, answer.body
        page = answer.body["data"]
        assert page["count"] == len(page["findings"]) <= limit
        seen += [f["id"] for f in page["findings"]]
        if page["next_cursor"] is None:
            return seen
        assert page["count"] == limit and re.fullmatch(CHANGES_CURSOR_PATTERN, page["next_cursor"])
        cursor = page["next_cursor"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seconds=st.lists(st.integers(0, 3), min_size=0, max_size=30),  # few distinct times: many ties
    decided=st.sets(st.integers(0, 29)),
    limit=st.integers(1, 7),
)
def test_walking_the_pages_reads_every_finding_once_newest_first(
    api: Api, knowledge_on: Runtime, seconds: list[int], decided: set[int], limit: int
) -> None:
    store = knowledge_on.findings
    for held in store.page(REF, open_only=False, limit=FINDINGS_PAGE_MAX, after=None)[0]:  # a fresh base each example
        store._table.delete_item(Key={"knowledge_base": REF, "sk": f"finding#{held.id}"})
    made = [finding(REF, n, second) for n, second in enumerate(seconds)]
    store.add_many(made)
    for n in decided & set(range(len(made))):
        store.decide(REF, made[n].id, FindingStatus.DISMISSED)
    every = walk(api, "all", limit)
    assert sorted(every) == sorted(f.id for f in made)  # each once
    times = {f.id: f.detected_at for f in made}
    assert [times[i] for i in every] == sorted((times[i] for i in every), reverse=True)  # newest first
    open_ids = {made[n].id for n in range(len(made)) if n not in decided}
    assert walk(api, "open", limit) == [i for i in every if i in open_ids]  # the same order, decided ones left out


def test_a_page_is_a_hundred_by_default_and_at_most_five_hundred(api: Api, knowledge_on: Runtime) -> None:
    knowledge_on.findings.add_many([finding(REF, n, n % 60) for n in range(FINDINGS_PAGE_DEFAULT + 1)])
    first = listed(api).body["data"]
    assert (first["count"], first["next_cursor"] is not None) == (FINDINGS_PAGE_DEFAULT, True)
    rest = listed(api, cursor=first["next_cursor"]).body["data"]
    assert (rest["count"], rest["next_cursor"]) == (1, None)
    for limit in ("0", str(FINDINGS_PAGE_MAX + 1), "-1", "1e3"):
        answer = listed(api, limit=limit)
        assert (answer.status, answer.body["code"]) == (400, "bad_request"), limit
        assert answer.body["message"].startswith("limit:"), answer.body


def test_a_made_up_position_reads_the_callers_knowledge_base_only(api: Api, knowledge_on: Runtime) -> None:
    knowledge_on.findings.add_many([finding(REF, n, 10 + n) for n in range(3)])
    knowledge_on.findings.add_many([finding("harbour", n, 30 + n) for n in range(3)])  # another base's, newer
    for cursor in ("9999-12-31T23:59:59Z#ffff", "2026-12-08T00:00:11Z#0", "2026-12-08T00:00:11Z#" + "f" * 64):
        page = listed(api, status="all", cursor=cursor).body["data"]
        assert page["findings"] and {f["project_ref"] for f in page["findings"]} == {REF}, cursor
    oldest = listed(api, status="all", cursor="0000-00-00#0")
    assert (oldest.status, oldest.body["data"]) == (200, {"findings": [], "count": 0, "next_cursor": None})


@pytest.mark.parametrize(
    "cursor", ["", "nonsense", "2026-12-08T00:00:11Z", "2026-12-08#XYZ", "#abc", "2026-12-08#" + "a" * 65]
)
def test_a_cursor_outside_the_declared_shape_is_400_naming_it(api: Api, knowledge_on: Runtime, cursor: str) -> None:
    answer = listed(api, cursor=cursor)
    assert (answer.status, answer.body["code"]) == (400, "bad_request")
    assert answer.body["message"].startswith("cursor:"), answer.body
