"""The authorization matrix of the pages surface: every pages route × every kind of caller,
through the authorizer and the pages function.

The pages rule is not the ``/knowledge`` one: a route answers only the admin token of the
project — a human principal that is the project's admin or an owner of its organization,
holding the permission the route declares — and tells everyone else 401, never 403. An
agent is never the admin token.
"""

from __future__ import annotations

import pytest

from devstack.gateway import Gateway
from devstack.lambdas import FunctionHost
from devstack.template import Template
from knowledge_service.domain.pages.tree import forget_walks
from knowledge_service.edge.catalog import RouteInfo, pages_routes
from knowledge_service.identity.principal import (
    Permission,
    PrincipalKind,
    ProjectRole,
)
from knowledge_service.runtime import Runtime
from tests.authorization_matrix import PROJECT, Caller, Expect, callers, enrolled, outcome

ROUTES = pages_routes()
CALLERS = callers()


def expectation(route: RouteInfo, caller: Caller) -> Expect:
    if caller.token != "valid" or caller.kind is PrincipalKind.AGENT:
        return Expect.UNAUTHENTICATED
    if Permission(str(route.permission)) not in caller.permissions:
        return Expect.UNAUTHENTICATED
    if caller.roles.get(PROJECT) is ProjectRole.ADMIN or "colony" in caller.owns:
        return Expect.ALLOWED
    return Expect.UNAUTHENTICATED


def target_of(route: RouteInfo) -> tuple[str, str | None]:
    path = route.path.replace("{id}", PROJECT).replace("{path}", "notes/x.md")
    query = "?path=notes/x.md" if route.path.endswith(("/versions", "/backlinks")) else ""
    query = "?q=notes" if route.path.endswith("/search") else query
    body = '{"content": "x"}' if route.method == "PUT" else "{}" if route.method == "POST" else None
    return path + query, body


@pytest.fixture
def gateway(aws: Runtime) -> tuple[Gateway, dict[str, str]]:
    forget_walks()
    aws.projects.create(PROJECT, "colony")
    template = Template()
    return Gateway.from_template(template, FunctionHost(template).invoke), enrolled(aws)


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_every_caller_gets_what_the_pages_rule_says(gateway: tuple[Gateway, dict[str, str]], route: RouteInfo) -> None:
    app, tokens = gateway
    target, body = target_of(route)
    mismatches = []
    for row in CALLERS:
        headers = [("Content-Type", "application/json")]
        if row.name in tokens:
            headers.append(("Authorization", f"Bearer {tokens[row.name]}"))
        status = app.handle(route.method, target, headers, (body or "").encode()).status
        expected = expectation(route, row)
        if outcome(status) is not expected:
            mismatches.append(f"{row.name}: expected {expected.value}, answered {status}")
    assert mismatches == []


def test_the_pages_routes_are_all_covered() -> None:
    assert len(ROUTES) == 15
    assert all(r.project_access == "admin" for r in ROUTES)
