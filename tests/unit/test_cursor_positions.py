"""The two cursors the API hands out are positions, declared exactly: every value of the
declared shape reads a page (possibly empty), never a 400, and never widens what the caller
may read — the project (events) and the knowledge base (feed actions) come from the caller's
scope, whatever the cursor says. A value outside the shape is 400 naming the parameter."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from knowledge_service.domain.feed.view import ACTIONS_PAGE, recent_actions
from knowledge_service.domain.identifiers import ACTIONS_CURSOR_PATTERN, EVENTS_CURSOR_PATTERN
from knowledge_service.errors import BadRequest
from knowledge_service.runtime import Runtime
from knowledge_service.storage.feed_store import Action
from tests.conftest import ADMIN, Api

NEWEST = "9999-12-31T23:59:59.999999+00:00#" + "f" * 32  # after every row: the whole log
OLDEST = "0000-00-00T00#" + "0" * 32  # before every row: nothing


def curated(rt: Runtime, project: str, act: str) -> None:
    rt.events.record("knowledge_curated", "opal", {"act": act, "project": project, "knowledge_base": project})


def events(api: Api, **query: str) -> Any:
    return api.call("GET", "/knowledge/events", ADMIN, query={"project": "falcon", **query})


# ---------------------------------------------------------------- GET /knowledge/events ?cursor=
def test_a_made_up_position_reads_a_page_of_the_callers_project_only(api: Api, knowledge_on: Runtime) -> None:
    curated(knowledge_on, "falcon", "resolve")
    curated(knowledge_on, "elsewhere", "merge")  # another project's row, newer than falcon's
    curated(knowledge_on, "falcon", "review")
    whole = events(api, cursor=NEWEST)
    assert whole.status == 200, whole.body
    assert [e["payload"]["act"] for e in whole.body["data"]["events"]] == ["review", "resolve"]
    assert all(e["payload"]["project"] == "falcon" for e in whole.body["data"]["events"])
    nothing = events(api, cursor=OLDEST)
    assert (nothing.status, nothing.body["data"]) == (200, {"events": [], "next_cursor": None})
    assert events(api, cursor="").body["data"]["events"] == whole.body["data"]["events"]


def test_the_next_cursor_is_the_last_rows_position_and_walks_the_rest(api: Api, knowledge_on: Runtime) -> None:
    for n in range(5):
        curated(knowledge_on, "falcon", f"act_{n}")
    seen: list[str] = []
    cursor = ""
    while True:
        page = events(api, cursor=cursor, limit="2").body["data"]
        seen += [e["payload"]["act"] for e in page["events"]]
        if page["next_cursor"] is None:
            break
        assert re.fullmatch(EVENTS_CURSOR_PATTERN, page["next_cursor"])
        cursor = page["next_cursor"]
    assert seen == [f"act_{n}" for n in reversed(range(5))]


@pytest.mark.parametrize(
    "cursor",
    ["nonsense!", "e30", "x" * 401, "eyJ0IjoiYSIsInIiOiJiIn0", NEWEST + "0", "2026-11-30#" + "F" * 32],
)
def test_a_cursor_outside_the_declared_shape_is_400_naming_it(api: Api, knowledge_on: Runtime, cursor: str) -> None:
    answer = events(api, cursor=cursor)
    assert (answer.status, answer.body["code"]) == (400, "bad_request")
    assert answer.body["message"].startswith("cursor:")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cursor=st.from_regex(EVENTS_CURSOR_PATTERN, fullmatch=True))
def test_every_position_of_the_declared_shape_is_a_page(api: Api, knowledge_on: Runtime, cursor: str) -> None:
    answer = events(api, cursor=cursor)
    assert answer.status == 200, answer.body


# ---------------------------------------------------------------- GET /knowledge/feed ?actions_after=
def action(base: str, n: int) -> Action:
    return Action(
        knowledge_base=base,
        effect_key=f"fgi#krev_{n:02d}#study_revision#v1",
        instance_id="fgi",
        revision_id=f"krev_{n:02d}",
        action_type="study_revision",
        policy_version=1,
        project=base,
        event_id=f"evt_{n}",
        claimed_at=f"2026-11-30T06:{n:02d}:00+00:00",
    )


def test_a_made_up_actions_position_reads_the_callers_knowledge_base_only(api: Api, knowledge_on: Runtime) -> None:
    for n in range(3):
        assert knowledge_on.actions.claim(action("falcon", n))
        assert knowledge_on.actions.claim(action("harbour", 10 + n))  # another base's, newer
    for after in ("~#", "9999#x", "2026-11-30T06:01:00+00:00#fgi#krev_01#study_revision#v1"):
        answer = api.call("GET", "/knowledge/feed", ADMIN, query={"project": "falcon", "actions_after": after})
        assert answer.status == 200, answer.body
        shown = [a["revision_id"] for a in answer.body["data"]["actions"]]
        assert shown and all(r in {"krev_00", "krev_01", "krev_02"} for r in shown), (after, shown)
    older = api.call("GET", "/knowledge/feed", ADMIN, query={"project": "falcon", "actions_after": "0#"})
    assert (older.status, older.body["data"]["actions"]) == (200, [])


@pytest.mark.parametrize("after", ["", "no-separator", "#starts-with-it", "x" * 65 + "#y", "a#" + "b" * 400])
def test_an_actions_position_outside_the_declared_shape_is_400(api: Api, knowledge_on: Runtime, after: str) -> None:
    answer = api.call("GET", "/knowledge/feed", ADMIN, query={"project": "falcon", "actions_after": after})
    assert (answer.status, answer.body["code"]) == (400, "bad_request")
    assert answer.body["message"].startswith("actions_after:")


@settings(max_examples=200, deadline=None)
@given(after=st.from_regex(ACTIONS_CURSOR_PATTERN, fullmatch=True).filter(lambda a: len(a) <= 400))
def test_every_actions_position_of_the_declared_shape_is_a_page(after: str) -> None:
    actions = [action("falcon", n) for n in range(ACTIONS_PAGE + 5)]
    page, _cursor = recent_actions(actions, after)
    cut = tuple(after.split("#", 1))
    assert all((a.claimed_at, a.effect_key) < cut for a in page)


def test_a_position_the_domain_is_handed_unchecked_is_still_refused() -> None:
    with pytest.raises(BadRequest):
        recent_actions([], "no-separator")
