"""POST /knowledge/seed held to the text (issue 13): seeding runs the per-source pass with queueing
on — it "spends model calls" — so each source not yet studied at its logical_content_hash gets a
study mission in the caller's project and its seed receipt as the mission is queued."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge_service.runtime import Runtime
from local_engine.double import Double
from tests.conftest import Api

REF = "falcon"


def seed(api: Api, project: str = REF) -> dict[str, Any]:
    answer = api.call("POST", "/knowledge/seed", query={"project": project})
    assert answer.status == 200, answer.body
    return answer.body["data"]  # type: ignore[no-any-return]


def all_findings(api: Api) -> list[dict[str, Any]]:
    answer = api.call("GET", "/knowledge/changes", query={"project": REF, "status": "all"})
    assert answer.status == 200, answer.body
    return answer.body["data"]["findings"]  # type: ignore[no-any-return]


@pytest.fixture
def queued(knowledge_on: Runtime, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, dict[str, Any]]]:
    """Every mission put on the colony's bus: (project, knowledge base, detail)."""
    seen: list[tuple[str, str, dict[str, Any]]] = []
    put = knowledge_on.missions.queue

    def spy(project: str, knowledge_base: str, detail: dict[str, Any]) -> str:
        seen.append((project, knowledge_base, detail))
        return put(project, knowledge_base, detail)

    monkeypatch.setattr(knowledge_on.missions, "queue", spy)
    return seen


def test_seed_queues_a_study_mission_per_unstudied_source_in_the_callers_project(
    api: Api, knowledge_on: Runtime, forager: Double, queued: list[tuple[str, str, dict[str, Any]]]
) -> None:
    # Given a knowledge base none of whose sources was ever studied
    forager.put_source(REF, "onboarding.md", "Day one.")
    sources = {str(r[0]) for r in forager.state.store.rows("SELECT source_id FROM sources WHERE ref = ?", REF)}

    # When an operator seeds it
    data = seed(api)

    # Then every source is queued for study once, in this project, each with its receipt
    assert data["sources"] == data["studied"] == data["receipts"] == len(data["mission_ids"]) == len(sources)
    assert (data["already_studied"], data["findings"], data["project"]) == (0, len(sources), REF)
    assert {(p, kb) for p, kb, _ in queued} == {(REF, REF)}
    assert {d["source_id"] for _, _, d in queued} == sources
    assert set(knowledge_on.findings.receipts(REF)) == sources
    listed = all_findings(api)
    assert {f["status"] for f in listed} == {"queued"}
    assert {f["mission_id"] for f in listed} == set(data["mission_ids"])
    assert f"{len(sources)} study mission(s) queued in 'falcon' — each spends model calls" in data["message"]


def test_a_second_seed_spends_nothing(
    api: Api, knowledge_on: Runtime, forager: Double, queued: list[tuple[str, str, dict[str, Any]]]
) -> None:
    first = seed(api)
    queued.clear()

    again = seed(api)

    assert (again["studied"], again["mission_ids"], again["receipts"], again["findings"]) == (0, [], 0, 0)
    assert again["already_studied"] == first["sources"]
    assert queued == []


def test_seed_after_a_change_queues_only_the_changed_source(
    api: Api, knowledge_on: Runtime, forager: Double, queued: list[tuple[str, str, dict[str, Any]]]
) -> None:
    forager.put_source(REF, "onboarding.md", "v1")
    first = seed(api)
    queued.clear()
    forager.put_source(REF, "onboarding.md", "v2")

    data = seed(api)

    assert (data["studied"], data["findings"], data["already_studied"]) == (1, 1, first["sources"] - 1)
    ((project, _, detail),) = queued
    changed = forager.state.store.value("SELECT source_id FROM sources WHERE ref = ? AND name = 'onboarding.md'", REF)
    assert (project, detail["source_id"]) == (REF, changed)
    kinds = {f["kind"] for f in all_findings(api) if f["mission_id"] in data["mission_ids"]}
    assert kinds == {"changed"}


def test_seed_does_not_queue_a_finding_an_operator_dismissed(
    api: Api, knowledge_on: Runtime, forager: Double, queued: list[tuple[str, str, dict[str, Any]]]
) -> None:
    # Given a scan's finding an operator decided needs no mission
    forager.put_source(REF, "draft.md", "not worth a study")
    assert api.call("POST", "/knowledge/changes/scan", query={"project": REF}).status == 200
    (draft,) = [f for f in all_findings(api) if f["source_name"] == "draft.md"]
    dismissed = api.call(
        "POST",
        f"/knowledge/changes/{draft['id']}/dismiss",
        query={"project": REF},
        resource="/knowledge/changes/{id}/dismiss",
    )
    assert dismissed.status == 200, dismissed.body

    # When the knowledge base is seeded
    data = seed(api)

    # Then every other source is queued, and the dismissed one is not, and says so
    assert draft["source_id"] not in {d["source_id"] for _, _, d in queued}
    assert data["studied"] == data["sources"] - 1
    assert "1 decided earlier at this content hash and not queued again" in data["message"]
