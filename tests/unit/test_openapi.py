"""The API describes itself, and the committed description is what the code generates."""

from __future__ import annotations

import json
from pathlib import Path

from knowledge_service.edge.catalog import knowledge_routes
from knowledge_service.edge.openapi import openapi_document, render

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def test_the_committed_document_is_what_the_code_generates() -> None:
    assert COMMITTED.read_text() == render(), (
        "the API contract changed: run `make openapi` and commit docs/openapi.json"
    )


def test_every_route_is_described_with_its_permission() -> None:
    document = openapi_document()
    for route in knowledge_routes():
        operation = document["paths"][route.path][route.method.lower()]
        assert operation["x-permission"] == route.permission


def test_the_document_says_400_where_powertools_would_say_422() -> None:
    document = openapi_document()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            assert "422" not in responses, f"{method} {path}"
            assert {"400", "401", "403", "404", "500"} <= set(responses), f"{method} {path}"
            assert {"200", "303"} & set(responses), f"{method} {path}: no success (a 303 is the download's)"
            assert responses["400"]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/ErrorEnvelope"
            }


def test_every_operation_is_behind_the_bearer_scheme() -> None:
    document = openapi_document()
    assert document["openapi"].startswith("3.1")
    assert document["security"] == [{"bearer": []}]
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert "HTTPValidationError" not in json.dumps(document)
