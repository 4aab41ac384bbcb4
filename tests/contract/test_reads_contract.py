"""The FORAGER client's read methods against the simulator: docs/upstream-contract.md, "Reads"."""

from __future__ import annotations

import pytest

from knowledge_service.errors import UpstreamRefused
from knowledge_service.upstream.client import ForagerClient
from local_engine.double import Double
from tests import demo

pytestmark = pytest.mark.contract


@pytest.fixture
def client(simulator: Double) -> ForagerClient:
    return ForagerClient(simulator.url, simulator.token, timeout_seconds=2.0)


def test_search_and_retrieve(client: ForagerClient) -> None:
    found = client.search("falcon", "launch date", limit=5, include_historical=False)
    assert found.backend == "sqlite-fts5+wordllama" and found.hits
    assert any(h.status == "Disputed" and h.contested for h in found.hits)
    context = client.retrieve("falcon", "launch date", top_k=3, include_historical=False)
    assert len(context.items) <= 3 and context.conflicts and context.rendered.endswith("\n")


def test_record_routes_are_not_project_scoped_and_carry_project_ref(client: ForagerClient) -> None:
    assert client.knowledge_item(demo.statement("harbour", "Mooring requests")).project_ref == "harbour"
    assert client.evidence(demo.statement("falcon", "March 3, 2026")).project_ref == "falcon"
    assert client.entity(demo.entity("harbour", "Ingrid Olsen")).project_ref == "harbour"
    assert client.source(demo.source("harbour", "safety.md")).source.project_ref == "harbour"


def test_a_missing_record_is_foragers_404(client: ForagerClient) -> None:
    with pytest.raises(UpstreamRefused) as refused:
        client.knowledge_item("ki_" + "0" * 16)
    assert refused.value.upstream_status == 404


def test_people_entities_statements_duplicates_sources_conflicts(client: ForagerClient) -> None:
    people = client.people("falcon", q=None, types=["person"], sort="name", page=1, page_size=50)
    assert people.total == 2
    assert client.entities_named("falcon", "Bob Smith").entities[0].name == "Robert Smith"
    page = client.statements("falcon", {"status": "disputed"}, page=1, page_size=25)
    assert page.total == 1 and page.facets["status"] == {"disputed": 1}
    assert client.duplicates("falcon", "pending").pending == 1
    assert {s.name for s in client.registered_sources("harbour").sources} == {
        "handbook.md",
        "safety.md",
        "site-safety.md",
    }
    assert [c.status for c in client.conflicts("falcon", "open").conflicts] == ["open"]
