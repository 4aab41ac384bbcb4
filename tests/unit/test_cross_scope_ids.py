"""Every by-id route × an id from another knowledge base → not_found, byte-identical to an id
that does not exist.

Generated from the route table: each ``{id}`` route is called, in the scope of project
falcon (FORAGER's falcon), once with a real record of another knowledge base (harbour,
which project colony-docs reads) and once with a well-formed id that names nothing. The
two answers must be the same bytes. A record kind's list route is where a real id of
another base is found; a by-id route of a kind not in ``LISTS`` fails here until it is.
"""

from __future__ import annotations

from typing import Any

import pytest

from devstack.samples import SAMPLE_IDS, request_for
from knowledge_service.edge.catalog import RouteInfo, knowledge_routes
from knowledge_service.runtime import Runtime
from knowledge_service.storage.dead_letter_store import DeadLetter
from local_engine.double import Double
from local_engine.exports import jobs as sim_exports
from tests.conftest import Api

BY_ID = [r for r in knowledge_routes() if "{id}" in r.path]
OTHER = "colony-docs"  # reads harbour in these tests
LISTS = {  # record kind -> (the list route that shows its ids, the list's key, the id field)
    "items": ("/knowledge/statements", "items", "knowledge_id"),
    "entities": ("/knowledge/entities", "entities", "entity_id"),
    "sources": ("/knowledge/sources", "sources", "source_id"),
    "changes": ("/knowledge/changes", "findings", "id"),
    "jobs": ("/knowledge/jobs", "jobs", "job_id"),
    "conflicts": ("/knowledge/conflicts", "conflicts", "conflict_id"),
    "duplicates": ("/knowledge/duplicates", "duplicates", "candidate_id"),
    "exports": ("/knowledge/exports", "exports", "export_id"),
    "feed": ("/knowledge/feed/dead-letters", "entries", "dead_letter_id"),  # dead letters
}
WITH_STATUS = {"changes", "conflicts", "duplicates"}  # lists that hide decided records by default
OWN_ANSWER = {"/knowledge/exports/{id}/download": 409}  # the first download asks the verifier: not_ready


def kind(route: RouteInfo) -> str:
    return route.path.split("/")[2]


def an_id_of_another_base(api: Api, record_kind: str) -> str:
    path, key, field = LISTS[record_kind]
    answer = api.call(
        "GET", path, query={"project": OTHER, "status": "all"} if record_kind in WITH_STATUS else {"project": OTHER}
    )
    records: list[dict[str, Any]] = answer.body["data"][key]
    assert records, f"harbour has no {record_kind} to try: {answer.raw}"
    return str(records[0][field])


@pytest.fixture
def two_bases(api: Api, knowledge_on: Runtime, forager: Double) -> Runtime:
    knowledge_on.config.bind(OTHER, "harbour", "test")
    scanned = api.call("POST", "/knowledge/changes/scan", query={"project": OTHER})  # findings of harbour
    assert scanned.status == 200, scanned.raw
    sim_exports.book(forager.state).build_seconds = 0.0
    exported = api.call("POST", "/knowledge/exports", query={"project": OTHER}, body={"format": "jsonl"})
    assert exported.status == 200, exported.raw  # an export of harbour
    knowledge_on.dead_letters.file(harbour_dead_letter())  # a dead letter of harbour, filed under colony-docs
    return knowledge_on


def harbour_dead_letter() -> DeadLetter:
    at = "2026-11-30T06:00:00+00:00"
    return DeadLetter(
        knowledge_base="harbour",
        dead_letter_id="dl_" + "1" * 20,
        error_class="header_invalid",
        project=OTHER,
        envelope="{}",
        schema_version="envelope.schema.json@2026.09.1",
        registry_version="2026.09.1",
        first_seen_at=at,
        last_attempt_at=at,
        dead_lettered_at=at,
    )


def test_every_by_id_route_is_covered() -> None:
    assert BY_ID, "the route table has by-id routes"
    assert {kind(r) for r in BY_ID} <= set(LISTS), "a new record kind needs its list in LISTS"


