"""The read routes' documented bounds and defaults, held over the engine's API on files the tests
write (issue 57: a mutation round found them unheld; docs/upstream-contract.md, "Reads"): a
search's ``limit`` 1–50 (20 unless asked), a retrieval's ``top_k`` 1–50 (8 unless asked), the
statements' ``page_size`` 1–100 (25 unless asked) and ``page`` from 1, the people's ``page_size``
1–100 (50 unless asked); a bound passed is a ``400``; each answer is a ``200``; ``rendered``
numbers its statements from 1."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from local_engine import Engine, start_engine
from tests import secrets

TOKEN = "reads-rules-token"
COUNT = 60
"""Statements in the base, each naming the crane: more than any default page or top_k."""
PEOPLE = 55
"""People the base names, one a file: more than the people list's default page."""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    with start_engine(port=0, token=TOKEN, data_dir=tmp_path_factory.mktemp("engine")) as sim:
        secrets.register(sim.token)
        yield sim


@pytest.fixture(scope="module")
def api(engine: Engine) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=engine.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def ref(api: httpx.Client, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A base of COUNT statements about the crane, and PEOPLE people each named in a file."""
    folder = tmp_path_factory.mktemp("quay")
    lines = [f"The harbour crane lifted {n + 2} crates of timber onto pier {n + 1} today." for n in range(COUNT)]
    (folder / "crane.md").write_text("# Crane\n\n" + "\n\n".join(lines) + "\n")
    for n in range(PEOPLE):
        tail = chr(97 + n % 26) + chr(97 + n // 26)
        said = f"Ingrid{tail} Olsen{tail} approved the night shift's rota."
        (folder / f"person-{n:02}.md").write_text(f"# Crew\n\n{said}\n")
    answer = api.post("/api/projects", json={"name": "quay"}, headers={"Idempotency-Key": os.urandom(8).hex()})
    made = str(answer.json()["project_ref"])
    job = api.post(
        f"/api/projects/{made}/jobs", json={"paths": [str(folder)]}, headers={"Idempotency-Key": os.urandom(8).hex()}
    ).json()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        seen = api.get(f"/api/projects/{made}/jobs/{job['job_id']}").json()
        if seen["terminal"]:
            assert seen["status"] == "completed", seen
            return made
        time.sleep(0.05)
    raise AssertionError("the job did not finish")


def _get(api: httpx.Client, path: str, **query: Any) -> httpx.Response:
    return api.get(path, params=query)


def _retrieve(api: httpx.Client, ref: str, body: dict[str, Any]) -> httpx.Response:
    return api.post(f"/api/projects/{ref}/retrieve", json=body, headers={"Idempotency-Key": os.urandom(8).hex()})


def _refused(answer: httpx.Response, name: str) -> None:
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "bad_request" and name in error["message"]


def test_search_answers_20_hits_unless_asked_and_takes_a_limit_of_1_to_50(api: httpx.Client, ref: str) -> None:
    path = f"/api/projects/{ref}/search"
    answer = _get(api, path, q="crane timber")
    assert answer.status_code == 200 and len(answer.json()["hits"]) == 20
    for limit in (1, 50):
        answer = _get(api, path, q="crane timber", limit=limit)
        assert answer.status_code == 200 and len(answer.json()["hits"]) == limit
    for limit in (0, 51):
        _refused(_get(api, path, q="crane timber", limit=limit), "limit")


def test_retrieve_answers_8_items_unless_asked_and_takes_a_top_k_of_1_to_50(api: httpx.Client, ref: str) -> None:
    answer = _retrieve(api, ref, {"query": "crane timber"})
    assert answer.status_code == 200 and len(answer.json()["items"]) == 8
    for asked in (1, 50):
        answer = _retrieve(api, ref, {"query": "crane timber", "top_k": asked})
        assert answer.status_code == 200 and len(answer.json()["items"]) == asked
    for refused in (0, 51, "8"):
        _refused(_retrieve(api, ref, {"query": "crane timber", "top_k": refused}), "top_k")
    _refused(_retrieve(api, ref, {"query": "  "}), "query")
    _refused(_retrieve(api, ref, {"query": "crane", "limit": 3}), "limit")  # an unknown field, named


def test_rendered_numbers_the_statements_from_one(api: httpx.Client, ref: str) -> None:
    answer = _retrieve(api, ref, {"query": "crane timber", "top_k": 3}).json()
    numbered = [line.split("]")[0] + "]" for line in answer["rendered"].split("\n") if line.startswith("[")]
    assert numbered == ["[1]", "[2]", "[3]"]
    assert answer["rendered"].startswith("Knowledge for: crane timber\n\n") and answer["rendered"].endswith('today."\n')


def test_statements_page_25_unless_asked_a_page_size_of_1_to_100_and_pages_from_1(api: httpx.Client, ref: str) -> None:
    path = f"/api/projects/{ref}/statements"
    first = _get(api, path, q="crane")
    assert first.status_code == 200
    assert (len(first.json()["items"]), first.json()["page"], first.json()["page_size"]) == (25, 1, 25)
    assert first.json()["total"] == COUNT and first.json()["facets"]["type"] == {"fact": COUNT}
    whole = _get(api, path, q="crane", page_size=100).json()
    assert len(whole["items"]) == COUNT and whole["page_size"] == 100
    third = _get(api, path, q="crane", page=3).json()  # 50 before it: the last ten
    assert [i["knowledge_id"] for i in third["items"]] == [i["knowledge_id"] for i in whole["items"][50:]]
    assert _get(api, path, q="crane", page=1).json() == first.json()
    assert _get(api, path, q="crane", page=1_000_000).json()["items"] == []
    for name, value in (("page_size", 0), ("page_size", 101), ("page", 0), ("page", 1_000_001), ("page", "two")):
        _refused(_get(api, path, **{name: value}), name)


def test_people_page_50_unless_asked_a_page_size_of_1_to_100_and_pages_from_1(api: httpx.Client, ref: str) -> None:
    path = f"/api/projects/{ref}/people"
    first = _get(api, path).json()
    assert (len(first["entities"]), first["page"], first["page_size"], first["total"]) == (50, 1, 50, PEOPLE)
    assert len(_get(api, path, page=2).json()["entities"]) == PEOPLE - 50
    assert len(_get(api, path, page_size=100).json()["entities"]) == PEOPLE
    assert _get(api, path, page=1, page_size=1).json()["entities"] == first["entities"][:1]
    assert _get(api, path, page=1_000_000).json()["entities"] == []
    for name, value in (("page_size", 0), ("page_size", 101), ("page", 0), ("page", 1_000_001)):
        _refused(_get(api, path, **{name: value}), name)
    _refused(_get(api, path, sort="newest"), "sort")


def test_every_read_answers_200_and_a_missing_record_404(api: httpx.Client, ref: str) -> None:
    (item,) = _get(api, f"/api/projects/{ref}/statements", q="pier 7 today", page_size=1).json()["items"]
    (person,) = _get(api, f"/api/projects/{ref}/people", page_size=1).json()["entities"]
    (source, *_) = _get(api, f"/api/projects/{ref}/sources").json()["sources"]
    for path in (
        f"/api/knowledge/{item['knowledge_id']}",
        f"/api/knowledge/{item['knowledge_id']}/evidence",
        f"/api/projects/{ref}/entities?name={person['name']}",
        f"/api/entities/{person['entity_id']}",
        f"/api/projects/{ref}/duplicates",
        f"/api/projects/{ref}/sources",
        f"/api/sources/{source['source_id']}",
        f"/api/projects/{ref}/conflicts",
    ):
        assert api.get(path).status_code == 200, path
    for missing in ("knowledge", "entities", "sources"):
        assert api.get(f"/api/{missing}/ki_{'0' * 16}").status_code == 404
    assert api.get(f"/api/knowledge/ki_{'0' * 16}/evidence").status_code == 404
