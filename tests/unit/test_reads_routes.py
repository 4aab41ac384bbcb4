"""The read routes: shapes, scope held at the edge, filters, paging, FORAGER's failures."""

from __future__ import annotations

from collections import Counter
from typing import Any
from unittest import mock
from urllib.parse import parse_qs

import pytest

from devstack.metering import aws_calls
from knowledge_service.domain import reads
from knowledge_service.runtime import Runtime, reset_runtime
from knowledge_service.upstream import models as upstream_models
from local_engine.double import Double
from tests import demo
from tests.conftest import Api, principal

LAUNCH_MARCH = demo.statement("falcon", "March 3, 2026")
LAUNCH_APRIL = demo.statement("falcon", "April 10, 2026")
ROBERT = demo.entity("falcon", "Robert Smith")
R_SMITH = demo.entity("falcon", "R. Smith")
LAUNCH_PLAN = demo.source("falcon", "launch-plan.md")
HARBOUR_ITEM = demo.statement("harbour", "opens at 06:00")
HARBOUR_ENTITY = demo.entity("harbour", "Ingrid Olsen")
HARBOUR_SOURCE = demo.source("harbour", "handbook.md")

BY_ID = {
    "/knowledge/items/{id}": (LAUNCH_MARCH, HARBOUR_ITEM, "ki_" + "0" * 16),
    "/knowledge/items/{id}/evidence": (LAUNCH_MARCH, HARBOUR_ITEM, "ki_" + "0" * 16),
    "/knowledge/entities/{id}": (ROBERT, HARBOUR_ENTITY, "ent_" + "0" * 16),
    "/knowledge/sources/{id}": (LAUNCH_PLAN, HARBOUR_SOURCE, "src_" + "0" * 16),
}


def get(api: Api, resource: str, query: dict[str, str] | None = None, record: str | None = None, **kw: Any) -> Any:
    """GET ``resource`` in project falcon (bound to FORAGER's falcon) unless ``query`` names another."""
    path = resource.replace("{id}", record) if record else resource
    return api.call("GET", path, query={"project": "falcon", **(query or {})}, resource=resource, **kw)


def last_query(forager: Double) -> dict[str, list[str]]:
    return parse_qs(forager.requests[-1]["query"])


# ---------------------------------------------------------------- shapes
def test_search_answers_ranked_hits_with_the_disputed_launch_date(api: Api, knowledge_on: Runtime) -> None:
    answer = get(api, "/knowledge/search", {"q": "launch date"})
    assert answer.status == 200, answer.body
    data = answer.body["data"]
    assert set(data) == {"query", "backend", "took_ms", "hits", "entities"}
    march = next(h for h in data["hits"] if h["knowledge_id"] == LAUNCH_MARCH)
    assert (march["status"], march["contested"], march["support"]) == ("Disputed", True, "DirectFact")
    assert set(march) == {
        "knowledge_id", "statement", "type", "support", "status", "confidence", "score", "why",
        "evidence_count", "contested",
    }  # fmt: skip


def test_search_without_q_is_400_naming_it(api: Api, knowledge_on: Runtime) -> None:
    for query in ({}, {"q": ""}, {"q": "   "}):
        answer = get(api, "/knowledge/search", query)
        assert (answer.status, answer.body["code"]) == (400, "bad_request")
        assert answer.body["message"].startswith("q:")


@pytest.mark.parametrize(("limit", "sent"), [("0", "1"), ("500", "50"), ("7", "7")])
def test_search_limit_is_clamped_not_refused(
    api: Api, knowledge_on: Runtime, forager: Double, limit: str, sent: str
) -> None:
    answer = get(api, "/knowledge/search", {"q": "launch", "limit": limit})
    assert answer.status == 200
    assert last_query(forager)["limit"] == [sent]


