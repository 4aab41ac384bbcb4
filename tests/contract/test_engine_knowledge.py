"""The local engine's knowledge beyond sentences, on real documents, over loopback.

Disagreements, people named two ways, merges and their undoing, supersession: each arises from
markdown files the test writes, read through the engine's pipeline like a person's folder, and
is then acted on through the contract's curation routes. Nothing leans on the demo bases.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local_engine.double import Double, start_double
from tests import secrets

pytestmark = pytest.mark.contract

TOKEN = "engine-knowledge-token"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Double]:
    with start_double(port=0, control_port=0, token=TOKEN, data_dir=tmp_path_factory.mktemp("engine")) as sim:
        secrets.register(sim.token)
        yield sim


@pytest.fixture
def api(engine: Double) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=engine.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10) as client:
        yield client


def post(api: httpx.Client, path: str, body: Any, status: int = 200) -> Any:
    answer = api.post(path, json=body, headers={"Idempotency-Key": os.urandom(8).hex()})
    assert answer.status_code == status or (status == 200 and answer.status_code in (201, 202)), answer.text
    return answer.json()


def base_with(api: httpx.Client, folder: Path, files: dict[str, str]) -> str:
    """A new knowledge base that has read ``files`` (name -> markdown) from ``folder``."""
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    ref = str(post(api, "/api/projects", {"name": folder.name})["project_ref"])
    job = post(api, f"/api/projects/{ref}/jobs", {"paths": [str(folder)]})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        seen = api.get(f"/api/projects/{ref}/jobs/{job['job_id']}").json()
        if seen["terminal"]:
            assert seen["status"] == "completed", seen
            return ref
        time.sleep(0.02)
    raise AssertionError("the job did not finish")


def dated(date: str, body: str) -> str:
    return f"---\ndocument_date: {date}\n---\n# Notes\n\n{body}\n"


PLAN = "The opening day for the Riverside Library is May 4, 2026."
NOTICE = "Riverside Library opening day: June 8, 2026, after the roof repair."


def search(api: httpx.Client, ref: str, q: str, historical: bool = False) -> list[str]:
    params = {"q": q, "include_historical": "true" if historical else "false"}
    return [h["statement"] for h in api.get(f"/api/projects/{ref}/search", params=params).json()["hits"]]


def test_two_files_that_disagree_on_a_date_are_one_open_contradiction_quoting_both(
    api: httpx.Client, tmp_path: Path
) -> None:
    ref = base_with(
        api,
        tmp_path / "library",
        {"plan.md": dated("2026-01-10", PLAN), "notice.md": dated("2026-03-02", NOTICE)},
    )
    (conflict,) = api.get(f"/api/projects/{ref}/conflicts").json()["conflicts"]
    assert (conflict["type"], conflict["status"], conflict["title"]) == (
        "contradiction",
        "open",
        "Riverside Library opening day",
    )
    sides = {side["statement"]: side for side in conflict["sides"]}
    assert set(sides) == {PLAN, NOTICE}
    texts = {"plan.md": (tmp_path / "library" / "plan.md").read_text(), "notice.md": None}
    texts["notice.md"] = (tmp_path / "library" / "notice.md").read_text()
    for side in conflict["sides"]:  # each side's evidence is the words of its own file
        (link,) = api.get(f"/api/knowledge/{side['knowledge_id']}/evidence").json()["evidence"]
        assert link["excerpt"] == side["statement"] and link["excerpt"] in texts[link["source_name"].split("/")[-1]]
    # the newer document is the suggested winner; the other side is disputed while it is open
    assert conflict["suggested_winner_id"] == sides[NOTICE]["knowledge_id"]
    assert (sides[PLAN]["status"], sides[NOTICE]["status"]) == ("Disputed", "Active")
    assert {s["name"] for s in conflict["sources"]} == {"library/plan.md", "library/notice.md"}

    # accepting the winner archives the other: served only with include_historical
    resolved = post(
        api,
        f"/api/conflicts/{conflict['conflict_id']}/resolve",
        {"action": "accept_winner", "winner_id": sides[NOTICE]["knowledge_id"], "actor": "ada"},
    )
    assert resolved["status"] == "resolved"
    assert search(api, ref, "Riverside opening day") == [NOTICE]
    assert set(search(api, ref, "Riverside opening day", historical=True)) == {PLAN, NOTICE}
    # reopened, it is disputed again; a rejected statement is never served
    post(api, f"/api/conflicts/{conflict['conflict_id']}/reopen", {"actor": "ada"})
    assert api.get(f"/api/knowledge/{sides[PLAN]['knowledge_id']}").json()["status"] == "Disputed"
    post(api, f"/api/knowledge/{sides[PLAN]['knowledge_id']}/review", {"action": "reject", "actor": "ada"})
    assert search(api, ref, "Riverside opening day", historical=True) == [NOTICE]


def test_the_same_person_named_two_ways_is_one_entity_and_an_initial_a_pending_candidate(
    api: httpx.Client, tmp_path: Path
) -> None:
    ref = base_with(
        api,
        tmp_path / "shifts",
        {
            "team.md": dated("2026-02-01", "Bill Turner leads the night shift at the depot."),
            "roster.md": dated("2026-02-03", "The night shift roster is kept by William Turner."),
            "contacts.md": dated("2026-02-04", "Questions go to W. Turner (wturner@example.org) on weekdays."),
        },
    )
    people = api.get(f"/api/projects/{ref}/people", params={"type": "person"}).json()
    assert {(p["name"], tuple(p["aliases"])) for p in people["entities"]} == {
        ("William Turner", ("Bill Turner",)),
        ("W. Turner", ("wturner@example.org",)),
    }
    william = next(p for p in people["entities"] if p["name"] == "William Turner")
    assert (william["mention_count"], william["merged_count"], william["source_count"]) == (2, 1, 2)
    page = api.get(f"/api/entities/{william['entity_id']}").json()
    assert [m["merged_name"] for m in page["merge_history"]] == ["Bill Turner"]
    text = (tmp_path / "shifts" / "team.md").read_text()
    for mention in page["mentions"]:  # every mention is the exact text at its offsets
        if mention["source_name"].endswith("team.md"):
            assert text[mention["char_start"] : mention["char_end"]] == mention["text"] == "Bill Turner"

    (candidate,) = api.get(f"/api/projects/{ref}/duplicates").json()["duplicates"]
    assert candidate["reason"] == 'Initial "W." matches William Turner' and candidate["status"] == "pending"

    # merge, and unmerge: a round trip, and the pair is never suggested again
    decided = post(api, f"/api/duplicates/{candidate['candidate_id']}/decide", {"action": "merge", "actor": "ada"})
    assert decided["duplicate"]["status"] == "accepted"
    w_turner = next(side for side in (candidate["entity_a"], candidate["entity_b"]) if side["name"] == "W. Turner")
    merged = api.get(f"/api/entities/{w_turner['entity_id']}").json()
    assert merged["merged_into"] == william["entity_id"]
    named = api.get(f"/api/projects/{ref}/entities", params={"name": "W. Turner"}).json()["entities"]
    assert [(e["name"], e["matched"]) for e in named] == [("William Turner", "W. Turner")]
    after = api.get(f"/api/entities/{william['entity_id']}").json()
    assert after["entity"]["mention_count"] == 3 and "wturner@example.org" in after["attributes"]["emails"]

    back = post(api, f"/api/entities/{w_turner['entity_id']}/unmerge", {"actor": "ada"})
    assert (back["restored"]["status"], back["winner"]["name"]) == ("active", "William Turner")
    assert api.get(f"/api/entities/{w_turner['entity_id']}").json()["merged_into"] is None
    assert api.get(f"/api/projects/{ref}/duplicates").json()["pending"] == 0
    post(api, f"/api/duplicates/{candidate['candidate_id']}/decide", {"action": "merge", "actor": "ada"}, status=409)


def test_a_statement_in_two_files_is_one_statement_with_both_as_evidence(api: httpx.Client, tmp_path: Path) -> None:
    said = "The depot gate is locked at ten every night."
    ref = base_with(api, tmp_path / "twice", {"a.md": dated("2026-01-01", said), "b.md": dated("2026-01-02", said)})
    (item,) = [i for i in api.get(f"/api/projects/{ref}/statements").json()["items"] if i["statement"] == said]
    links = api.get(f"/api/knowledge/{item['knowledge_id']}/evidence").json()["evidence"]
    assert sorted(link["source_name"] for link in links) == ["twice/a.md", "twice/b.md"]
    assert all(link["excerpt"] == said and not link["missing_excerpt"] for link in links)


def test_a_document_that_supersedes_another_makes_its_statements_historical(api: httpx.Client, tmp_path: Path) -> None:
    old = "The canteen serves lunch from noon in the old building."
    new = "The canteen serves lunch from half past eleven in the new wing."
    ref = base_with(
        api,
        tmp_path / "canteen",
        {
            "canteen-2025.md": dated("2025-01-01", old),
            "canteen.md": "---\ndocument_date: 2026-01-01\nsupersedes: canteen-2025.md\n---\n# Canteen\n\n" + new,
        },
    )
    assert search(api, ref, "canteen lunch") == [new]
    assert set(search(api, ref, "canteen lunch", historical=True)) == {old, new}
    sources = {s["name"]: s for s in api.get(f"/api/projects/{ref}/sources").json()["sources"]}
    assert sources["canteen/canteen-2025.md"]["superseded_by"] == sources["canteen/canteen.md"]["source_id"]


def test_a_copy_is_a_duplicate_disagreement_naming_both_files(api: httpx.Client, tmp_path: Path) -> None:
    text = dated("2026-01-01", "Visitors sign in at the front desk before entering the depot.")
    ref = base_with(api, tmp_path / "copies", {"visitors.md": text, "visitors-old.md": text})
    (conflict,) = api.get(f"/api/projects/{ref}/conflicts").json()["conflicts"]
    assert conflict["type"] == "duplicate"
    assert {s["name"] for s in conflict["sources"]} == {"copies/visitors.md", "copies/visitors-old.md"}
    assert [side["statement"] for side in conflict["sides"]] == [
        "Visitors sign in at the front desk before entering the depot."
    ]


def test_an_ingestion_publishes_a_revision_that_moves_only_when_the_knowledge_does(
    api: httpx.Client, tmp_path: Path
) -> None:
    ref = base_with(api, tmp_path / "feed", {"rules.md": dated("2026-01-01", "Hard hats are worn in the yard.")})
    envelopes = api.get(f"/api/projects/{ref}/feed", params={"after": 0}).json()["envelopes"]
    (published,) = [e for e in envelopes if e["event_type"] == "knowledge.revision.published"]
    assert published["payload"]["record_count"] == 1 and published["payload"]["publication_status"] == "complete"
    head = api.get(f"/api/projects/{ref}/revisions/head").json()
    assert head["revision_id"] == published["payload"]["revision_id"]


def test_two_files_naming_a_different_person_for_the_same_claim_are_a_contradiction(
    api: httpx.Client, tmp_path: Path
) -> None:
    older = "The Harbour Project safety officer is Maria Jensen."
    newer = "The Harbour Project safety officer is Tomas Berg, from this spring."
    ref = base_with(
        api, tmp_path / "officers", {"old.md": dated("2025-05-01", older), "new.md": dated("2026-04-01", newer)}
    )
    (conflict,) = api.get(f"/api/projects/{ref}/conflicts").json()["conflicts"]
    assert conflict["type"] == "contradiction" and {s["statement"] for s in conflict["sides"]} == {older, newer}
    winner = next(s for s in conflict["sides"] if s["knowledge_id"] == conflict["suggested_winner_id"])
    assert winner["statement"] == newer


def test_a_name_no_document_says_any_more_leaves_no_row_naming_it(api: httpx.Client, tmp_path: Path) -> None:
    folder = tmp_path / "names"
    ref = base_with(
        api,
        folder,
        {
            "a.md": dated("2026-01-01", "Bob Carter opens the depot on Mondays."),
            "b.md": dated("2026-01-02", "Robert Carter signs the depot's delivery notes."),
        },
    )
    assert api.get(f"/api/projects/{ref}/duplicates", params={"status": "all"}).json()["duplicates"]
    (folder / "a.md").write_text(dated("2026-01-03", "The depot opens on Mondays at eight."), encoding="utf-8")
    job = post(api, f"/api/projects/{ref}/jobs", {"paths": [str(folder)]})
    deadline = time.monotonic() + 30
    while not api.get(f"/api/projects/{ref}/jobs/{job['job_id']}").json()["terminal"]:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    every = api.get(f"/api/projects/{ref}/duplicates", params={"status": "all"})
    assert every.status_code == 200 and every.json()["duplicates"] == []  # Bob Carter is gone, and so is the pair
    people = api.get(f"/api/projects/{ref}/people").json()["entities"]
    assert [(p["name"], p["aliases"], p["mention_count"]) for p in people] == [("Robert Carter", [], 1)]
