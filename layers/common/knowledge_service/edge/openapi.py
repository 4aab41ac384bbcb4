"""The API's own description: OpenAPI 3.1, generated from the routers and their models.

Powertools generates the document; this module makes it say what the API really
answers: the 400 ``bad_request`` envelope instead of Powertools' 422, the 401 the
authorizer answers and the 403 the access layer answers on every operation, and the
bearer scheme. ``make openapi`` writes it to ``docs/openapi.json``; a test fails when the
committed file differs from what the code generates.

    python -m knowledge_service.edge.openapi > docs/openapi.json
"""

from __future__ import annotations

import json
import sys
from typing import Any

from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer, Server

from knowledge_service.domain.identifiers import PROJECT_ID
from knowledge_service.domain.verbs.models import INPUTS
from knowledge_service.edge.access import REQUEST_BODY_KEY
from knowledge_service.edge.catalog import full_knowledge_api, full_mcp_api, full_pages_api
from knowledge_service.edge.envelope import ERROR_DESCRIPTIONS
from knowledge_service.edge.problem import PROBLEM_DESCRIPTIONS, PROBLEM_JSON
from knowledge_service.edge.routes import verbs
from knowledge_service.edge.verbs_resolver import VERB_ERROR_DESCRIPTIONS

TITLE = "Knowledge service"
VERSION = "0.1.0"
DESCRIPTION = (
    "The authenticated edge in front of the FORAGER knowledge engine. Every operation takes "
    "`Authorization: Bearer <token>`; `x-permission` names the installation permission it "
    "takes and `x-capability` the commercial capability, where one applies. Answers are the "
    "`{success, message, data}` envelope; a refusal carries `data: null` and a `code`. "
    "The verbs (`/v/<verb>`, tag `verbs`) keep their own convention: camelCase JSON in and out, "
    "`{error, code}` on refusal, the workspace named by `?workspace=`; `x-verb` says each verb's "
    "capability, risk class, minimum permission and autonomy, MCP tier and idempotency."
)
VERBS_PREFIX = "/v"
_POWERTOOLS_ONLY = ("HTTPValidationError", "ValidationError", "ResponseValidationError")
ALWAYS = ("400", "401", "403", "404", "500")  # 404: also a method the path does not take
PAGES_ALWAYS = ("400", "401", "404", "500")  # the pages surface answers no 403: the admin token or 401


def openapi_document() -> dict[str, Any]:
    app = full_knowledge_api()
    app.include_router(verbs.router)  # one document for every surface (the fuzz run covers them all)
    document: dict[str, Any] = json.loads(
        app.get_openapi_json_schema(
            title=TITLE,
            version=VERSION,
            openapi_version="3.1.0",
            description=DESCRIPTION,
            servers=[Server(url="/")],
            security_schemes={"bearer": HTTPBearer(bearerFormat="ks_ token")},
            security=[{"bearer": []}],
        )
    )
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for path, operations in document["paths"].items():
        is_verb = path == VERBS_PREFIX or path.startswith(VERBS_PREFIX + "/")
        for method, operation in operations.items():
            form = operation.pop(REQUEST_BODY_KEY, None)
            if form is not None:  # a body the route reads itself (multipart): documented as declared
                operation["requestBody"] = form
            responses = operation["responses"]
            if "HTTPValidationError" in json.dumps(responses.get("422", {})):
                responses.pop("422")  # Powertools' own; a route's declared 422 is the envelope's
            for status in ALWAYS:
                responses.setdefault(status, _verb_refusal(int(status)) if is_verb else _refusal(int(status)))
            if is_verb:  # API Gateway answers 401 itself, in the envelope, before any function runs
                responses["401"] = _gateway_or_verb_401()
            operation["responses"] = dict(sorted(responses.items()))
            if is_verb and method == "post":
                _describe_verb_input(operation, path.removeprefix(VERBS_PREFIX + "/"), schemas)
    _add_pages(document)
    _add_mcp(document)
    schemas = document["components"]["schemas"]
    for name in _POWERTOOLS_ONLY:  # the 422's schemas, now referenced by nothing
        schemas.pop(name, None)
    text = json.dumps(document)
    dangling = [name for name in _POWERTOOLS_ONLY if f'"#/components/schemas/{name}"' in text]
    if dangling:
        raise RuntimeError(f"the document still refers to {dangling}")
    return document


