"""The engine's rules, pinned on files the tests write (issue 57: a mutation round found these
unheld). Over loopback against the engine: a statement's exact text, type, confidence, heading
path and offsets; a nested list read once; DOCX heading styles; an uploaded file's job; page 2
and the ``source_id`` filter of ``/statements``; and validation refusing an excerpt whose hash
does not match."""

from __future__ import annotations

import io
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

TOKEN = "engine-rules-token"
HARBOUR = """# Harbour Rules

## Ferries

The ferry must leave pier four at nine every morning. The harbour master may delay the ferry in fog.

- Passengers board from the east ramp before the cars.
  - Cyclists wait at the rear gate until called.
- Trucks board last.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Double]:
    with start_double(token=TOKEN, data_dir=tmp_path_factory.mktemp("data")) as sim:
        secrets.register(sim.token)
        yield sim


@pytest.fixture
def api(engine: Double) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=engine.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as client:
        yield client


def _post(api: httpx.Client, path: str, **kwargs: Any) -> Any:
    answer = api.post(path, headers={"Idempotency-Key": os.urandom(8).hex()}, **kwargs)
    assert answer.status_code in (200, 201, 202), answer.text
    return answer.json()


def _finished(api: httpx.Client, ref: str, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job: dict[str, Any] = api.get(f"/api/projects/{ref}/jobs/{job_id}").json()
        if job["terminal"]:
            return job
        time.sleep(0.02)
    raise AssertionError(f"the job did not finish: {job}")


def _base(api: httpx.Client, folder: Path, files: dict[str, str | bytes]) -> str:
    folder.mkdir(parents=True)
    for name, body in files.items():
        (folder / name).write_bytes(body.encode() if isinstance(body, str) else body)
    ref = str(_post(api, "/api/projects", json={"name": folder.name})["project_ref"])
    job = _post(api, f"/api/projects/{ref}/jobs", json={"paths": [str(folder)]})
    assert _finished(api, ref, job["job_id"])["status"] == "completed"
    return ref


def _items(api: httpx.Client, ref: str, **query: Any) -> dict[str, Any]:
    answer = api.get(f"/api/projects/{ref}/statements", params=query)
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def test_a_fixed_file_gives_exact_statements_types_confidence_headings_and_offsets(
    api: httpx.Client, tmp_path: Path
) -> None:
    ref = _base(api, tmp_path / "harbour", {"rules.md": HARBOUR})
    listed = _items(api, ref, page_size=100)["items"]
    items = {i["statement"]: i for i in listed}
    # Then exactly these sentences are statements, each once (the nested item once), the short one not
    assert sorted(i["statement"] for i in listed) == sorted(
        [
            "The ferry must leave pier four at nine every morning.",
            "The harbour master may delay the ferry in fog.",
            "Passengers board from the east ramp before the cars.",
            "Cyclists wait at the rear gate until called.",
        ]
    )
    ferry, fog = (
        items["The ferry must leave pier four at nine every morning."],
        items["The harbour master may delay the ferry in fog."],
    )
    assert (ferry["type"], ferry["confidence"]) == ("requirement", 0.9)  # "must"
    assert (fog["type"], fog["confidence"]) == ("fact", 0.7)  # a hedge takes 0.2
    assert items["Cyclists wait at the rear gate until called."]["type"] == "fact"
    # and each excerpt is the sentence exactly where the source's text holds it, under its headings
    for statement, item in items.items():
        (evidence,) = api.get(f"/api/knowledge/{item['knowledge_id']}/evidence").json()["evidence"]
        page = api.get(f"/api/sources/{evidence['source_id']}").json()
        text, start = page["text"], page["text"].index(statement)
        assert evidence["excerpt"] == statement == text[start : start + len(statement)]
        (chunk,) = [c for c in page["chunks"] if c["chunk_id"] == evidence["chunk_id"]]
        assert chunk["heading"] == "Harbour Rules › Ferries"
        assert chunk["char_start"] <= start and start + len(statement) <= chunk["char_end"]
    file_lines = HARBOUR.splitlines()
    (evidence,) = api.get(
        f"/api/knowledge/{items['Cyclists wait at the rear gate until called.']['knowledge_id']}/evidence"
    ).json()["evidence"]
    line = int(evidence["location"].removeprefix("line "))
    assert "Cyclists wait at the rear gate" in file_lines[line - 1]  # the file's own line


def _docx_with_headings() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Warehouse", level=1)
    document.add_heading("Forklifts", level=2)
    document.add_paragraph("Every forklift is parked in bay seven after the night shift.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_docx_heading_styles_become_the_heading_path(api: httpx.Client, tmp_path: Path) -> None:
    ref = _base(api, tmp_path / "warehouse", {"warehouse.docx": _docx_with_headings()})
    (item,) = _items(api, ref)["items"]
    assert item["statement"] == "Every forklift is parked in bay seven after the night shift."
    (evidence,) = api.get(f"/api/knowledge/{item['knowledge_id']}/evidence").json()["evidence"]
    page = api.get(f"/api/sources/{evidence['source_id']}").json()
    (chunk,) = [c for c in page["chunks"] if c["chunk_id"] == evidence["chunk_id"]]
    assert chunk["heading"] == "Warehouse › Forklifts"


def test_an_uploaded_files_job_completes_with_its_statements(api: httpx.Client) -> None:
    ref = str(_post(api, "/api/projects", json={"name": "Uploads"})["project_ref"])
    files = {"files": ("notes/lamp.md", b"# Lamp\n\nThe lighthouse lamp is lit thirty minutes before sunset.\n")}
    job = _post(api, f"/api/projects/{ref}/uploads", files=files)
    assert _finished(api, ref, job["job_id"])["status"] == "completed"
    (item,) = _items(api, ref)["items"]
    assert item["statement"] == "The lighthouse lamp is lit thirty minutes before sunset."


def test_statements_page_two_starts_after_page_one_and_source_id_filters(api: httpx.Client, tmp_path: Path) -> None:
    lines = "\n\n".join(f"Crane number {n} lifts the blue containers at dawn." for n in range(7))
    ref = _base(
        api,
        tmp_path / "cranes",
        {"a.md": f"# A\n\n{lines}\n", "b.md": "# B\n\nThe tug boat pulls the barge at noon.\n"},
    )
    first, second = _items(api, ref, page=1, page_size=5), _items(api, ref, page=2, page_size=5)
    assert first["total"] == second["total"] == 8
    assert len(first["items"]) == 5 and len(second["items"]) == 3
    seen = [i["knowledge_id"] for i in first["items"] + second["items"]]
    assert len(set(seen)) == 8  # page 2 starts where page 1 ended
    sources = {s["name"]: s["source_id"] for s in api.get(f"/api/projects/{ref}/sources").json()["sources"]}
    only_b = _items(api, ref, source_id=sources["cranes/b.md"])
    assert [i["statement"] for i in only_b["items"]] == ["The tug boat pulls the barge at noon."]
    assert only_b["total"] == 1


def test_validation_counts_an_excerpt_whose_hash_does_not_match(
    engine: Double, api: httpx.Client, tmp_path: Path
) -> None:
    folder = tmp_path / "tamper"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nThe ferry leaves pier four at seven.\n\nThe tide turns at noon today.\n")
    ref = str(_post(api, "/api/projects", json={"name": "Tamper"})["project_ref"])
    engine.set_job_pace("poll")  # a stage a read: the test stands between provenance and validation
    try:
        job = _post(api, f"/api/projects/{ref}/jobs", json={"paths": [str(folder)]})
        while api.get(f"/api/projects/{ref}/jobs/{job['job_id']}").json()["current_stage"] != "validation":
            pass
        with engine.state.store.transaction() as db:  # one excerpt's hash no longer its text's
            db.execute(
                "UPDATE evidence SET excerpt_hash = 'sha256:0' WHERE rowid = (SELECT MIN(rowid) FROM evidence"
                " WHERE source_id IN (SELECT source_id FROM sources WHERE ref = ?))",
                (ref,),
            )
        done: dict[str, Any] = {}
        while not done.get("terminal"):
            done = api.get(f"/api/projects/{ref}/jobs/{job['job_id']}").json()
    finally:
        engine.set_job_pace("clock", 0)
    validation = next(s for s in done["stages"] if s["name"] == "validation")
    assert (validation["processed"], validation["warnings"]) == (1, 1), validation