@pytest.mark.parametrize("route", BY_ID, ids=lambda r: f"{r.method} {r.path}")
def test_another_bases_id_answers_exactly_as_a_missing_one(api: Api, two_bases: Runtime, route: RouteInfo) -> None:
    other = an_id_of_another_base(api, kind(route))
    missing = SAMPLE_IDS[kind(route)]
    answers = []
    for record_id in (other, missing):
        path = route.path.replace("{id}", record_id)
        answers.append(
            api.call(
                route.method,
                path,
                query={"project": "falcon"},
                resource=route.path,
                body=(request_for(route)[1] or "{}") if route.method == "POST" else None,
                headers={"Content-Type": "application/json"},
            )
        )
    from_other_base, never_existed = answers
    if route.method == "GET":  # the record is real: its own project reads it
        own = api.call("GET", route.path.replace("{id}", other), query={"project": OTHER}, resource=route.path)
        assert own.status == OWN_ANSWER.get(route.path, 200), own.raw
    assert from_other_base.status == 404, from_other_base.raw
    assert from_other_base.raw == never_existed.raw
    assert from_other_base.body["code"] == "not_found"


# ---------------------------------------------------------------------- the nets (issue 25)
@pytest.fixture
def engine_mixes_in_harbour(monkeypatch: pytest.MonkeyPatch) -> None:
    """FORAGER answering falcon's conflict and export lists with harbour's rows mixed in: the
    edge trusts each row's ``project_ref``, never the list it came in."""
    from knowledge_service.upstream.client import ForagerClient

    real_conflicts, real_exports = ForagerClient.conflicts, ForagerClient.exports

    def conflicts(self: ForagerClient, project_ref: str, status: str) -> Any:
        answer = real_conflicts(self, project_ref, status)
        if project_ref == "falcon":
            answer.conflicts.extend(real_conflicts(self, "harbour", status).conflicts)
        return answer

    def exports(self: ForagerClient, project_ref: str) -> Any:
        answer = real_exports(self, project_ref)
        if project_ref == "falcon":
            answer.exports.extend(real_exports(self, "harbour").exports)
        return answer

    monkeypatch.setattr(ForagerClient, "conflicts", conflicts)
    monkeypatch.setattr(ForagerClient, "exports", exports)


@pytest.mark.parametrize("act", ["resolve", "reopen"])
def test_a_conflict_listed_under_this_base_but_of_another_is_missing_byte_for_byte(
    api: Api, two_bases: Runtime, forager: Double, engine_mixes_in_harbour: None, act: str
) -> None:
    listed = api.call("GET", "/knowledge/conflicts", query={"project": OTHER, "status": "all"}).body["data"]
    theirs = [c["conflict_id"] for c in listed["conflicts"]]
    assert theirs, listed
    route = f"/knowledge/conflicts/{{id}}/{act}"
    body = {"action": "dismiss"} if act == "resolve" else None
    before = [r for r in forager.requests if r["method"] == "POST"]
    answers = [
        api.call("POST", route.replace("{id}", i), body=body, query={"project": "falcon"}, resource=route)
        for i in (theirs[0], SAMPLE_IDS["conflicts"])
    ]
    assert answers[0].status == 404, answers[0].raw
    assert answers[0].raw == answers[1].raw
    assert [r for r in forager.requests if r["method"] == "POST"] == before


def test_a_conflict_of_another_base_in_the_engines_list_is_not_listed(
    api: Api, two_bases: Runtime, engine_mixes_in_harbour: None
) -> None:
    listed = api.call("GET", "/knowledge/conflicts", query={"project": OTHER, "status": "all"}).body["data"]
    harbour = {c["conflict_id"] for c in listed["conflicts"]}
    assert harbour
    falcon = api.call("GET", "/knowledge/conflicts", query={"project": "falcon", "status": "all"}).body["data"]
    assert falcon["conflicts"] and not harbour & {c["conflict_id"] for c in falcon["conflicts"]}
    assert {c["project_ref"] for c in falcon["conflicts"]} == {"falcon"}


def test_an_export_of_another_base_in_the_engines_history_is_not_listed(
    api: Api, two_bases: Runtime, engine_mixes_in_harbour: None
) -> None:
    harbour = {
        e["export_id"] for e in api.call("GET", "/knowledge/exports", query={"project": OTHER}).body["data"]["exports"]
    }
    assert harbour
    listed = api.call("GET", "/knowledge/exports", query={"project": "falcon"})
    assert listed.status == 200, listed.raw
    assert {e["export_id"] for e in listed.body["data"]["exports"]}.isdisjoint(harbour)
    assert all(e["project_ref"] == "falcon" for e in listed.body["data"]["exports"])
