"""Every route that reads a JSON body, on every surface, reads it through the one bounded
reader (``edge/body.py``): a body too deep, too large or holding a number too long is the
caller's 400 naming ``body``, in the surface's own shape, never a ``RecursionError`` 500.

The routes are derived from the OpenAPI document (every operation declaring an
``application/json`` body) and from the pages surface's own routes (every page write reads
a JSON body itself); the calls go through the in-process API Gateway, as a caller sends them.
``/mcp`` answers JSON-RPC and is held by ``tests/unit/test_mcp_tools.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from devstack.gateway import Gateway
from devstack.lambdas import FunctionHost
from devstack.samples import SAMPLE_IDS
from devstack.template import Template
from knowledge_service.domain.pages.tree import forget_walks
from knowledge_service.edge.openapi import openapi_document
from knowledge_service.identity.principal import Permission, Principal, ProjectRole, mint_token, token_hash
from knowledge_service.runtime import Runtime
from local_engine.double import Double
from tests.unit.test_request_bodies import UNREADABLE

PAGES = "/api/v1/projects/"
VERBS = "/v/"


def json_body_routes() -> list[tuple[str, str]]:
    routes = []
    for path, operations in openapi_document()["paths"].items():
        for method, operation in operations.items():
            declared = "application/json" in (operation.get("requestBody") or {}).get("content", {})
            page_write = path.startswith(PAGES) and method in ("put", "post")
            if (declared or page_write) and path != "/mcp":
                routes.append((method.upper(), path))
    return routes


ROUTES = json_body_routes()


def target(path: str) -> str:
    if path.startswith(PAGES):
        return path.replace("{id}", "falcon").replace("{path}", "notes/a.md")
    if path.startswith(VERBS):
        return f"{path}?workspace=falcon"
    concrete = re.sub(r"\{[^}]+\}", SAMPLE_IDS.get([*path.split("/"), "", ""][2], "x"), path)
    return f"{concrete}?project=falcon"


@dataclass
class Caller:
    gateway: Gateway
    token: str

    def send(self, method: str, path: str, body: str) -> tuple[int, str, Any]:
        headers = [("Authorization", f"Bearer {self.token}"), ("Content-Type", "application/json")]
        answer = self.gateway.handle(method, target(path), headers, body.encode())
        return answer.status, answer.header("Content-Type") or "", json.loads(answer.body)


@pytest.fixture
def caller(knowledge_on: Runtime, forager: Double) -> Iterator[Caller]:
    forget_walks()
    token = mint_token()
    ada = Principal(
        name="ada",
        permissions=frozenset(Permission),
        project_roles={"falcon": ProjectRole.ADMIN},
        organizations=frozenset({"colony"}),
    )
    knowledge_on.principals.create(ada, token_hash(token))
    template = Template()
    yield Caller(Gateway.from_template(template, FunctionHost(template).invoke), token)
    forget_walks()


def test_the_walk_finds_every_surfaces_body_routes() -> None:
    found = set(ROUTES)
    assert {
        ("PUT", "/api/v1/projects/{id}/kb/pages/{path}"),
        ("POST", "/api/v1/projects/{id}/kb/pages/{path}/review"),
        ("POST", "/api/v1/projects/{id}/kb/pages/{path}/revert"),
        ("POST", "/api/v1/projects/{id}/kb/promote"),
        ("POST", "/v/knowledge.propose"),
        ("POST", "/settings"),
        ("POST", "/knowledge/upload"),
        ("POST", "/knowledge/jobs"),
    } <= found


@pytest.mark.parametrize("kind", ["nested 990 deep", "nested one past the bound", "an integer of 5,000 digits"])
@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_a_hostile_body_is_a_400_naming_the_body_in_the_surfaces_shape(
    caller: Caller, method: str, path: str, kind: str
) -> None:
    status, media, body = caller.send(method, path, UNREADABLE[kind]())
    assert status == 400, body
    if path.startswith(PAGES):
        assert media == "application/problem+json"
        assert body["status"] == 400 and body["code"] == "invalid_argument" and body["detail"].startswith("body: ")
    elif path.startswith(VERBS):
        assert media.startswith("application/json")
        assert set(body) == {"error", "code"} and body["error"].startswith("body: ")
    else:
        assert media.startswith("application/json")
        assert body["success"] is False and body["code"] == "bad_request" and body["message"].startswith("body: ")
