"""The API describes itself, and the committed description is what the code generates."""

from __future__ import annotations

import json
import re
from pathlib import Path

from knowledge_service.edge.access import PUBLIC
from knowledge_service.edge.catalog import all_routes, pages_routes
from knowledge_service.edge.openapi import openapi_document, render

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def test_the_committed_document_is_what_the_code_generates() -> None:
    assert COMMITTED.read_text() == render(), (
        "the API contract changed: run `make openapi` and commit docs/openapi.json"
    )


def test_every_route_is_described_with_its_permission() -> None:
    document = openapi_document()
    for route in all_routes():
        if route.permission == PUBLIC:
            assert route.path not in document["paths"]  # the console's files are not the API
            continue
        operation = document["paths"][route.path][route.method.lower()]
        assert operation["x-permission"] == route.permission


def test_the_document_says_400_where_powertools_would_say_422() -> None:
    document = openapi_document()
    for path, operations in document["paths"].items():
        if path.startswith("/api/v1/projects/") or path == "/mcp":
            continue  # the pages surface: problem+json, below; /mcp: the MCP SDK's answers, below
        for method, operation in operations.items():
            responses = operation["responses"]
            if "422" in responses:  # only a route's own idempotency_key_reused, in the envelope
                assert responses["422"]["content"]["application/json"]["schema"] == {
                    "$ref": "#/components/schemas/ErrorEnvelope"
                }, f"{method} {path}"
            assert {"400", "401", "403", "404", "500"} <= set(responses), f"{method} {path}"
            assert {"200", "303"} & set(responses), f"{method} {path}: no success (a 303 is the download's)"
            refusal = "VerbError" if path == "/v" or path.startswith("/v/") else "ErrorEnvelope"
            assert responses["400"]["content"]["application/json"]["schema"] == {
                "$ref": f"#/components/schemas/{refusal}"
            }


def test_a_multipart_route_documents_both_of_its_bodies() -> None:
    document = openapi_document()
    for path in ("/knowledge/upload", "/knowledge/preflight"):
        content = document["paths"][path]["post"]["requestBody"]["content"]
        assert content["multipart/form-data"]["schema"]["properties"]["files"]["items"]["format"] == "binary"
        assert "session_id" in content["application/json"]["schema"]["properties"]
        assert "x-request-body" not in document["paths"][path]["post"]


def test_every_operation_is_behind_the_bearer_scheme() -> None:
    document = openapi_document()
    assert document["openapi"].startswith("3.1")
    assert document["security"] == [{"bearer": []}]
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert "HTTPValidationError" not in json.dumps(document)


def test_every_verb_is_described_with_its_body_its_workspace_and_its_tier() -> None:
    document = openapi_document()
    verbs = [r for r in all_routes() if r.path.startswith("/v/")]
    assert len(verbs) == 10
    for route in verbs:
        operation = document["paths"][route.path]["post"]
        body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
        assert document["components"]["schemas"][body]["additionalProperties"] is False, route.path
        (workspace,) = [p for p in operation["parameters"] if p["name"] == "workspace"]
        assert workspace["required"] is True
        assert {"capability", "riskClass", "minAutonomy", "minPermission", "mcpTier", "idempotent"} <= set(
            operation["x-verb"]
        )


def test_a_verbs_401_is_described_as_api_gateways_envelope_too() -> None:
    """API Gateway answers a missing or bad token before the verbs' function runs."""
    document = openapi_document()
    for path, operations in document["paths"].items():
        if path == "/v" or path.startswith("/v/"):
            for operation in operations.values():
                schema = operation["responses"]["401"]["content"]["application/json"]["schema"]
                assert {"$ref": "#/components/schemas/ErrorEnvelope"} in schema["anyOf"], path


