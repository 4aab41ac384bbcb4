"""The headers every answer carries (issue 39, ``edge/answer_headers.py``), through the in-process
API Gateway and each function's own door, as a caller meets them: every answer ``nosniff``;
every API answer ``Cache-Control: no-store`` (the authenticated ones included, which carried
none but sign-in's); every answer under ``/console/``, its 404s included, the console's CSP and
``Referrer-Policy``; HSTS over HTTPS only; and API Gateway's own answers the same headers."""

from __future__ import annotations

import pytest

from devstack.gateway import Gateway, HttpAnswer
from devstack.lambdas import FunctionHost
from devstack.template import Template
from knowledge_service.edge.answer_headers import HSTS, REFUSAL_POLICY
from knowledge_service.edge.catalog import RouteInfo, knowledge_routes, pages_routes, verbs_routes
from knowledge_service.identity.principal import mint_token, token_hash
from knowledge_service.runtime import Runtime
from tests.authorization_matrix import request_for
from tests.conftest import ADMIN

ROUTES = knowledge_routes() + verbs_routes() + pages_routes()
MISSES_UNDER_CONSOLE = ["/console/nope.html", "/console/a/b/c", "/console/../etc/passwd", "/console/%2e%2e/x"]


@pytest.fixture
def gateway(knowledge_on: Runtime) -> tuple[Gateway, str]:
    token = mint_token()
    knowledge_on.principals.create(ADMIN, token_hash(token))
    template = Template()
    return Gateway.from_template(template, FunctionHost(template).invoke), token


def concrete(route: RouteInfo) -> tuple[str, bytes]:
    if route.path.startswith("/api/v1/projects/"):
        return route.path.replace("{id}", "falcon").replace("{path}", "notes/a.md"), b"{}"
    if route.path.startswith("/v/"):
        return f"{route.path}?workspace=falcon", b"{}"
    target, body = request_for(route)
    return target, (body or "").encode()


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_every_authenticated_api_answer_is_no_store_and_nosniff(gateway: tuple[Gateway, str], route: RouteInfo) -> None:
    app, token = gateway
    target, body = concrete(route)
    headers = [("Authorization", f"Bearer {token}"), ("Content-Type", "application/json")]
    answer = app.handle(route.method, target, headers, body)
    assert answer.header("X-Content-Type-Options") == "nosniff", (answer.status, answer.headers)
    assert answer.header("Cache-Control") == "no-store", (answer.status, answer.headers)
    assert answer.header("Strict-Transport-Security") is None  # plain HTTP: no HSTS


def test_an_mcp_answer_is_no_store_and_nosniff(gateway: tuple[Gateway, str]) -> None:
    app, _ = gateway
    answer = app.handle("POST", "/mcp", [("Content-Type", "application/json")], b"{}")
    assert answer.status == 401
    assert (answer.header("X-Content-Type-Options"), answer.header("Cache-Control")) == ("nosniff", "no-store")


@pytest.mark.parametrize("target", MISSES_UNDER_CONSOLE)
def test_a_miss_under_console_carries_the_consoles_policy_headers(gateway: tuple[Gateway, str], target: str) -> None:
    app, _ = gateway
    answer = app.handle("GET", target, [], b"")
    assert answer.status == 404, answer.body
    assert answer.header("Content-Security-Policy") == REFUSAL_POLICY
    assert answer.header("X-Content-Type-Options") == "nosniff"
    assert answer.header("Referrer-Policy") == "no-referrer"


def test_a_console_file_keeps_its_own_policy(gateway: tuple[Gateway, str]) -> None:
    app, _ = gateway
    answer = app.handle("GET", "/console/", [], b"")
    assert answer.status == 200
    assert answer.header("Content-Security-Policy") not in (None, REFUSAL_POLICY)
    assert answer.header("Cache-Control") == "no-cache"  # its own: revalidated by its ETag


@pytest.mark.parametrize("target", ["/console/", "/console/nope.html", "/knowledge/status"])
def test_hsts_is_sent_over_https_only(gateway: tuple[Gateway, str], target: str) -> None:
    app, token = gateway
    over_https = app.handle("GET", target, [("X-Forwarded-Proto", "https"), ("Authorization", f"Bearer {token}")], b"")
    assert over_https.header("Strict-Transport-Security") == HSTS
    plain = app.handle("GET", target, [("Authorization", f"Bearer {token}")], b"")
    assert plain.header("Strict-Transport-Security") is None


@pytest.mark.parametrize("target", ["/nowhere", "//knowledge/status", "/knowledge//status"])
def test_the_gateways_own_answers_carry_the_same_headers(gateway: tuple[Gateway, str], target: str) -> None:
    app, _ = gateway
    answer: HttpAnswer = app.handle("GET", target, [], b"")
    assert answer.status == 404
    assert answer.header("X-Content-Type-Options") == "nosniff"
    assert answer.header("Cache-Control") == "no-store"
