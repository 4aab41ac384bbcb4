"""The FORAGER client against the simulator, over loopback: docs/upstream-contract.md."""

from __future__ import annotations

import pytest

from knowledge_service.errors import KnowledgeUnreachable, UpstreamError, UpstreamRefused, UpstreamTimeout
from knowledge_service.upstream.client import ForagerClient
from local_engine.double import Double

pytestmark = pytest.mark.contract


def client_for(sim: Double, *, token: str | None = None, timeout: float = 2.0) -> ForagerClient:
    return ForagerClient(sim.url, token or sim.token, timeout_seconds=timeout)


def test_status_reads_what_the_engine_is(simulator: Double) -> None:
    status = client_for(simulator).status()
    assert status.version == "0.8.0"
    assert status.schema_version == 1
    assert status.search_backend == "sqlite-fts5+wordllama"


def test_capabilities_carry_the_package_version_and_the_feed(simulator: Double) -> None:
    capabilities = client_for(simulator).capabilities()
    assert capabilities.package_version == 7
    assert capabilities.change_feed is True
    assert capabilities.instance_id and capabilities.instance_id.startswith("fgi_")


def test_an_engine_that_states_no_package_version_reads_as_none(simulator: Double) -> None:
    simulator.set_capabilities({"instance_id": "fgi_00000000", "generation": "gen_01", "change_feed": False})
    assert client_for(simulator).capabilities().package_version is None


def test_projects_lists_the_demo_corpus(simulator: Double) -> None:
    refs = {p.project_ref for p in client_for(simulator).projects()}
    assert {"falcon", "harbour"} <= refs


def test_create_project_sends_the_callers_idempotency_key_and_is_answered_once(simulator: Double) -> None:
    client = client_for(simulator)
    first = client.create_project("Harbour handbook 2", "Notes", idempotency_key="key-123")
    again = client.create_project("Harbour handbook 2", "Notes", idempotency_key="key-123")
    assert first.project_ref == again.project_ref
    assert first.state == "empty"
    posts = [r for r in simulator.requests if r["method"] == "POST"]
    assert [r["idempotency_key"] for r in posts] == ["key-123", "key-123"]


def test_every_post_carries_an_idempotency_key_even_when_the_caller_sent_none(simulator: Double) -> None:
    client_for(simulator).create_project("Minted", "")
    (post,) = [r for r in simulator.requests if r["method"] == "POST"]
    assert post["idempotency_key"]


def test_a_reused_key_with_another_body_is_foragers_refusal(simulator: Double) -> None:
    client = client_for(simulator)
    client.create_project("One", "", idempotency_key="same")
    with pytest.raises(UpstreamRefused) as refused:
        client.create_project("Two", "", idempotency_key="same")
    assert refused.value.upstream_status == 409
    assert refused.value.upstream_code == "idempotency_key_reused"


def test_every_request_carries_the_bearer_credential(simulator: Double) -> None:
    client_for(simulator).projects()
    assert simulator.requests[-1]["headers"]["Authorization"] == "Bearer ***"


def test_a_wrong_credential_is_an_upstream_error_not_a_caller_problem(simulator: Double) -> None:
    with pytest.raises(UpstreamError) as error:
        client_for(simulator, token="wrong").status()
    assert error.value.status == 502
    assert "credential" in error.value.message


@pytest.mark.parametrize(
    ("mode", "raised", "status"),
    [
        ("down", KnowledgeUnreachable, 503),
        ("429", UpstreamError, 502),
        ("5xx", UpstreamError, 502),
        ("malformed", UpstreamError, 502),
        ("reset", UpstreamError, 502),
        ("redirect", UpstreamError, 502),
    ],
)
def test_each_fault_maps_to_its_documented_code(simulator: Double, mode: str, raised: type, status: int) -> None:
    simulator.set_fault(mode)
    try:
        with pytest.raises(raised) as error:
            client_for(simulator).projects()
    finally:
        simulator.clear_faults()
    assert error.value.status == status


def test_slow_past_the_timeout_is_a_504(simulator: Double) -> None:
    simulator.set_fault("slow", delay_seconds=1.0)
    try:
        with pytest.raises(UpstreamTimeout) as error:
            client_for(simulator, timeout=0.2).status()
    finally:
        simulator.clear_faults()
    assert error.value.status == 504


def test_rate_limiting_passes_retry_after_on(simulator: Double) -> None:
    simulator.set_fault("429", retry_after=7)
    try:
        with pytest.raises(UpstreamError) as error:
            client_for(simulator).status()
    finally:
        simulator.clear_faults()
    assert error.value.headers == {"Retry-After": "7"}


def test_a_redirect_is_never_followed(simulator: Double) -> None:
    simulator.set_fault("redirect")
    try:
        with pytest.raises(UpstreamError):
            client_for(simulator).status()
    finally:
        simulator.clear_faults()
    assert all("169.254" not in r["path"] for r in simulator.requests)