def _add_pages(document: dict[str, Any]) -> None:
    """The pages surface (``/api/v1/projects/{id}/kb/*``) joins the document, with its own
    refusals: ``application/problem+json`` with the hub ``code``."""
    pages: dict[str, Any] = json.loads(full_pages_api().get_openapi_json_schema(openapi_version="3.1.0"))
    for path, operations in pages["paths"].items():
        for operation in operations.values():
            responses = operation["responses"]
            responses.pop("422", None)
            for status in PAGES_ALWAYS:
                responses.setdefault(status, _problem(int(status)))
            operation["responses"] = dict(sorted(responses.items()))
        document["paths"][path] = operations
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in pages.get("components", {}).get("schemas", {}).items():
        schemas.setdefault(name, schema)
    document["components"]["schemas"] = dict(sorted(schemas.items()))


def _add_mcp(document: dict[str, Any]) -> None:
    """``POST /mcp`` joins the document behind its own scheme: the ``km_`` mission credential."""
    mcp: dict[str, Any] = json.loads(full_mcp_api().get_openapi_json_schema(openapi_version="3.1.0"))
    for path, operations in mcp["paths"].items():
        for operation in operations.values():
            operation["requestBody"] = operation.pop(REQUEST_BODY_KEY)
            operation["responses"].pop("422", None)
            for bare in ("202", "406"):  # no body: an accepted notification, a refused Accept
                operation["responses"].get(bare, {}).pop("content", None)
            operation["responses"] = dict(sorted(operation["responses"].items()))
            operation["security"] = [{"mission": []}]
        document["paths"][path] = operations
    schemes = document["components"].setdefault("securitySchemes", {})
    schemes["mission"] = {"type": "http", "scheme": "bearer", "bearerFormat": "km_ mission credential"}


def _problem(status: int) -> dict[str, Any]:
    content: dict[str, Any] = {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}
    if status == 401:  # no token at all is refused by the authorizer, in API Gateway's own answer
        content["application/json"] = {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}
    return {"description": PROBLEM_DESCRIPTIONS[status], "content": content}


def _refusal(status: int) -> dict[str, Any]:
    return {
        "description": ERROR_DESCRIPTIONS[status],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}},
    }


def _verb_refusal(status: int) -> dict[str, Any]:
    return {
        "description": VERB_ERROR_DESCRIPTIONS[status],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/VerbError"}}},
    }


def _gateway_or_verb_401() -> dict[str, Any]:
    return {
        "description": VERB_ERROR_DESCRIPTIONS[401] + " (API Gateway's own answer, in the envelope, over HTTP)",
        "content": {
            "application/json": {
                "schema": {
                    "anyOf": [
                        {"$ref": "#/components/schemas/ErrorEnvelope"},
                        {"$ref": "#/components/schemas/VerbError"},
                    ]
                }
            }
        },
    }


def _describe_verb_input(operation: dict[str, Any], verb: str, schemas: dict[str, Any]) -> None:
    """The verb's body (read by the front door, not by Powertools) and its required workspace."""
    model = INPUTS[verb]
    schema = model.model_json_schema(by_alias=True, ref_template="#/components/schemas/{model}")
    for name, definition in schema.pop("$defs", {}).items():
        schemas.setdefault(name, definition)
    name = f"{model.__name__}Body"
    schemas[name] = schema
    operation["requestBody"] = {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}},
    }
    for parameter in operation.get("parameters", []):
        if parameter["name"] == "workspace":
            parameter["required"] = True
            parameter["description"] = "The workspace: an ANTHILL project id."
            parameter["schema"] = {"type": "string", "pattern": PROJECT_ID.pattern, "title": "Workspace"}


def render() -> str:
    return json.dumps(openapi_document(), indent=2, sort_keys=False) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
