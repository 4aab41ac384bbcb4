"""Every file a job reads lies inside its input roots, checked where it is opened (issue 57).

Over loopback against the engine, with files and links the tests make: a link that leads out of
the roots (or into what the walk passes over, a dot-folder such as a stack's state) is skipped
with a warning and never answers a search; a link that stays inside is read as its target.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local_engine.double import Double, start_double
from tests import secrets

pytestmark = pytest.mark.contract

TOKEN = "engine-fence-token"
OUTSIDE = "The saboteur signals with three green lantern flashes."
STATE = "The vault combination is written on the harbour master's calendar."
INSIDE = "The ferry timetable changes on the first Monday of April."


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace (the engine's one input root) and a folder outside it."""
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    (workspace / "notes").mkdir(parents=True)
    (workspace / ".state").mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n{OUTSIDE}\n")
    (workspace / ".state" / "token.md").write_text(f"# Token\n\n{STATE}\n")
    (workspace / "notes" / "ferry.md").write_text(f"# Ferry\n\n{INSIDE}\n")
    (workspace / "notes" / "out.md").symlink_to(outside / "secret.md")
    (workspace / "notes" / "state.md").symlink_to(workspace / ".state" / "token.md")
    (workspace / "notes" / "passwd.md").symlink_to("/etc/passwd")
    (workspace / "notes" / "again.md").symlink_to(workspace / "notes" / "ferry.md")  # stays inside
    (workspace / "top.md").symlink_to(outside / "secret.md")  # at the top of the root itself
    return workspace, outside


@pytest.fixture
def engine(roots: tuple[Path, Path], tmp_path: Path) -> Iterator[Double]:
    workspace, _ = roots
    with start_double(token=TOKEN, data_dir=tmp_path / "data", input_roots=[workspace]) as sim:
        secrets.register(sim.token)
        yield sim


def _ingest(engine: Double, path: Path) -> tuple[httpx.Client, str, dict[str, Any]]:
    api = httpx.Client(base_url=engine.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30.0)
    ref = api.post("/api/projects", json={"name": "Fence"}, headers={"Idempotency-Key": os.urandom(8).hex()})
    ref.raise_for_status()
    base = ref.json()["project_ref"]
    queued = api.post(
        f"/api/projects/{base}/jobs", json={"paths": [str(path)]}, headers={"Idempotency-Key": os.urandom(8).hex()}
    )
    assert queued.status_code in (200, 201, 202), queued.text
    job_id = queued.json()["job_id"]
    for _ in range(1500):
        job: dict[str, Any] = api.get(f"/api/projects/{base}/jobs/{job_id}").json()
        if job["terminal"]:
            return api, base, job
        engine.state.stopping.wait(0.02)
    raise AssertionError(f"the job did not finish: {job}")


def _hits(api: httpx.Client, base: str, query: str) -> list[str]:
    answer = api.get(f"/api/projects/{base}/search", params={"q": query, "limit": 10})
    answer.raise_for_status()
    return [hit["statement"] for hit in answer.json()["hits"]]


@pytest.mark.parametrize("imported", ["notes", "."], ids=["a-folder", "the-root-itself"])
def test_a_link_out_of_the_roots_is_skipped_with_a_warning_and_never_answers(
    engine: Double, roots: tuple[Path, Path], imported: str
) -> None:
    # Given a folder holding links to a file outside the roots, to a dot-folder's file and to /etc/passwd
    workspace, _ = roots
    # When it is imported by path
    api, base, job = _ingest(engine, (workspace / imported).resolve())
    # Then the job completes, each link out is a skip with a warning, and none of them is a source
    assert job["status"] == "completed", job
    registration = job["stages"][0]
    links_out = 4 if imported == "." else 3  # the top-level link, when the root itself is imported
    assert registration["warnings"] == links_out and registration["skipped"] >= links_out, registration
    names = {s["name"] for s in api.get(f"/api/projects/{base}/sources").json()["sources"]}
    assert not {n for n in names if n.endswith(("out.md", "state.md", "passwd.md", "top.md"))}, names
    # and nothing they hold answers a search, while the link that stays inside is read as its target
    assert _hits(api, base, "saboteur lantern flashes") == []
    assert _hits(api, base, "vault combination calendar") == []
    assert _hits(api, base, "root") == []
    assert INSIDE in _hits(api, base, "ferry timetable April")
    assert any(n.endswith("again.md") for n in names)


def test_a_path_whose_real_place_is_outside_the_roots_is_refused(engine: Double, roots: tuple[Path, Path]) -> None:
    # Given a link inside the workspace to a folder outside it
    workspace, outside = roots
    (workspace / "elsewhere").symlink_to(outside)
    # When the job names that link
    _, _, job = _ingest(engine, workspace / "elsewhere")
    # Then the job fails at registration, naming no allowed root, having read nothing
    assert job["status"] == "failed", job
    assert job["error"]["code"] == "path_not_allowed", job