def test_include_historical_reaches_the_superseded_statement(api: Api, knowledge_on: Runtime) -> None:
    plain = get(api, "/knowledge/search", {"q": "first set november"}).body["data"]["hits"]
    historical = get(api, "/knowledge/search", {"q": "first set november", "include_historical": "true"})
    assert all(h["status"] != "Superseded" for h in plain)
    assert any(h["status"] == "Superseded" for h in historical.body["data"]["hits"])


def test_retrieve_answers_context_and_the_rendered_text(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call(
        "POST", "/knowledge/retrieve", body={"query": "why did the launch date change", "top_k": 8, "project": "falcon"}
    )
    assert answer.status == 200, answer.body
    data = answer.body["data"]
    assert set(data) == {"query", "project", "items", "entities", "conflicts", "rendered"}
    assert data["conflicts"][0]["status"] == "open"
    assert "April 10, 2026" in data["rendered"] and "March 3, 2026" in data["rendered"]
    assert all("evidence" in item for item in data["items"])


def test_retrieve_refuses_include_conflicts_as_an_unknown_field(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call(
        "POST", "/knowledge/retrieve", body={"query": "launch", "include_conflicts": False, "project": "falcon"}
    )
    assert (answer.status, answer.body["code"]) == (400, "bad_request")
    assert answer.body["message"].startswith("include_conflicts:")


def test_retrieve_takes_the_project_from_the_body(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call("POST", "/knowledge/retrieve", body={"query": "launch", "project": "colony-docs"})
    assert (answer.status, answer.body["code"]) == (404, "not_found")


def test_item_carries_the_review_fields(api: Api, knowledge_on: Runtime) -> None:
    data = get(api, "/knowledge/items/{id}", record=LAUNCH_APRIL).body["data"]
    assert (data["review_status"], data["reviewed_by"]) == ("reviewed", "admin")
    for field in ("review_notes", "reviewed_at", "evidence_ids", "conflict_ids", "has_provenance", "contested"):
        assert field in data


def test_evidence_quotes_the_documents_words_exactly(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    data = get(api, "/knowledge/items/{id}/evidence", record=LAUNCH_MARCH).body["data"]
    assert data["knowledge_id"] == LAUNCH_MARCH
    links = data["evidence"]
    for link in links:
        assert {"source_name", "location", "excerpt", "excerpt_hash", "extractor", "missing_excerpt"} <= set(link)
        text = forager.state.store.value("SELECT text FROM sources WHERE source_id = ?", link["source_id"])
        assert not link["missing_excerpt"] and link["excerpt"] in text
    assert [link["excerpt"] for link in links] == ["The launch date for Project Falcon is March 3, 2026."]


def test_entities_by_name_resolves_bob_to_robert(api: Api, knowledge_on: Runtime) -> None:
    data = get(api, "/knowledge/entities", {"name": "Bob Smith"}).body["data"]
    assert [(e["name"], e["aliases"]) for e in data["entities"]] == [("Robert Smith", ["Bob Smith"])]


def test_entities_without_name_is_the_paged_people_list(api: Api, knowledge_on: Runtime) -> None:
    data = get(api, "/knowledge/entities", {"type": "person", "sort": "confidence"}).body["data"]
    assert (data["page"], data["page_size"], data["total"]) == (1, 50, 2)
    assert [e["name"] for e in data["entities"]] == ["R. Smith", "Robert Smith"]  # least confident first


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"page_size": "101"}, "page_size"),
        ({"page_size": "0"}, "page_size"),
        ({"page": "0"}, "page"),
        ({"type": "Person"}, "type"),
        ({"type": "person,org-x"}, "type"),
        ({"sort": "newest"}, "sort"),
    ],
)
def test_people_list_bounds_and_filters_are_400_naming_them(
    api: Api, knowledge_on: Runtime, query: dict[str, str], field: str
) -> None:
    answer = get(api, "/knowledge/entities", query)
    assert (answer.status, answer.body["code"]) == (400, "bad_request")
    assert answer.body["message"].startswith(f"{field}:")


