"""Retrieval over the engine's API with hybrid ranking (docs/ranking.md), on files the tests write:
only statements that match are answered (no padding up to ``top_k``), several files answer when
several do, ``rendered`` is plain text with the excerpts' line breaks, and ``backend`` says what
ranked."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local_engine import Engine, start_engine
from tests import secrets

TOKEN = "hybrid-retrieve-token"
FERRY = "The harbour ferry leaves pier four at nine every morning."
LAUNCH = (
    "# Launch\n\nProject Osprey launches on April 10, 2026, after the steering review.\n\n"
    "The launch checklist is owned by the release manager.\n\n"
    "Marketing prepares the announcement two weeks before the launch.\n"
)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    with start_engine(port=0, token=TOKEN, data_dir=tmp_path_factory.mktemp("engine")) as sim:
        secrets.register(sim.token)
        yield sim


@pytest.fixture
def api(engine: Engine) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=engine.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as client:
        yield client


def post(api: httpx.Client, path: str, body: Any) -> Any:
    answer = api.post(path, json=body, headers={"Idempotency-Key": os.urandom(8).hex()})
    assert answer.status_code in (200, 201, 202), answer.text
    return answer.json()


def base_with(api: httpx.Client, folder: Path, files: dict[str, str]) -> str:
    """A new knowledge base that has read ``files`` (name -> markdown) from ``folder``."""
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    ref = str(post(api, "/api/projects", {"name": folder.name})["project_ref"])
    job = post(api, f"/api/projects/{ref}/jobs", {"paths": [str(folder)]})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        seen = api.get(f"/api/projects/{ref}/jobs/{job['job_id']}").json()
        if seen["terminal"]:
            assert seen["status"] == "completed", seen
            return ref
        time.sleep(0.02)
    raise AssertionError("the job did not finish")


def sources_of(items: list[dict[str, Any]]) -> list[str]:
    return [item["evidence"][0]["source_name"].rsplit("/", 1)[-1] for item in items]


def test_retrieval_answers_only_statements_that_match_never_padding_to_top_k(api: httpx.Client, tmp_path: Path) -> None:
    ref = base_with(api, tmp_path / "walk", {"ferry.md": f"# Ferry\n\n{FERRY}\n", "launch.md": LAUNCH})
    answer = post(api, f"/api/projects/{ref}/retrieve", {"query": "When does the ferry leave?", "top_k": 8})
    assert [item["statement"] for item in answer["items"]] == [FERRY]
    assert sources_of(answer["items"]) == ["ferry.md"]
    about_launch = post(api, f"/api/projects/{ref}/retrieve", {"query": "Who owns the launch checklist?", "top_k": 8})
    assert "ferry.md" not in sources_of(about_launch["items"])


def test_several_files_answer_when_several_do(api: httpx.Client, tmp_path: Path) -> None:
    """The timetable file says the words most and densest: without the rule its statements fill
    the answer."""
    timetable = "\n\n".join(
        f"The ferry timetable for {day} is the ferry timetable of the summer." for day in
        ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
    )  # fmt: skip
    files = {
        "timetable.md": f"# Timetable\n\n{timetable}\n",
        "notices.md": "# Notices\n\nA printed copy of the ferry timetable hangs in the waiting room by the desk.\n",
        "history.md": "# History\n\nThe first ferry timetable was printed by the harbour board in the old town.\n",
    }
    ref = base_with(api, tmp_path / "several", files)
    answer = post(api, f"/api/projects/{ref}/retrieve", {"query": "ferry timetable", "top_k": 4})
    assert len(answer["items"]) == 4
    assert set(sources_of(answer["items"])) == {"timetable.md", "notices.md", "history.md"}
    hits = api.get(f"/api/projects/{ref}/search", params={"q": "ferry timetable", "limit": 4}).json()
    assert hits["backend"] == "sqlite-fts5+wordllama" and len(hits["hits"]) == 4
    assert all(hit["why"].startswith("words: ferry, timetable") for hit in hits["hits"])


def test_rendered_is_plain_text_keeping_the_excerpts_line_breaks(api: httpx.Client, tmp_path: Path) -> None:
    text = "# Ferry\n\nThe **harbour ferry** leaves `pier four`\nat nine every morning, see [the board](board.md).\n"
    ref = base_with(api, tmp_path / "rendered", {"ferry.md": text})
    answer = post(api, f"/api/projects/{ref}/retrieve", {"query": "harbour ferry pier", "top_k": 3})
    (item,) = answer["items"]
    excerpt = item["evidence"][0]["excerpt"]
    rendered = answer["rendered"]
    for mark in ("**", "`", "](", "board.md"):
        assert mark not in rendered
    block = rendered.split("evidence: ", 1)[1].split("\n\n", 1)[0].rstrip("\n").split("\n")
    assert len(block) == excerpt.count("\n") + 1  # one line of the answer a line of the excerpt
    assert "harbour ferry leaves pier four" in rendered and "at nine every morning" in rendered
