"""The FORAGER client's curation and export methods against the simulator:
docs/upstream-contract.md, "Curation" and "Exports"."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import time
from pathlib import Path

import httpx
import pytest

from knowledge_service.errors import UpstreamError, UpstreamRefused
from knowledge_service.upstream.client import ForagerClient
from local_engine.double import Double
from local_engine.exports import jobs as sim_exports
from tests import demo

pytestmark = pytest.mark.contract

LAUNCH = demo.conflict("falcon", "contradiction")
APRIL = demo.statement("falcon", "April 10, 2026")


@pytest.fixture
def client(simulator: Double) -> ForagerClient:
    sim_exports.book(simulator.state).build_seconds = 0.0
    return ForagerClient(simulator.url, simulator.token, timeout_seconds=2.0)


def test_resolve_and_reopen_with_the_actor_and_no_empty_fields(client: ForagerClient, simulator: Double) -> None:
    decided = client.resolve_conflict(LAUNCH, {"action": "accept_winner", "winner_id": APRIL, "notes": None,
                                                "actor": "ada"})  # fmt: skip
    assert decided.status == "resolved" and decided.decision is not None and decided.decision.decided_by == "ada"
    assert simulator.requests[-1]["body"] == {"action": "accept_winner", "winner_id": APRIL, "actor": "ada"}
    assert simulator.requests[-1]["idempotency_key"]
    with pytest.raises(UpstreamRefused) as refused:
        client.resolve_conflict(LAUNCH, {"action": "dismiss", "actor": "ada"})
    assert (refused.value.upstream_status, refused.value.upstream_code) == (409, "already_decided")
    assert client.reopen_conflict(LAUNCH, "ada").status == "open"


def test_decide_unmerge_and_review(client: ForagerClient) -> None:
    decided = client.decide_duplicate(
        demo.candidate("falcon", "Robert Smith", "R. Smith"), {"action": "merge", "actor": "ada"}
    )
    assert decided.duplicate.status == "accepted"
    assert client.entity(demo.entity("falcon", "R. Smith")).merged_into == demo.entity("falcon", "Robert Smith")
    back = client.unmerge_entity(demo.entity("falcon", "R. Smith"), {"actor": "ada"})
    assert back.restored.status == "active"
    reviewed = client.review_item(APRIL, {"action": "reject", "actor": "ada"})
    assert (reviewed.status, reviewed.review_status) == ("Archived", "rejected")


def test_an_export_is_built_in_the_background_and_streams_with_its_digest(
    client: ForagerClient, simulator: Double
) -> None:
    sim_exports.book(simulator.state).build_seconds = 0.3
    row = client.start_export("falcon", {"format": "jsonl"}, idempotency_key="contract-export")
    assert row.status == "running" and row.sha256 is None
    again = client.start_export("falcon", {"format": "jsonl"}, idempotency_key="contract-export")
    assert again.export_id == row.export_id
    time.sleep(0.4)
    done = client.export(row.export_id)
    assert done.status == "completed" and done.downloadable and done.size_bytes
    assert client.exports("falcon").exports[0].export_id == row.export_id
    with client.download_archive(row.export_id) as arriving:
        data = b"".join(arriving.chunks)
    assert arriving.announced_sha256 == done.sha256 == hashlib.sha256(data).hexdigest()
    assert len(data) == done.size_bytes and "filename=" in arriving.content_disposition


@pytest.mark.parametrize(("control", "status", "code"), [("folder", 409, "written_to_folder"),
                                                          ("expire", 410, "archive_expired")])  # fmt: skip
def test_a_download_forager_refuses_is_refused_in_its_words(
    client: ForagerClient, simulator: Double, control: str, status: int, code: str
) -> None:
    row = client.start_export("falcon", {"format": "anthill"}, idempotency_key=f"contract-{control}")
    httpx.post(f"{simulator.control_url}/exports/{row.export_id}/{control}", timeout=30.0).raise_for_status()
    with pytest.raises(UpstreamRefused) as refused, client.download_archive(row.export_id):
        pass
    assert (refused.value.upstream_status, refused.value.upstream_code) == (status, code)


def test_a_body_that_breaks_off_raises_from_the_chunks(client: ForagerClient, simulator: Double) -> None:
    row = client.start_export("falcon", {"format": "jsonl"}, idempotency_key="contract-reset")
    assert sim_exports.book(simulator.state).wait(row.export_id).completed
    simulator.set_fault("reset", path_prefix=f"/api/exports/{row.export_id}/download", times=1)
    with pytest.raises(UpstreamError), client.download_archive(row.export_id) as arriving:
        b"".join(arriving.chunks)


def test_forager_refuses_an_export_while_processing(client: ForagerClient, simulator: Double) -> None:
    httpx.post(
        f"{simulator.control_url}/projects/falcon/processing", json={"processing": True}, timeout=30.0
    ).raise_for_status()
    with pytest.raises(UpstreamRefused) as refused:
        client.start_export("falcon", {"format": "jsonl"}, idempotency_key="contract-busy")
    assert (refused.value.upstream_status, refused.value.upstream_code) == (409, "project_processing")


def test_the_archive_the_client_takes_away_is_the_base_it_ingested(
    client: ForagerClient, simulator: Double, tmp_path: Path
) -> None:
    """Over loopback, through the product's own client: a document ingested by path, an ANTHILL
    package of it downloaded and verified, its statements and the revision it names read back."""
    (tmp_path / "memo.md").write_text("# Memo\n\nThe board approved the harbour budget on May 2, 2026.\n")
    ref = client.create_project("Memos", "", idempotency_key="contract-memos").project_ref
    job = client.queue_job(ref, [str(tmp_path)], force=False, idempotency_key="contract-memos-job")
    deadline = time.monotonic() + 30
    while not (job := client.job(ref, job.job_id)).terminal:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    row = client.start_export(ref, {"format": "anthill"}, idempotency_key="contract-package")
    done = client.export(sim_exports.book(simulator.state).wait(row.export_id).export_id)
    with client.download_archive(row.export_id) as arriving:
        data = b"".join(arriving.chunks)
    assert arriving.announced_sha256 == done.sha256 == hashlib.sha256(data).hexdigest()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as package:
        manifest = json.loads(package.extractfile("anthill-package.json").read())  # type: ignore[union-attr]
        statements = package.extractfile("records/statements.jsonl").read().decode().splitlines()  # type: ignore[union-attr]
    head = client.head_revision(ref)
    assert head is not None and manifest["revision"]["id"] == head.revision_id == done.revision_id
    assert [json.loads(s)["statement"] for s in statements] == ["The board approved the harbour budget on May 2, 2026."]
    assert done.stats["statements"] == 1 == manifest["stats"]["statements"]