def test_entity_page_lays_out_what_forager_gathered(api: Api, knowledge_on: Runtime) -> None:
    data = get(api, "/knowledge/entities/{id}", record=ROBERT).body["data"]
    assert data["entity"]["name"] == "Robert Smith"
    assert data["merge_history"][0]["merged_name"] == "Bob Smith"
    pending = data["possible_duplicates"][0]
    assert {pending["entity_a"]["name"], pending["entity_b"]["name"]} == {"Robert Smith", "R. Smith"}
    for field in ("normalized_name", "merged_into", "aliases", "relationships", "statements", "mentions"):
        assert field in data
    assert data["attributes"] == {"roles": ["launch checklist owner"]}  # said beside "Bob Smith", merged in


def test_statements_page_with_filters_facets_and_total(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    data = get(api, "/knowledge/statements", {"status": "disputed,active", "page_size": "2"}).body["data"]
    assert (data["page"], data["page_size"]) == (1, 2)
    assert data["total"] == sum(data["facets"]["status"].values())
    assert len(data["items"]) == 2
    assert last_query(forager)["status"] == ["disputed,active"]
    by_source = get(api, "/knowledge/statements", {"source_id": LAUNCH_PLAN}).body["data"]
    assert LAUNCH_MARCH in {i["knowledge_id"] for i in by_source["items"]}


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"status": "Disputed"}, "status"),
        ({"support": "direct fact"}, "support"),
        ({"review_status": "un-reviewed"}, "review_status"),
        ({"source_id": "launch-plan.md"}, "source_id"),
        ({"entity_id": "ent_xyz"}, "entity_id"),
        ({"page_size": "101"}, "page_size"),
    ],
)
def test_statement_filters_take_forager_words_only(
    api: Api, knowledge_on: Runtime, forager: Double, query: dict[str, str], field: str
) -> None:
    seen = len(forager.requests)
    answer = get(api, "/knowledge/statements", query)
    assert (answer.status, answer.body["message"].split(":")[0]) == (400, field)
    assert len(forager.requests) == seen


def test_duplicates_pending_by_default_and_all(api: Api, knowledge_on: Runtime) -> None:
    pending = get(api, "/knowledge/duplicates").body["data"]
    assert pending["pending"] == 1
    assert [d["status"] for d in pending["duplicates"]] == ["pending"]
    assert pending["duplicates"][0]["candidate_id"].startswith("mc_")
    every = get(api, "/knowledge/duplicates", {"status": "all"}).body["data"]
    assert len(every["duplicates"]) == 2
    assert get(api, "/knowledge/duplicates", {"status": "merged"}).status == 400


def test_sources_list_and_one_source_page(api: Api, knowledge_on: Runtime) -> None:
    listed = get(api, "/knowledge/sources").body["data"]["sources"]
    assert LAUNCH_PLAN in {s["source_id"] for s in listed}
    assert {"content_hash", "type", "size_bytes", "processing_status", "document_date", "duplicate_of"} <= set(
        listed[0]
    )
    page = get(api, "/knowledge/sources/{id}", record=LAUNCH_PLAN).body["data"]
    assert page["source"]["source_id"] == LAUNCH_PLAN
    assert page["chunk_total"] == len(page["chunks"]) == 1  # one heading, one chunk
    assert {
        "chunk_id",
        "index",
        "location",
        "text",
        "char_start",
        "char_end",
        "token_estimate",
        "content_hash",
        "heading",
    } == set(page["chunks"][0])


def test_a_source_page_keeps_the_first_200_chunks_cut_to_400_characters() -> None:
    row = upstream_models.SourceRow(
        source_id=LAUNCH_PLAN,
        project_ref="falcon",
        name="long.md",
        type="markdown",
        size_bytes=1,
        content_hash="x",
        processing_status="completed",
    )
    chunks = [upstream_models.Chunk(chunk_id=f"ch_{i}", index=i, text="x" * 1000) for i in range(250)]
    upstream = mock.Mock()
    upstream.source.return_value = upstream_models.SourceDetail(source=row, chunks=chunks)
    reader = reads.Reader(mock.Mock(knowledge_base="falcon"), upstream)
    page = reads.source(reader, LAUNCH_PLAN)
    assert (len(page.chunks), page.chunk_total) == (200, 250)
    assert {len(c.text) for c in page.chunks} == {400}


