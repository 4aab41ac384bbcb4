"""The ingestion calls of the FORAGER client against the simulator, over loopback
(docs/upstream-contract.md, "Ingestion")."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge_service.errors import UpstreamError, UpstreamRefused
from knowledge_service.upstream.client import ForagerClient
from knowledge_service.upstream.models import STAGES
from knowledge_service.upstream.multipart import FilePart
from local_engine.double import Double
from tests import demo

pytestmark = pytest.mark.contract


def client_for(sim: Double, timeout_seconds: float = 2.0) -> ForagerClient:
    return ForagerClient(sim.url, sim.token, timeout_seconds=timeout_seconds)


def parts(*files: tuple[str, bytes]) -> list[FilePart]:
    return [FilePart(name, len(data), lambda data=data: [data[:3], data[3:]]) for name, data in files]


def test_a_queued_job_is_the_payload_with_eleven_stages_and_one_key_makes_one_job(simulator: Double) -> None:
    client = client_for(simulator)
    job = client.queue_job("falcon", ["/srv/colony/workspace/docs"], force=False, idempotency_key="k-1")
    again = client.queue_job("falcon", ["/srv/colony/workspace/docs"], force=False, idempotency_key="k-1")
    assert job.job_id == again.job_id and job.status == "queued" and job.progress == 0
    assert [s.name for s in job.stages] == list(STAGES)
    assert len([j for j in simulator.jobs("falcon") if j["job_id"] == job.job_id]) == 1
    posts = [r for r in simulator.requests if r["method"] == "POST"]
    assert [r["idempotency_key"] for r in posts] == ["k-1", "k-1"]


def test_polling_pace_moves_a_job_one_step_a_read(simulator: Double, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nThe polling pace moves one stage each read.\n")
    simulator.set_job_pace("poll")
    client = client_for(simulator)
    job = client.queue_job("falcon", [str(tmp_path)], force=False, idempotency_key="k-2")
    seen = [client.job("falcon", job.job_id) for _ in range(13)]
    assert [j.current_stage for j in seen[:3]] == ["source_registration", "parsing_extraction", "normalization"]
    assert seen[-1].status == "completed" and seen[-1].progress == 1.0 and seen[-1].terminal


def test_a_job_of_another_project_is_foragers_404(simulator: Double) -> None:
    with pytest.raises(UpstreamRefused) as refused:
        client_for(simulator).job("falcon", demo.job("harbour"))
    assert refused.value.upstream_status == 404


def test_cancel_of_a_terminal_job_and_retry_of_a_completed_one_are_409s(simulator: Double) -> None:
    client = client_for(simulator)
    for call in (client.cancel_job, client.retry_job):
        with pytest.raises(UpstreamRefused) as refused:
            call("falcon", demo.job("falcon"), idempotency_key=f"k-{call.__name__}")
        assert refused.value.upstream_status == 409


def test_an_upload_streams_one_multipart_body_with_its_length(simulator: Double) -> None:
    job = client_for(simulator).upload(
        "falcon",
        parts(("a.md", b"hello"), ("b/c.txt", b"world!")),
        force=True,
        admission_job_id=None,
        idempotency_key="u",
    )
    held = next(j for j in simulator.jobs("falcon") if j["job_id"] == job.job_id)
    assert held["inputs"] == ["a.md", "b/c.txt"] and held["force"] is True
    (post,) = [r for r in simulator.requests if r["path"].endswith("/uploads")]
    assert int(post["headers"]["Content-Length"]) > 11 and "Transfer-Encoding" not in post["headers"]
    assert post["headers"]["Content-Type"].startswith("multipart/form-data; boundary=")


def test_a_preflight_refusal_is_an_answer_and_a_working_storage_failure_is_a_failure(simulator: Double) -> None:
    client = client_for(simulator)
    simulator.set_admission(limit_bytes=4)
    refused = client.preflight("falcon", parts(("a.md", b"hello")), idempotency_key="p-1")
    assert (refused.admitted, refused.code, refused.measured_bytes, refused.limit_bytes) == (
        False,
        "over_tier_limit",
        5,
        4,
    )
    simulator.set_admission(limit_bytes=1024, working_storage_fails=True)
    with pytest.raises(UpstreamError) as failed:
        client.preflight("falcon", parts(("a.md", b"hello")), idempotency_key="p-2")
    assert not isinstance(failed.value, UpstreamRefused)
    assert client.preflight("falcon", parts(("a.md", b"hello")), idempotency_key="p-3").admitted


def test_an_upload_over_foragers_caps_is_its_413(simulator: Double) -> None:
    many = parts(*[(f"f{i}", b"x") for i in range(401)])
    client = client_for(simulator, timeout_seconds=30.0)  # 401 parts can take over 2 s on a busy machine
    with pytest.raises(UpstreamRefused) as refused:
        client.upload("falcon", many, force=False, admission_job_id=None, idempotency_key="big")
    assert refused.value.upstream_status == 413
