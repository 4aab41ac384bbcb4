"""The local engine on real documents, over loopback: what a folder becomes, and what it answers.

Every file here is made by the test (markdown, HTML, a PDF by reportlab, a DOCX by python-docx,
a file no converter reads); nothing leans on the demo corpus. The engine's own client is plain
httpx: the contract (docs/upstream-contract.md) is what is under test.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from local_engine.double import Double, start_double
from local_engine.ingestion import extraction
from tests import secrets
from tests.documents import handbook
from tests.localstack import free_port

pytestmark = pytest.mark.contract

TOKEN = "engine-contract-token"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Double]:
    """An engine with a worker process, as ``make run`` has: every test here goes through it (the
    other tiers' engines compute in place, and ``tests/engine/test_workers.py`` holds both ways to
    the same rows)."""
    data = tmp_path_factory.mktemp("engine")
    with start_double(port=0, control_port=0, token=TOKEN, data_dir=data, workers=1) as sim:
        secrets.register(sim.token)
        yield sim


@pytest.fixture
def api(engine: Double) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=engine.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10) as client:
        yield client


def post(api: httpx.Client, path: str, body: Any) -> Any:
    answer = api.post(path, json=body, headers={"Idempotency-Key": os.urandom(8).hex()})
    assert answer.status_code in (200, 201, 202), answer.text
    return answer.json()


def new_base(api: httpx.Client, name: str = "Docs") -> str:
    return str(post(api, "/api/projects", {"name": name})["project_ref"])


def finished(api: httpx.Client, ref: str, job_id: str, seconds: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job: dict[str, Any] = api.get(f"/api/projects/{ref}/jobs/{job_id}").json()
        if job["terminal"]:
            return job
        time.sleep(0.02)
    raise AssertionError(f"the job did not finish: {job}")


def ingest(api: httpx.Client, ref: str, *paths: Path) -> dict[str, Any]:
    job = post(api, f"/api/projects/{ref}/jobs", {"paths": [str(p) for p in paths]})
    return finished(api, ref, job["job_id"])


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return handbook(tmp_path)


def test_a_folder_becomes_sources_chunks_statements_and_evidence(api: httpx.Client, folder: Path) -> None:
    ref = new_base(api)
    job = ingest(api, ref, folder)
    assert job["status"] == "completed", job
    stages = {s["name"]: s for s in job["stages"]}
    assert stages["source_registration"]["processed"] == 7
    assert stages["parsing_extraction"]["failed"] == 1  # broken.pdf, a source's failure: the job goes on
    sources = {s["name"]: s for s in api.get(f"/api/projects/{ref}/sources").json()["sources"]}
    assert sources["handbook/broken.pdf"]["processing_status"] == "failed"
    # a byte-for-byte copy: the first registered (in path order) is the original
    original, copy = sources["handbook/copy-of-boats.md"], sources["handbook/guides/boats.md"]
    assert copy["duplicate_of"] == original["source_id"] and original["duplicate_of"] is None
    failed = api.get(f"/api/sources/{sources['handbook/broken.pdf']['source_id']}").json()
    assert failed["error"]["code"] == "unreadable_pdf" and failed["error"]["stage"] == "parsing_extraction"
    page = api.get(f"/api/sources/{original['source_id']}").json()
    assert [d["name"] for d in page["duplicates"]] == ["handbook/guides/boats.md"]
    for name, phrase in (
        ("handbook/copy-of-boats.md", "lends kayaks"),
        ("handbook/ferry.html", "ferry leaves pier four"),
        ("handbook/warehouse.pdf", "parked in bay seven"),
        ("handbook/review.docx", "churn fell by four percent"),
        ("handbook/LICENSE.APACHE", "Apache License"),  # text with a suffix no format claims
    ):
        page = api.get(f"/api/sources/{sources[name]['source_id']}").json()
        assert phrase in page["text"] and page["chunks"] and page["knowledge_count"] >= 1, name
        at = page["text"].index(phrase)  # the phrase lies in a chunk, chunks in order and within the target
        assert any(c["char_start"] <= at < c["char_end"] and phrase in c["text"] for c in page["chunks"]), name
        ends = [(c["char_start"], c["char_end"]) for c in page["chunks"]]
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(ends)), name
        assert all(len(c["text"]) <= extraction.CHUNK_TARGET for c in page["chunks"]), name
    assert "hidden" not in api.get(f"/api/sources/{sources['handbook/ferry.html']['source_id']}").json()["text"]


def test_search_and_retrieve_find_each_files_phrase_with_exact_evidence(api: httpx.Client, folder: Path) -> None:
    ref = new_base(api)
    ingest(api, ref, folder)
    for query, source in (
        ("kayaks Saturdays", "handbook/copy-of-boats.md"),
        ("ferry pier four", "handbook/ferry.html"),
        ("forklifts bay seven", "handbook/warehouse.pdf"),
        ("warehouse closes evening", "handbook/warehouse.pdf"),
        ("churn percent spring", "handbook/review.docx"),
    ):
        hits = api.get(f"/api/projects/{ref}/search", params={"q": query}).json()["hits"]
        assert hits, query
        top = api.get(f"/api/knowledge/{hits[0]['knowledge_id']}/evidence").json()["evidence"][0]
        assert top["source_name"] == source and not top["missing_excerpt"]
        page = api.get(f"/api/sources/{top['source_id']}").json()
        assert page["text"][top["char_start"] : top["char_end"]] == top["excerpt"]
    retrieved = post(api, f"/api/projects/{ref}/retrieve", {"query": "who must wear a buoyancy aid", "top_k": 3})
    first = retrieved["items"][0]
    assert "buoyancy aid" in first["statement"] and first["evidence"][0]["location"] == "line 10"
    assert '"Every paddler must wear a buoyancy aid on the water."' in retrieved["rendered"]
    pdf = api.get(f"/api/projects/{ref}/search", params={"q": "warehouse closes"}).json()["hits"][0]
    assert (
        api.get(f"/api/knowledge/{pdf['knowledge_id']}/evidence").json()["evidence"][0]["location"].startswith("page 2")
    )


def test_another_bases_words_never_answer(api: httpx.Client, folder: Path, tmp_path: Path) -> None:
    mine, theirs = new_base(api, "Mine"), new_base(api, "Theirs")
    ingest(api, mine, folder)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.md").write_text("# Notes\n\nThe lighthouse keeper logs every passing tanker by hand.\n")
    ingest(api, theirs, other)
    assert api.get(f"/api/projects/{theirs}/search", params={"q": "kayaks ferry forklifts"}).json()["hits"] == []
    assert api.get(f"/api/projects/{mine}/search", params={"q": "lighthouse tanker"}).json()["hits"] == []
    names = [s["name"] for s in api.get(f"/api/projects/{theirs}/sources").json()["sources"]]
    assert names == ["other/notes.md"]


def test_fts_operators_in_a_query_are_words(api: httpx.Client, folder: Path) -> None:
    ref = new_base(api)
    ingest(api, ref, folder)
    for query in ('kayaks" OR "x', "NEAR(kayaks", "kayak*", "title:kayaks", "AND OR NOT"):
        answer = api.get(f"/api/projects/{ref}/search", params={"q": query})
        assert answer.status_code == 200, (query, answer.text)


def test_a_path_that_does_not_exist_fails_the_job_with_the_engines_sentence(api: httpx.Client, tmp_path: Path) -> None:
    ref = new_base(api)
    job = ingest(api, ref, tmp_path / "this" / "does" / "not" / "exist")
    assert job["status"] == "failed" and job["current_stage"] == "source_registration"
    assert job["error"]["code"] == "path_not_found" and "does not exist" in job["error"]["message"]


def test_a_path_under_no_input_root_is_refused_before_a_job_is_made(tmp_path: Path) -> None:
    inside, outside = tmp_path / "workspace", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    with (
        start_double(port=0, control_port=0, token=TOKEN, input_roots=[inside]) as fenced,
        httpx.Client(base_url=fenced.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30.0) as client,
    ):
        ref = new_base(client)
        for path in (outside, inside / ".." / "elsewhere", Path("/etc")):
            refused = client.post(
                f"/api/projects/{ref}/jobs", json={"paths": [str(path)]}, headers={"Idempotency-Key": str(path)}
            )
            assert refused.status_code == 403 and refused.json()["error"]["code"] == "path_not_allowed"
        assert fenced.jobs(ref) == []
        (inside / "a.md").write_text("# A\n\nA file inside the workspace is read like any other.\n")
        assert ingest(client, ref, inside)["status"] == "completed"


def test_the_same_files_again_are_skipped_and_the_revision_hash_holds(
    api: httpx.Client, engine: Double, folder: Path
) -> None:
    ref = new_base(api)
    ingest(api, ref, folder)
    first = api.get(f"/api/projects/{ref}/revisions/head").json()
    again = ingest(api, ref, folder)
    registration = again["stages"][0]
    assert (registration["skipped"], registration["processed"]) == (6, 1)  # only the failed file is tried again
    second = api.get(f"/api/projects/{ref}/revisions/head").json()
    assert second["logical_content_hash"] == first["logical_content_hash"]
    assert first["publication_status"] == "partial" and first["failed_source_count"] == 1
    for boats in (folder / "guides" / "boats.md", folder / "copy-of-boats.md"):
        boats.write_text("# Boats\n\nThe rowing club now lends canoes on Sundays only.\n")
    ingest(api, ref, folder)
    third = api.get(f"/api/projects/{ref}/revisions/head").json()
    assert third["logical_content_hash"] != first["logical_content_hash"]
    hits = api.get(f"/api/projects/{ref}/search", params={"q": "kayaks"}).json()["hits"]
    assert all("kayaks" not in h["statement"] for h in hits)  # the old text's statements are gone
    feed = api.get(f"/api/projects/{ref}/feed", params={"after": 0, "limit": 10}).json()
    assert [e["event_type"] for e in feed["envelopes"]] == ["knowledge.revision.published"] * 3


def test_cancel_stops_at_a_boundary_and_retry_resumes_from_the_checkpoint(
    api: httpx.Client, engine: Double, folder: Path
) -> None:
    ref = new_base(api)
    engine.set_job_pace("poll")
    try:
        job = post(api, f"/api/projects/{ref}/jobs", {"paths": [str(folder)]})
        for _ in range(4):  # queued → registration → extraction → normalization, running
            read = api.get(f"/api/projects/{ref}/jobs/{job['job_id']}").json()
        assert read["current_stage"] == "chunking"
        post(api, f"/api/projects/{ref}/jobs/{job['job_id']}/cancel", None)
        cancelled = api.get(f"/api/projects/{ref}/jobs/{job['job_id']}").json()
        assert cancelled["status"] == "cancelled"
        assert [s["status"] for s in cancelled["stages"]][:5] == ["completed"] * 4 + ["pending"]
        assert api.get(f"/api/projects/{ref}/search", params={"q": "kayaks"}).json()["hits"] == []
        retried = post(api, f"/api/projects/{ref}/jobs/{job['job_id']}/retry", None)
        assert retried["current_stage"] == "semantic_extraction"
    finally:
        engine.set_job_pace("clock")
    done = finished(api, ref, job["job_id"])
    assert done["status"] == "completed" and done["stages"][0]["processed"] == 7  # registration ran once
    assert api.get(f"/api/projects/{ref}/search", params={"q": "kayaks"}).json()["hits"]


def _engine_process(data: Path, port: int, control: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "local_engine", "--port", str(port), "--control-port", str(control)]
    command += ["--data", str(data), "--token", TOKEN, "--quiet", "--workers", "2"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, dead but not yet reaped by its new parent, is gone)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _ready(url: str) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/api/status", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30.0)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("the engine did not start")


def test_a_kill_9_mid_job_leaves_the_engine_consistent_and_the_job_resumes(tmp_path: Path, folder: Path) -> None:
    data, port, control = tmp_path / "data", free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    process = _engine_process(data, port, control)
    try:
        _ready(url)
        httpx.put(f"http://127.0.0.1:{control}/jobs/pace", json={"mode": "clock", "stage_seconds": 0.3}, timeout=30.0)
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30.0) as client:
            ref = new_base(client)
            job = post(client, f"/api/projects/{ref}/jobs", {"paths": [str(folder)]})
            while client.get(f"/api/projects/{ref}/jobs/{job['job_id']}").json()["progress"] < 0.3:
                time.sleep(0.05)
        workers = _children(process.pid)
        assert workers, "the engine converts and cuts files in worker processes"
        process.send_signal(signal.SIGKILL)
        process.wait()
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in workers), "a worker outlived the engine's kill -9"
        process = _engine_process(data, port, control)
        _ready(url)
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30.0) as client:
            assert ref in [p["project_ref"] for p in client.get("/api/projects").json()["projects"]]
            done = finished(client, ref, job["job_id"])
            assert done["status"] == "completed", done
            assert client.get(f"/api/projects/{ref}/search", params={"q": "kayaks"}).json()["hits"]
            sources = client.get(f"/api/projects/{ref}/sources").json()["sources"]
            assert len(sources) == 7
    finally:
        process.kill()
        process.wait()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80),
            st.sampled_from(["# Title", "## Part", "- item one is here.", "> quoted words are kept.", "```", "\n"]),
            st.from_regex(r"[A-Z][a-z]{2,8}( [a-z]{2,8}){3,9}[.!] ?", fullmatch=True),
        ),
        max_size=25,
    )
)
def test_every_statement_quotes_the_normalized_text_at_its_offsets(parts: list[str]) -> None:
    text = extraction.normalize("\n".join(parts))
    structure = extraction.blocks(text)
    spans = extraction.chunk(text, structure)
    for before, after in itertools.pairwise(spans):  # in order, never overlapping
        assert 0 <= before.start < before.end <= after.start < after.end <= len(text)
    for sentence in extraction.sentences(text, structure, spans):
        excerpt = text[sentence.start : sentence.end]
        assert excerpt and excerpt == excerpt.strip()
        assert sentence.statement.split() == excerpt.split()  # what a person reads: the excerpt's words
        assert len(extraction.WORD.findall(excerpt)) >= extraction.MIN_WORDS and not excerpt.endswith("?")
        holder = spans[sentence.chunk_index]  # its chunk holds it whole
        assert holder.start <= sentence.start and sentence.end <= holder.end


def test_an_excerpt_after_wide_characters_is_still_the_text_at_its_offsets(api: httpx.Client, tmp_path: Path) -> None:
    folder = tmp_path / "wide"
    folder.mkdir()
    (folder / "café.md").write_text(
        "# Café ☕\n\nÜber 🚣🚣 émigrés row the canal at dawn 🌅 daily.\n\nThe canal café opens at seven.\n"
    )
    ref = new_base(api)
    ingest(api, ref, folder)
    hits = api.get(f"/api/projects/{ref}/search", params={"q": "canal"}).json()["hits"]
    assert len(hits) == 2
    for hit in hits:
        (link,) = api.get(f"/api/knowledge/{hit['knowledge_id']}/evidence").json()["evidence"]
        text = api.get(f"/api/sources/{link['source_id']}").json()["text"]
        assert link["excerpt"] == text[link["char_start"] : link["char_end"]] == hit["statement"]