def test_the_pages_surface_is_described_with_problem_json_refusals() -> None:
    document = openapi_document()
    for route in pages_routes():
        operation = document["paths"][route.path][route.method.lower()]
        assert operation["x-permission"] == route.permission
        responses = operation["responses"]
        assert "422" not in responses and "403" not in responses
        success = "303" if route.path.endswith("/archive") else "200"  # the archive is handed over by URL
        assert {success, "400", "401", "404", "500"} <= set(responses)
        assert responses["401"]["content"]["application/problem+json"]["schema"] == {
            "$ref": "#/components/schemas/Problem"
        }


def test_mcp_is_described_behind_the_mission_credential_with_its_json_rpc_body() -> None:
    operation = openapi_document()["paths"]["/mcp"]["post"]
    assert operation["security"] == [{"mission": []}]
    assert operation["x-permission"] == "mission_credential"
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["jsonrpc", "method"] and "tools/call" in body["properties"]["method"]["enum"]
    assert {"200", "202", "400", "401", "413", "500"} <= set(operation["responses"])
    assert "application/json" in operation["responses"]["401"]["content"]  # a JSON-RPC error, as every refusal


_PYDANTIC_WORDS = frozenset({"ge", "le", "gt", "lt", "multiple_of", "min_length", "max_length"})
"""pydantic's names for constraints: in a schema, a tool reads none of them (JSON Schema says
``minimum``, ``maximum``, ``minLength``…), so a bound written so is no bound to a client."""


def _pydantic_words(node: object, path: str, under_properties: bool = False) -> list[str]:
    if isinstance(node, list):
        return [hit for i, item in enumerate(node) for hit in _pydantic_words(item, f"{path}/{i}")]
    if not isinstance(node, dict):
        return []
    hits = [] if under_properties else [f"{path}/{key}" for key in node if key in _PYDANTIC_WORDS]
    for key, value in node.items():  # a property may be named like one: only its schema is read
        hits += _pydantic_words(value, f"{path}/{key}", under_properties=key == "properties" and not under_properties)
    return hits


def test_every_schema_states_its_bounds_in_json_schema_words() -> None:
    assert _pydantic_words(openapi_document(), "") == []


def test_the_mcp_request_id_is_bounded_where_a_client_reads_it() -> None:
    body = openapi_document()["paths"]["/mcp"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    integer = next(s for s in body["properties"]["id"]["anyOf"] if s["type"] == "integer")
    assert (integer["minimum"], integer["maximum"]) == (-(2**53 - 1), 2**53 - 1)


def test_every_schema_has_a_public_name_of_its_own() -> None:
    # Two models of one class name are named by module path (knowledge_service__domain__…),
    # which a generated client cannot resolve: every model's class name is unique.
    names = list(openapi_document()["components"]["schemas"])
    assert [n for n in names if "__" in n or n.startswith("knowledge_service")] == []


OPERATION_ID_MAX = 30
"""A generated client names a function module after the operationId, and its inline models
after it too (``review_page_json_body``): short ids keep every name under 40 characters
(tests/e2e/test_generated_client.py holds the generated names)."""


def test_every_operation_has_a_short_unique_operation_id_of_its_own() -> None:
    # Given every operation of every surface in the document
    document = openapi_document()
    operations = [(m, p, op) for p, ops in document["paths"].items() for m, op in ops.items()]
    ids = [op["operationId"] for _, _, op in operations]
    # Then no two share an id,
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for method, path, operation in operations:
        named = operation["operationId"]
        # each is short snake_case words, and was declared by its route (operation_id=): Powertools'
        # automatic id is the function's name, the path and the method (get_search_knowledge_search_get)
        assert re.fullmatch(r"[a-z]+(_[a-z0-9]+)*", named), f"{method} {path}: {named}"
        assert len(named) <= OPERATION_ID_MAX, f"{method} {path}: {named} is longer than {OPERATION_ID_MAX}"
        assert not named.endswith(f"_{method}"), f"{method} {path}: {named} is Powertools' automatic id"