def test_conflicts_open_by_default_with_the_k2_fields(api: Api, knowledge_on: Runtime) -> None:
    conflicts = get(api, "/knowledge/conflicts").body["data"]["conflicts"]
    assert [c["status"] for c in conflicts] == ["open"]
    launch = conflicts[0]
    assert launch["suggested_winner_id"] == LAUNCH_APRIL
    assert launch["decision"] is None and launch["detected_at"]
    assert {s["name"] for s in launch["sources"]} == {"launch-plan.md", "steering-memo.md"}
    decided = get(api, "/knowledge/conflicts", {"status": "decided"}).body["data"]["conflicts"]
    assert [c["decision"]["action"] for c in decided] == ["dismiss"]
    assert len(get(api, "/knowledge/conflicts", {"status": "all"}).body["data"]["conflicts"]) == 2
    assert get(api, "/knowledge/conflicts", {"status": "closed"}).status == 400


# ---------------------------------------------------------------- scope
@pytest.mark.parametrize("resource", sorted(BY_ID))
def test_another_knowledge_bases_id_is_not_found_byte_identical_to_a_missing_one(
    api: Api, knowledge_on: Runtime, resource: str
) -> None:
    ours, theirs, missing = BY_ID[resource]
    assert get(api, resource, record=ours).status == 200
    elsewhere = get(api, resource, record=theirs)
    nowhere = get(api, resource, record=missing)
    assert (elsewhere.status, elsewhere.body["code"]) == (404, "not_found")
    assert elsewhere.raw == nowhere.raw
    assert elsewhere.headers == nowhere.headers


def test_the_same_id_answers_through_the_project_bound_to_its_knowledge_base(api: Api, knowledge_on: Runtime) -> None:
    knowledge_on.config.bind("colony-docs", "harbour", "test")
    assert get(api, "/knowledge/items/{id}", {"project": "colony-docs"}, record=HARBOUR_ITEM).status == 200
    assert get(api, "/knowledge/items/{id}", {"project": "colony-docs"}, record=LAUNCH_MARCH).status == 404


@pytest.mark.parametrize("resource", sorted(BY_ID))
def test_a_malformed_id_is_400_naming_id_and_nothing_is_sent(
    api: Api, knowledge_on: Runtime, forager: Double, resource: str
) -> None:
    seen = len(forager.requests)
    for bad in ("ki_123", "ent_ZZZZZZZZZZZZZZZZ", "x" * 20, BY_ID[resource][0] + "0"):
        answer = get(api, resource, record=bad)
        assert (answer.status, answer.body["message"].split(":")[0]) == (400, "id")
    assert len(forager.requests) == seen


def test_an_unmapped_project_is_not_found(api: Api, knowledge_on: Runtime) -> None:
    answer = get(api, "/knowledge/sources", {"project": "colony-docs"})
    assert (answer.status, answer.body["code"]) == (404, "not_found")


def test_the_console_default_when_no_project_is_named(api: Api, knowledge_on: Runtime) -> None:
    assert api.call("GET", "/knowledge/sources").status == 404  # no console default bound yet
    knowledge_on.config.bind("", "harbour", "test")
    sources = api.call("GET", "/knowledge/sources").body["data"]["sources"]
    assert {s["project_ref"] for s in sources} == {"harbour"}


