"""The curation routes: every rule the specification lists, the commercial gate, and the
event log rows each act leaves (never the person's note)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from knowledge_service.domain.commerce import CachedSubscription
from knowledge_service.identity.principal import Permission, ProjectRole
from knowledge_service.models import Subscription, SubscriptionRecord
from knowledge_service.runtime import Runtime
from local_engine.double import Double
from tests import demo
from tests.conftest import ADMIN, Api, principal

LAUNCH = demo.conflict("falcon", "contradiction")
SUPPLIER = demo.conflict("falcon", "duplicate")
MARCH = demo.statement("falcon", "March 3, 2026")
APRIL = demo.statement("falcon", "April 10, 2026")
PARTS = demo.statement("falcon", "Acme Robotics confirmed parts")
ROBERT_R = demo.candidate("falcon", "Robert Smith", "R. Smith")
ROBERT_BOB = demo.candidate("falcon", "Robert Smith", "Bob Smith")
ROBERT = demo.entity("falcon", "Robert Smith")
R_SMITH = demo.entity("falcon", "R. Smith")
BOB = demo.entity("falcon", "Bob Smith")
HARBOUR_ITEM = demo.statement("harbour", "opens at 06:00")
HARBOUR_ENTITY = demo.entity("harbour", "Ingrid Olsen")

OPERATOR = principal("opal", Permission.MANAGE_KNOWLEDGE, roles={"falcon": ProjectRole.OPERATOR})
VIEWER = principal("vic", Permission.MANAGE_KNOWLEDGE, roles={"falcon": ProjectRole.VIEWER})
OWNER = principal("olive", Permission.MANAGE_KNOWLEDGE, owns=frozenset({"colony"}))

ROUTES = {
    "resolve": ("/knowledge/conflicts/{id}/resolve", LAUNCH, {"action": "accept_winner", "winner_id": APRIL}),
    "reopen": ("/knowledge/conflicts/{id}/reopen", SUPPLIER, None),
    "decide": ("/knowledge/duplicates/{id}/decide", ROBERT_R, {"action": "keep_apart"}),
    "unmerge": ("/knowledge/entities/{id}/unmerge", BOB, {}),
    "review": ("/knowledge/items/{id}/review", MARCH, {"action": "mark_reviewed"}),
}


def act(api: Api, route: str, record: str, body: Any = None, who: Any = OPERATOR, project: str = "falcon") -> Any:
    return api.call("POST", route.replace("{id}", record), who, body=body, query={"project": project}, resource=route)


def writes(forager: Double) -> list[dict[str, Any]]:
    return [r for r in forager.requests if r["method"] == "POST"]


def curated(rt: Runtime) -> list[dict[str, Any]]:
    """The knowledge_curated rows, oldest first."""
    return [{"actor": e.actor, **e.payload} for e in reversed(rt.events.recent("knowledge_curated"))]


def subscribe(rt: Runtime, state: Subscription, *capabilities: str) -> None:
    rt.config.save_subscription(SubscriptionRecord(state=state, capabilities=capabilities), "test")
    rt.subscriptions.forget()


# ---------------------------------------------------------------- a full round
def test_resolve_reopen_resolve_each_leaves_its_row_and_never_the_note(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    first = act(api, ROUTES["resolve"][0], LAUNCH,
                {"action": "accept_winner", "winner_id": APRIL, "notes": "  The signed memo wins  "})  # fmt: skip
    assert first.status == 200, first.body
    data = first.body["data"]
    assert (data["status"], data["decision"]["winner_id"], data["decision"]["decided_by"]) == (
        "resolved",
        APRIL,
        "opal",
    )
    assert data["decision"]["notes"] == "The signed memo wins"
    sent = writes(forager)[-1]
    assert sent["body"] == {
        "action": "accept_winner",
        "winner_id": APRIL,
        "notes": "The signed memo wins",
        "actor": "opal",
    }
    again = act(api, ROUTES["resolve"][0], LAUNCH, {"action": "dismiss"})
    assert (again.status, again.body["code"]) == (409, "already_decided")
    reopened = act(api, ROUTES["reopen"][0], LAUNCH)
    assert (reopened.status, reopened.body["data"]["status"], reopened.body["data"]["decision"]) == (200, "open", None)
    assert writes(forager)[-1]["body"] == {"actor": "opal"}
    twice = act(api, ROUTES["reopen"][0], LAUNCH)
    assert (twice.status, twice.body["code"]) == (409, "not_decided")
    second = act(api, ROUTES["resolve"][0], LAUNCH, {"action": "keep_both"})
    assert (second.status, second.body["data"]["decision"]["action"]) == (200, "keep_both")
    assert "notes" not in writes(forager)[-1]["body"] and "winner_id" not in writes(forager)[-1]["body"]
    rows = curated(knowledge_on)
    assert [r["act"] for r in rows] == ["resolve", "reopen", "resolve"]
    assert rows[0] == {"actor": "opal", "act": "resolve", "project": "falcon", "knowledge_base": "falcon",
                        "record": LAUNCH, "chosen": {"action": "accept_winner", "winner_id": APRIL}}  # fmt: skip
    assert all("notes" not in str(r) and "memo" not in str(r) for r in rows)


def test_merge_reads_back_which_was_kept_then_unmerge_restores_it(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    merged = act(api, ROUTES["decide"][0], ROBERT_R, {"action": "merge", "notes": "Same person"})
    assert merged.status == 200, merged.body
    data = merged.body["data"]
    assert (data["merged"], data["duplicate"]["status"], data["duplicate"]["decided_by"]) == (True, "accepted", "opal")
    assert (data["kept"]["entity_id"], data["merged_away"]["entity_id"]) == (ROBERT, R_SMITH)
    gets = [r["path"] for r in forager.requests if r["method"] == "GET"][-2:]
    assert gets == [f"/api/entities/{ROBERT}", f"/api/entities/{R_SMITH}"]  # read back, not predicted
    again = act(api, ROUTES["decide"][0], ROBERT_R, {"action": "keep_apart"})
    assert (again.status, again.body["code"]) == (409, "already_decided")
    restored = act(api, ROUTES["unmerge"][0], R_SMITH, {"notes": "Different people"})
    assert restored.status == 200, restored.body
    assert (restored.body["data"]["restored"]["entity_id"], restored.body["data"]["winner"]["entity_id"]) == (
        R_SMITH,
        ROBERT,
    )
    assert restored.body["data"]["restored"]["status"] == "active"
    not_merged = act(api, ROUTES["unmerge"][0], R_SMITH)
    assert (not_merged.status, not_merged.body["code"]) == (400, "bad_request")
    assert [(r["act"], r["chosen"]) for r in curated(knowledge_on)] == [
        ("merge", {"action": "merge", "kept": ROBERT, "merged_away": R_SMITH}),
        ("unmerge", {"winner": ROBERT}),
    ]


def test_keep_apart_answers_no_sides_and_is_recorded(api: Api, knowledge_on: Runtime) -> None:
    answer = act(api, ROUTES["decide"][0], ROBERT_R, {"action": "keep_apart"})
    assert answer.status == 200
    assert (answer.body["data"]["merged"], answer.body["data"]["kept"], answer.body["data"]["duplicate"]["status"]) == (
        False, None, "rejected")  # fmt: skip
    assert curated(knowledge_on)[-1]["act"] == "keep_apart"


@pytest.mark.parametrize(("action", "status", "review"), [
    ("mark_reviewed", "Disputed", "reviewed"),
    ("reject", "Archived", "rejected"),
    ("restore", "Disputed", "unreviewed"),
])  # fmt: skip
# restore puts the statement back in play: its open disagreement disputes it again
def test_review_answers_the_statements_review(
    api: Api, knowledge_on: Runtime, action: str, status: str, review: str
) -> None:
    answer = act(api, ROUTES["review"][0], MARCH, {"action": action, "notes": "Checked"})
    assert answer.status == 200, answer.body
    assert answer.body["data"] == {"knowledge_id": MARCH, "status": status, "review_status": review,
                                   "reviewed_by": "opal", "reviewed_at": answer.body["data"]["reviewed_at"],
                                   "review_notes": "Checked"}  # fmt: skip
    assert curated(knowledge_on)[-1]["chosen"] == {"action": action}


# ---------------------------------------------------------------- refusals
@pytest.mark.parametrize(
    ("record", "body", "field"),
    [
        (LAUNCH, {"action": "archive_duplicates"}, "action"),  # does not fit a contradiction
        (LAUNCH, {"action": "explode"}, "action"),  # not one FORAGER takes
        (LAUNCH, {"action": "accept_winner"}, "winner_id"),  # without a side
        (LAUNCH, {"action": "accept_winner", "winner_id": PARTS}, "winner_id"),  # not a side
        (LAUNCH, {"action": "keep_both", "winner_id": APRIL}, "winner_id"),
        (LAUNCH, {"action": "accept_winner", "winner_id": "ki_nothex"}, "winner_id"),
        (LAUNCH, {"action": "dismiss", "notes": "x" * 2001}, "notes"),
        (LAUNCH, {"action": "dismiss", "winnerId": APRIL}, "winnerId"),
        ("cf_zz", {"action": "dismiss"}, "id"),
    ],
)
def test_resolve_refusals_are_400_and_nothing_is_sent(
    api: Api, knowledge_on: Runtime, forager: Double, record: str, body: dict[str, Any], field: str
) -> None:
    answer = act(api, ROUTES["resolve"][0], record, body)
    assert (answer.status, answer.body["code"]) == (400, "bad_request"), answer.body
    assert answer.body["message"].startswith(f"{field}:")
    assert writes(forager) == []
    assert curated(knowledge_on) == []


def test_a_note_of_2000_characters_after_trimming_is_taken(api: Api, knowledge_on: Runtime) -> None:
    answer = act(api, ROUTES["resolve"][0], LAUNCH, {"action": "dismiss", "notes": "  " + "n" * 2000 + "  "})
    assert answer.status == 200, answer.body


def test_a_dismissed_duplicate_disagreement_takes_only_its_types_actions(api: Api, knowledge_on: Runtime) -> None:
    assert act(api, ROUTES["reopen"][0], SUPPLIER).status == 200
    wrong = act(api, ROUTES["resolve"][0], SUPPLIER, {"action": "accept_winner", "winner_id": PARTS})
    assert (wrong.status, wrong.body["message"].startswith("action:")) == (400, True)
    assert act(api, ROUTES["resolve"][0], SUPPLIER, {"action": "archive_duplicates"}).status == 200


def test_deciding_an_already_decided_duplicate_is_409(api: Api, knowledge_on: Runtime) -> None:
    answer = act(api, ROUTES["decide"][0], ROBERT_BOB, {"action": "merge"})
    assert (answer.status, answer.body["code"]) == (409, "already_decided")


@pytest.mark.parametrize(
    ("route", "record"),
    [
        (ROUTES["resolve"][0], demo.unknown("cf")),
        (ROUTES["decide"][0], demo.unknown("mc")),
        (ROUTES["unmerge"][0], HARBOUR_ENTITY),
        (ROUTES["review"][0], HARBOUR_ITEM),
    ],
)
def test_another_bases_record_is_404_in_an_unknown_ids_words_and_nothing_changes(
    api: Api, knowledge_on: Runtime, forager: Double, route: str, record: str
) -> None:
    body = {"action": "dismiss"} if "resolve" in route else {"action": "merge"} if "decide" in route else (
        {"action": "reject"} if "review" in route else {})  # fmt: skip
    theirs = act(api, route, record, body)
    unknown = act(api, route, record[: record.index("_") + 1] + "0" * 16, body)
    assert (theirs.status, unknown.status) == (404, 404)
    assert theirs.body["message"] == unknown.body["message"]
    assert writes(forager) == []


@pytest.mark.parametrize("who", [VIEWER, OWNER], ids=["viewer", "role-less-owner"])
@pytest.mark.parametrize("name", sorted(ROUTES))
def test_a_viewer_and_a_role_less_owner_are_403(
    api: Api, knowledge_on: Runtime, forager: Double, who: Any, name: str
) -> None:
    route, record, body = ROUTES[name]
    answer = act(api, route, record, body, who=who)
    assert (answer.status, answer.body["code"]) == (403, "permission_denied")
    assert writes(forager) == []


# ---------------------------------------------------------------- the commercial gate
@pytest.mark.parametrize("name", sorted(ROUTES))
def test_enrolled_without_curate_is_402_before_forager_is_asked_anything(
    api: Api, knowledge_on: Runtime, forager: Double, name: str
) -> None:
    subscribe(knowledge_on, Subscription.ACTIVE)
    before = len(forager.requests)
    route, record, body = ROUTES[name]
    answer = act(api, route, record, {"not": "even read"} if body is not None else None)
    assert (answer.status, answer.body["code"]) == (402, "payment_required")
    assert len(forager.requests) == before


@pytest.mark.parametrize(
    ("state", "capabilities", "status"),
    [
        (Subscription.UNENROLLED, (), 200),
        (Subscription.ACTIVE, ("forager.knowledge.curate",), 200),
        (Subscription.ACTIVE, (), 402),
        (Subscription.LAPSED, (), 402),
    ],
    ids=["unenrolled", "enrolled-with", "enrolled-without", "lapsed"],
)
def test_the_gate_reads_the_subscription_the_operator_set(
    api: Api, knowledge_on: Runtime, state: Subscription, capabilities: tuple[str, ...], status: int
) -> None:
    subscribe(knowledge_on, state, *capabilities)
    assert act(api, ROUTES["review"][0], MARCH, {"action": "mark_reviewed"}).status == status


def test_the_subscription_is_read_once_per_container_within_its_cache(knowledge_on: Runtime) -> None:
    reads: list[int] = []
    now = [0.0]

    def read() -> SubscriptionRecord:
        reads.append(1)
        return knowledge_on.config.subscription()

    cache = CachedSubscription(read, ttl=30, clock=lambda: now[0])
    cache.current()
    cache.current()
    now[0] = 31
    cache.current()
    assert len(reads) == 2
    now[0] = 5  # the clock moved back (the local stack's clock put back to the wall clock): read again
    cache.current()
    assert len(reads) == 3


# ---------------------------------------------------------------- the event log's read
def test_events_page_newest_first_filtered_by_act_and_project(api: Api, knowledge_on: Runtime) -> None:
    act(api, ROUTES["resolve"][0], LAUNCH, {"action": "dismiss"})
    act(api, ROUTES["reopen"][0], LAUNCH)
    act(api, ROUTES["review"][0], MARCH, {"action": "mark_reviewed"})
    answer = api.call("GET", "/knowledge/events", ADMIN, query={"project": "falcon", "limit": "2"})
    assert answer.status == 200, answer.body
    first = answer.body["data"]
    assert [e["payload"]["act"] for e in first["events"]] == ["review", "reopen"]
    rest = api.call("GET", "/knowledge/events", ADMIN, query={"project": "falcon", "cursor": first["next_cursor"]})
    assert [e["payload"]["act"] for e in rest.body["data"]["events"]] == ["resolve"]
    assert rest.body["data"]["next_cursor"] is None
    only = api.call("GET", "/knowledge/events", ADMIN, query={"project": "falcon", "act": "reopen"})
    assert [e["payload"]["act"] for e in only.body["data"]["events"]] == ["reopen"]
    typed = api.call("GET", "/knowledge/events", ADMIN, query={"project": "falcon", "act": "knowledge_curated"})
    assert len(typed.body["data"]["events"]) == 3
    other = api.call("GET", "/knowledge/events", ADMIN, query={"project": "colony-docs"})
    assert other.status == 404  # colony-docs is bound to nothing


@pytest.mark.parametrize("cursor", ["nonsense!", "e30", "x" * 401])
def test_a_cursor_the_log_did_not_give_is_400(api: Api, knowledge_on: Runtime, cursor: str) -> None:
    answer = api.call("GET", "/knowledge/events", ADMIN, query={"project": "falcon", "cursor": cursor})
    assert (answer.status, answer.body["code"]) == (400, "bad_request")


def test_events_take_the_operator_rank(api: Api, knowledge_on: Runtime) -> None:
    assert api.call("GET", "/knowledge/events", VIEWER, query={"project": "falcon"}).status == 403
    reader = principal("rita", Permission.READ_KNOWLEDGE, roles={"falcon": ProjectRole.ADMIN})
    assert api.call("GET", "/knowledge/events", reader, query={"project": "falcon"}).status == 403


def test_binding_and_unbinding_a_project_leave_their_rows(api: Api, knowledge_on: Runtime) -> None:
    bound = api.call("POST", "/knowledge/project-map", body={"project": "colony-docs", "knowledge_base": "harbour"})
    assert bound.status == 200, bound.body
    rows = api.call("GET", "/knowledge/events", ADMIN, query={"project": "colony-docs"}).body["data"]["events"]
    assert [(r["event_type"], r["payload"]) for r in rows] == [
        ("knowledge_project_bound", {"project": "colony-docs", "knowledge_base": "harbour"})
    ]
    assert (
        api.call("POST", "/knowledge/project-map", body={"project": "colony-docs", "knowledge_base": ""}).status == 200
    )
    (row,) = knowledge_on.events.recent("knowledge_project_unbound")
    assert (row.actor, row.payload) == ("ada", {"project": "colony-docs"})


# ---------------------------------------------------------------- a note's rule, declared exactly
_EDGE = st.text(alphabet=" \t\n\r\f\v\u00a0\u2003\u3000x", max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    note=st.builds(
        lambda head, size, fill, tail: head + fill * size + tail,
        _EDGE,
        st.integers(min_value=1995, max_value=2005),
        st.sampled_from(["n", " ", "\u00a0", "é"]),
        _EDGE,
    )
)
def test_a_note_is_taken_exactly_when_the_declared_pattern_matches(note: str) -> None:
    from pydantic import ValidationError

    from knowledge_service.domain.curation import NOTES_PATTERN, ResolveRequest

    declared = re.search(NOTES_PATTERN, note) is not None
    try:
        ResolveRequest.model_validate({"action": "dismiss", "notes": note})
        taken = True
    except ValidationError:
        taken = False
    assert taken == declared, repr(note[:8] + "…" + note[-8:])


def test_a_note_padded_with_a_no_break_space_is_not_trimmed_of_it(api: Api, knowledge_on: Runtime) -> None:
    answer = act(api, ROUTES["resolve"][0], LAUNCH, {"action": "dismiss", "notes": "\u00a0" + "n" * 2000})
    assert (answer.status, answer.body["message"].startswith("notes:")) == (400, True)


def test_deciding_a_duplicate_kept_apart_again_is_409_and_forager_is_asked_nothing(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    assert act(api, ROUTES["decide"][0], ROBERT_R, {"action": "keep_apart"}).status == 200
    before = writes(forager)
    for action in ("merge", "keep_apart"):
        answer = act(api, ROUTES["decide"][0], ROBERT_R, {"action": action})
        assert (answer.status, answer.body["code"]) == (409, "already_decided"), answer.raw
    assert writes(forager) == before
    assert [row["act"] for row in curated(knowledge_on)].count("keep_apart") == 1
