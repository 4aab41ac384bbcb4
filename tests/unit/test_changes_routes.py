"""Knowledge changes: GET /knowledge/changes, scan, queue, dismiss, seed — through the routes."""

from __future__ import annotations

from typing import Any

from knowledge_service.identity.principal import Permission, ProjectRole
from knowledge_service.runtime import Runtime
from local_engine.double import Double
from tests.conftest import Api, principal

REF = "falcon"


def scan(api: Api, project: str = REF) -> Any:
    answer = api.call("POST", "/knowledge/changes/scan", query={"project": project})
    assert answer.status == 200, answer.body
    return answer.body["data"]


def findings(api: Api, status: str = "open", project: str = REF) -> list[dict[str, Any]]:
    answer = api.call("GET", "/knowledge/changes", query={"project": project, "status": status})
    assert answer.status == 200, answer.body
    return answer.body["data"]["findings"]  # type: ignore[no-any-return]


def decide(api: Api, finding: str, verb: str, caller: Any = None) -> Any:
    extra = {} if caller is None else {"principal": caller}
    return api.call(
        "POST",
        f"/knowledge/changes/{finding}/{verb}",
        query={"project": REF},
        resource=f"/knowledge/changes/{{id}}/{verb}",
        **extra,
    )


def one_finding(api: Api, forager: Double, name: str = "onboarding.md") -> dict[str, Any]:
    forager.put_source(REF, name, "# Onboarding\nDay one.")
    scan(api)
    (found,) = [f for f in findings(api) if f["source_name"] == name]
    return found


def test_scan_files_a_new_finding_per_unstudied_source_and_queues_nothing(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    data = scan(api)
    listed = findings(api)
    assert data["new_findings"] == data["sources"] == len(listed) > 0
    assert {f["kind"] for f in listed} == {"new"}
    assert {(f["status"], f["mission_id"], f["previous_hash"]) for f in listed} == {("open", None, None)}
    assert {f["project_ref"] for f in listed} == {REF}  # the knowledge base


def test_after_seed_a_changed_source_is_a_changed_finding(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    forager.put_source(REF, "onboarding.md", "v1")
    seeded = api.call("POST", "/knowledge/seed", query={"project": REF})
    assert seeded.status == 200, seeded.body
    assert scan(api)["new_findings"] == 0
    before = dict(forager.state.store.rows("SELECT name, logical_content_hash FROM sources WHERE ref = ?", REF))

    forager.put_source(REF, "onboarding.md", "v2")
    assert scan(api)["new_findings"] == 1

    (changed,) = findings(api)
    assert (changed["kind"], changed["source_name"]) == ("changed", "onboarding.md")
    assert changed["previous_hash"] == before["onboarding.md"] != changed["current_hash"]


def test_a_second_scan_files_nothing_twice(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    scan(api)
    assert scan(api)["new_findings"] == 0


def test_queue_turns_a_finding_into_a_mission(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    found = one_finding(api, forager)

    answer = decide(api, found["id"], "queue")

    assert answer.status == 200, answer.body
    assert answer.body["data"]["status"] == "queued"
    assert answer.body["data"]["mission_id"]
    assert found["id"] not in {f["id"] for f in findings(api)}
    assert found["id"] in {f["id"] for f in findings(api, "all")}  # a decided finding stays


def test_dismiss_records_that_it_needs_none(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    found = one_finding(api, forager)
    answer = decide(api, found["id"], "dismiss")
    assert answer.status == 200, answer.body
    assert (answer.body["data"]["status"], answer.body["data"]["mission_id"]) == ("dismissed", None)
    assert [f["status"] for f in findings(api, "all") if f["id"] == found["id"]] == ["dismissed"]


def test_queue_or_dismiss_of_a_decided_finding_is_already_decided(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    found = one_finding(api, forager)
    decide(api, found["id"], "dismiss")

    for verb in ("queue", "dismiss"):
        answer = decide(api, found["id"], verb)
        assert (answer.status, answer.body["code"]) == (409, "already_decided"), verb


def test_queue_needs_manage_knowledge(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    found = one_finding(api, forager)
    reader = principal("rita", Permission.READ_KNOWLEDGE, roles={REF: ProjectRole.ADMIN}, owns=frozenset({"colony"}))

    answer = decide(api, found["id"], "queue", reader)

    assert (answer.status, answer.body["code"]) == (403, "permission_denied")
    assert findings(api)[0]["status"] == "open"


def test_a_finding_of_another_knowledge_base_is_not_found_like_a_missing_id(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    knowledge_on.config.bind("colony-docs", "harbour", "test")
    scan(api, "colony-docs")
    theirs = findings(api, project="colony-docs")[0]["id"]
    missing = "0" * len(theirs)

    for verb in ("queue", "dismiss", "queue"):
        other = decide(api, theirs, verb)
        absent = decide(api, missing, verb)
        assert (other.status, other.body["code"]) == (404, "not_found")
        assert other.raw.replace(theirs, missing) == absent.raw == other.raw
    assert findings(api, project="colony-docs")[0]["status"] == "open"


def test_two_projects_on_one_knowledge_base_share_findings(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    knowledge_on.config.bind("colony-docs", REF, "test")
    found = one_finding(api, forager)
    assert found["id"] in {f["id"] for f in findings(api, project="colony-docs")}


def test_open_changes_on_status_counts_open_findings(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    found = one_finding(api, forager)
    open_now = len(findings(api))

    def open_changes() -> int:
        answer = api.call("GET", "/knowledge/status")
        assert answer.status == 200, answer.body
        return answer.body["data"]["open_changes"]  # type: ignore[no-any-return]

    assert open_changes() == open_now
    decide(api, found["id"], "dismiss")
    assert open_changes() == open_now - 1


def test_changes_queue_and_dismiss_answer_503_while_forager_is_down_and_change_nothing(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    """The specification: every route but GET /knowledge/status answers 503 while knowledge is down."""
    found = one_finding(api, forager)
    forager.set_fault("down")
    try:
        listed = api.call("GET", "/knowledge/changes", query={"project": REF, "status": "all"})
        queued = decide(api, found["id"], "queue")
        dismissed = decide(api, found["id"], "dismiss")
    finally:
        forager.clear_faults()
    for answer in (listed, queued, dismissed):
        assert (answer.status, answer.body["code"]) == (503, "knowledge_unreachable"), answer.raw
    assert [f["status"] for f in findings(api, "all") if f["id"] == found["id"]] == ["open"]


def test_changes_answer_503_while_knowledge_is_off(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    found = one_finding(api, forager)
    assert api.call("POST", "/settings", body={"knowledge_enabled": False}).status == 200
    for answer in (
        api.call("GET", "/knowledge/changes", query={"project": REF}),
        decide(api, found["id"], "queue"),
        decide(api, found["id"], "dismiss"),
    ):
        assert (answer.status, answer.body["code"]) == (503, "knowledge_disabled"), answer.raw