def test_reading_takes_read_knowledge_and_standing_in_the_project(api: Api, knowledge_on: Runtime) -> None:
    from knowledge_service.identity.principal import Permission

    nobody = principal("pat", Permission.READ_STATUS)
    assert get(api, "/knowledge/sources", {"project": "falcon"}, principal=nobody).status == 403
    outsider = principal("pat", Permission.READ_KNOWLEDGE)  # no role, no ownership: as if falcon were missing
    hidden = get(api, "/knowledge/sources", {"project": "falcon"}, principal=outsider)
    missing = get(api, "/knowledge/sources", {"project": "no-such"}, principal=outsider)
    assert hidden.status == 404 and hidden.raw == missing.raw.replace("no-such", "falcon")


# ---------------------------------------------------------------- FORAGER's failures
@pytest.mark.parametrize(
    ("mode", "status", "code"),
    [("down", 503, "knowledge_unreachable"), ("429", 502, "upstream_error"), ("5xx", 502, "upstream_error")],
)
def test_foragers_failures_answer_in_the_envelope(
    api: Api, knowledge_on: Runtime, forager: Double, mode: str, status: int, code: str
) -> None:
    forager.set_fault(mode)
    for resource, record in (("/knowledge/search", None), ("/knowledge/items/{id}", LAUNCH_MARCH)):
        answer = get(api, resource, {"q": "launch"}, record=record)
        assert (answer.status, answer.body["code"], answer.body["success"]) == (status, code, False)
        assert "Traceback" not in answer.raw


def test_a_slow_forager_is_504(
    api: Api, knowledge_on: Runtime, forager: Double, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORAGER_TIMEOUT_SECONDS", "0.2")
    reset_runtime()
    from knowledge_service.runtime import runtime

    rt = runtime()
    assert rt.env.forager_timeout_seconds == 0.2
    forager.set_fault("slow", delay_seconds=1.0, times=1)
    answer = api.call("POST", "/knowledge/retrieve", body={"query": "launch", "project": "falcon"})
    assert (answer.status, answer.body["code"]) == (504, "upstream_timeout")


def test_knowledge_off_is_503_knowledge_disabled(api: Api, knowledge_on: Runtime) -> None:
    from knowledge_service.models import KnowledgeSettings

    knowledge_on.config.save_settings(KnowledgeSettings(knowledge_enabled=False))
    answer = get(api, "/knowledge/conflicts", {"project": "falcon"})
    assert (answer.status, answer.body["code"]) == (503, "knowledge_disabled")


# ---------------------------------------------------------------- one read of the table
@pytest.mark.parametrize(
    ("method", "resource", "record", "query"),
    [
        ("GET", "/knowledge/search", None, {"q": "launch"}),
        ("POST", "/knowledge/retrieve", None, None),
        ("GET", "/knowledge/items/{id}", LAUNCH_MARCH, None),
        ("GET", "/knowledge/items/{id}/evidence", LAUNCH_MARCH, None),
        ("GET", "/knowledge/entities", None, {"name": "Smith"}),
        ("GET", "/knowledge/entities", None, None),
        ("GET", "/knowledge/entities/{id}", ROBERT, None),
        ("GET", "/knowledge/statements", None, None),
        ("GET", "/knowledge/duplicates", None, None),
        ("GET", "/knowledge/sources", None, None),
        ("GET", "/knowledge/sources/{id}", LAUNCH_PLAN, None),
        ("GET", "/knowledge/conflicts", None, None),
    ],
)
def test_every_read_makes_exactly_one_dynamodb_call(
    api: Api, knowledge_on: Runtime, method: str, resource: str, record: str | None, query: dict[str, str] | None
) -> None:
    path = resource.replace("{id}", record) if record else resource
    body = {"query": "launch"} if method == "POST" else None
    kwargs: dict[str, Any] = {"query": {**(query or {}), "project": "falcon"}, "resource": resource, "body": body}
    assert api.call(method, path, **kwargs).status == 200  # warm: the credential is cached
    with aws_calls() as counts:
        assert api.call(method, path, **kwargs).status == 200
    assert counts == Counter({"dynamodb:BatchGetItem": 1})
