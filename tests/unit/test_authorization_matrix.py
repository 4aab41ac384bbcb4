"""Every route × every kind of caller, through the local gateway and the function (which authenticates), in process.

Generated from the route table; see ``tests/authorization_matrix.py`` for the rules. The
last tests break a route on purpose and show the matrix catches it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Annotated

import pytest
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from devstack.events import rest_event
from devstack.gateway import Gateway, HttpAnswer
from devstack.lambdas import FakeLambdaContext, FunctionHost
from devstack.template import Template
from knowledge_service.edge.access import REQUEST_BODY_KEY, Standing, access, current_call
from knowledge_service.edge.catalog import RouteInfo, full_knowledge_api, knowledge_routes
from knowledge_service.edge.envelope import Envelope, ok
from knowledge_service.edge.resolver import knowledge_api
from knowledge_service.identity.principal import Permission, token_hash
from knowledge_service.identity.session import COOKIE_NAME, CSRF_HEADER
from knowledge_service.runtime import Runtime
from tests.authorization_matrix import (
    INSTALLATION_ORGANIZATION,
    PROJECT,
    SIGN_IN,
    Caller,
    Expect,
    callers,
    enrolled,
    expectation,
    outcome,
    principal_of,
    request_for,
)
from tests.conftest import enrol
from tests.permissions import NOT_YET_BUILT, PERMISSIONS

ROUTES = knowledge_routes()
CALLERS = callers()
ADMIN_AND_OWNER = next(row for row in CALLERS if row.name == "project-admin-and-owner")


@pytest.fixture
def gateway(knowledge_on: Runtime) -> tuple[Gateway, dict[str, str]]:
    """The in-process API Gateway (the functions, each authenticating) and a token per caller."""
    template = Template()
    return Gateway.from_template(template, FunctionHost(template).invoke), enrolled(knowledge_on)


def pinned(route: RouteInfo) -> RouteInfo:
    """The route as the hand-typed table says it must be declared (``tests/permissions.py``):
    the matrix holds the code's behaviour to the specification, not to the code's own word."""
    row = PERMISSIONS.get((route.method, route.path)) or NOT_YET_BUILT.get((route.method, route.path))
    assert row is not None, f"{route.method} {route.path} has no row in tests/permissions.py"
    return replace(route, permission=row.permission.value, project_access=row.project.value, capability=row.capability)


def _form_routes() -> set[tuple[str, str]]:
    """The routes that read a multipart form (their body is declared as ``x-request-body``)."""
    app = full_knowledge_api()
    return {
        (r.method, r.openapi_path)
        for r in app._static_routes + app._dynamic_routes
        if REQUEST_BODY_KEY in (r.openapi_extensions or {})
    }


FORM_ROUTES = _form_routes()
BOUNDARY = "matrix-boundary"


def form_body(project: str | None) -> bytes:
    """A well-formed form: one small file part, and the project field when one is named."""
    parts = ['Content-Disposition: form-data; name="files"; filename="a.md"\r\n\r\n# a\n']
    if project is not None:
        parts.append(f'Content-Disposition: form-data; name="project"\r\n\r\n{project}')
    body = "".join(f"--{BOUNDARY}\r\n{part}\r\n" for part in parts) + f"--{BOUNDARY}--\r\n"
    return body.encode()


def call(gateway: Gateway, tokens: dict[str, str], route: RouteInfo, row: Caller, project: str | None = PROJECT) -> int:
    return answer(gateway, tokens, route, row, project).status


MISSING = "no-such-project"


def missing_answer(
    gateway: Gateway, tokens: dict[str, str], route: RouteInfo, *, session: bool = False
) -> bytes | None:
    """What the route answers an admin and owner naming a project that does not exist, as if it
    named ``PROJECT`` (the name is the caller's own): a caller without standing gets these bytes.
    An installation route names no project: None."""
    if pinned(route).project_access == Standing.INSTALLATION.value:
        return None
    found = answer(gateway, tokens, route, ADMIN_AND_OWNER, MISSING, session=session)
    assert found.status == 404, (route, found.status, found.body)
    return found.body.replace(MISSING.encode(), PROJECT.encode())


def answer(
    gateway: Gateway,
    tokens: dict[str, str],
    route: RouteInfo,
    row: Caller,
    project: str | None = PROJECT,
    *,
    session: bool = False,
) -> HttpAnswer:
    """The route's answer to ``row``: with its bearer token, or (``session``) with the console
    session its token was exchanged for, the console's header beside it as the console sends it."""
    target, body = request_for(route, project)
    credential = []
    if row.name in tokens:
        credential = (
            [("Cookie", f"{COOKIE_NAME}={tokens[row.name]}"), (CSRF_HEADER, "1")]
            if session
            else [("Authorization", f"Bearer {tokens[row.name]}")]
        )
    if (route.method, route.path) in FORM_ROUTES:  # a form names its project in a field, not the query
        target = target.split("?")[0] + "?q=launch"
        headers = [("Content-Type", f"multipart/form-data; boundary={BOUNDARY}"), *credential]
        return gateway.handle(route.method, target, headers, form_body(project))
    headers = [("Content-Type", "application/json"), *credential]
    return gateway.handle(route.method, target, headers, (body or "").encode())


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_every_caller_gets_what_the_route_declares(gateway: tuple[Gateway, dict[str, str]], route: RouteInfo) -> None:
    app, tokens = gateway
    missing = missing_answer(app, tokens, route)
    mismatches = []
    for row in CALLERS:
        found = answer(app, tokens, route, row)
        expected = expectation(pinned(route), row)
        if outcome(found.status, found.body, missing) is not expected:
            mismatches.append(f"{row.name}: expected {expected.value}, answered {found.status} {found.body[:120]!r}")
    assert mismatches == []


@pytest.fixture
def sessions(gateway: tuple[Gateway, dict[str, str]], knowledge_on: Runtime) -> tuple[Gateway, dict[str, str]]:
    """A console session for every caller that has a token, stored as signing in stores it (the
    revoked caller's too: its principal is revoked, so its session must fail as its token does)."""
    app, tokens = gateway
    by_session = {}
    for row in CALLERS:
        if row.token in ("valid", "revoked"):
            session_id, _ = knowledge_on.sessions.begin(token_hash(tokens[row.name]), row.name, knowledge_on.clock())
            by_session[row.name] = session_id
    return app, by_session


def session_expectation(route: RouteInfo, row: Caller, project: str | None = PROJECT) -> Expect:
    """A session stands for its principal as the token does; past access, it does not open
    another session (``POST /knowledge/session`` takes a bearer token)."""
    expected = expectation(pinned(route), row, project=project)
    if (route.method, route.path) == SIGN_IN and expected is Expect.ALLOWED:
        return Expect.UNAUTHENTICATED
    return expected


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_every_caller_s_console_session_gets_what_its_token_gets(
    sessions: tuple[Gateway, dict[str, str]], route: RouteInfo
) -> None:
    """The session joins the matrix: the same route, the same callers, each with the session its
    token was exchanged for (and the console's header), held to the same expectations."""
    app, by_session = sessions
    missing = missing_answer(app, by_session, route, session=True)
    mismatches = []
    for row in CALLERS:
        found = answer(app, by_session, route, row, session=True)
        expected = session_expectation(route, row)
        if outcome(found.status, found.body, missing) is not expected:
            mismatches.append(f"{row.name}: expected {expected.value}, answered {found.status} {found.body[:120]!r}")
    assert mismatches == []


SCOPED_ROUTES = [r for r in ROUTES if pinned(r).project_access != Standing.INSTALLATION.value]


@pytest.mark.parametrize("route", SCOPED_ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_every_caller_gets_what_the_route_declares_on_the_console_default(
    gateway: tuple[Gateway, dict[str, str]], route: RouteInfo
) -> None:
    """The same call naming no project: the console default, which an operator-rank route
    acts on only for an owner of the installation's organization."""
    app, tokens = gateway
    mismatches = []
    for row in CALLERS:
        status = call(app, tokens, route, row, project=None)
        expected = expectation(pinned(route), row, project=None)
        if outcome(status) is not expected:
            mismatches.append(f"{row.name}: expected {expected.value}, answered {status}")
    assert mismatches == []


def test_the_console_default_matrix_covers_every_operator_rank_route() -> None:
    operator_rank = {(r.method, r.path) for r in ROUTES if pinned(r).project_access == Standing.OPERATOR.value}
    assert operator_rank and operator_rank <= {(r.method, r.path) for r in SCOPED_ROUTES}
    owners = [row for row in CALLERS if INSTALLATION_ORGANIZATION in row.owns and row.token == "valid"]
    others = [row for row in CALLERS if INSTALLATION_ORGANIZATION not in row.owns and row.token == "valid"]
    assert owners and others


# ---------------------------------------------------------------------- the test of the test
def broken_router() -> APIGatewayRouter:
    router = APIGatewayRouter()

    @router.get(
        "/knowledge/broken/skips-scope",
        openapi_extensions=access(Permission.READ_KNOWLEDGE, project=Standing.READ),
    )
    def skips_scope(project: Annotated[str | None, Query()] = None) -> Envelope[dict[str, str]]:
        return ok({"project": project or ""})  # forgot resolve_scope: anyone with the permission reads

    @router.get("/knowledge/broken/no-permission")
    def no_permission(project: Annotated[str | None, Query()] = None) -> Envelope[dict[str, str]]:
        return ok({"project": project or ""})  # forgot to declare who may call it

    @router.get("/knowledge/broken/scoped", openapi_extensions=access(Permission.READ_KNOWLEDGE, project=Standing.READ))
    def scoped(project: Annotated[str | None, Query()] = None) -> Envelope[dict[str, str]]:
        return ok({"knowledge_base": current_call().scope(project).knowledge_base})

    return router


Invoke = Callable[[Caller, str], tuple[int, bytes]]


def direct(route_path: str) -> Invoke:
    app = knowledge_api()
    app.include_router(broken_router())

    def invoke(row: Caller, project: str) -> tuple[int, bytes]:
        event = rest_event(
            "GET",
            route_path,
            resource=route_path,
            query={"project": project},
            headers={"Authorization": f"Bearer {enrol(principal_of(row))}"},
        )
        answered = app.resolve(event, FakeLambdaContext("Broken"))
        return int(answered["statusCode"]), str(answered["body"]).encode()

    return invoke


def mismatches(route: RouteInfo, invoke: Invoke) -> list[str]:
    _, missing = invoke(ADMIN_AND_OWNER, MISSING)
    missing = missing.replace(MISSING.encode(), PROJECT.encode())
    found = []
    for row in CALLERS:
        if row.token != "valid":
            continue  # the function answers these 401 before any route runs (test_authentication.py)
        expected, (status, body) = expectation(route, row), invoke(row, PROJECT)
        if outcome(status, body, missing) is not expected:
            found.append(f"{row.name}: expected {expected.value}, answered {status}")
    return found


def declared(path: str, permission: str | None) -> RouteInfo:
    return RouteInfo("GET", path, permission, None, Standing.READ.value, None)


def test_the_matrix_catches_a_route_that_skips_the_scope_check(knowledge_on: Runtime) -> None:
    path = "/knowledge/broken/skips-scope"
    found = mismatches(declared(path, "read_knowledge"), direct(path))
    assert "admin-of-another-project: expected 404 as a missing project, answered 200" in found


def test_the_matrix_catches_a_route_that_forgets_its_permission(knowledge_on: Runtime) -> None:
    path = "/knowledge/broken/no-permission"
    found = mismatches(declared(path, "read_knowledge"), direct(path))
    assert any(line.startswith("project-admin: expected allowed, answered 500") for line in found)


def test_the_matrix_passes_the_same_route_done_right(knowledge_on: Runtime) -> None:
    path = "/knowledge/broken/scoped"
    assert mismatches(declared(path, "read_knowledge"), direct(path)) == []


def test_the_matrix_has_every_kind_of_caller_the_issue_names() -> None:
    names = {row.name for row in CALLERS}
    assert {
        "no-token",
        "malformed-token",
        "revoked-token",
        "project-admin",
        "project-operator",
        "project-viewer",
        "admin-of-another-project",
        "roleless-owner",
        "owner-of-another-organization",
        "admin-and-owner-of-another-organization",
        "agent",
    } <= names
    assert {f"lacks-{p.value}" for p in Permission} <= names
    assert json.dumps([r.path for r in ROUTES])  # the route table is not empty
    assert len(ROUTES) >= 20


# ---------------------------------------------------------------------- POST /mcp
MCP_LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
MCP_HEADERS = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")]


def test_mcp_answers_every_principal_token_401_and_only_a_live_mission_credential(
    gateway: tuple[Gateway, dict[str, str]], knowledge_on: Runtime
) -> None:
    """``POST /mcp`` takes no principal token, whatever it holds (every caller of the matrix,
    owner and admin included): 401, a JSON-RPC error, from the function, not the authorizer. A live
    mission of project falcon is answered; the same mission ended is 401 again."""
    from knowledge_service.domain import agent_missions as missions

    app, tokens = gateway
    answered = {}
    for row in CALLERS:
        headers = list(MCP_HEADERS)
        if row.name in tokens:
            headers.append(("Authorization", f"Bearer {tokens[row.name]}"))
        response = app.handle("POST", "/mcp", headers, MCP_LIST)
        answered[row.name] = (response.status, json.loads(response.body)["error"]["data"]["code"])
    assert set(answered.values()) == {(401, "unauthenticated")}, answered

    knowledge_on.agent_missions.put_role(missions.role_contract("reader", ["knowledge_search"], "viewer", None))
    credential = missions.mint_credential()
    started = {"project": "falcon", "role": "reader", "credential_sha256": missions.credential_hash(credential)}
    event = {"id": "matrix-mission", "detail-type": missions.STARTED, "detail": started}
    missions.intake(knowledge_on.agent_missions, knowledge_on.projects, knowledge_on.pages, event)
    live = app.handle("POST", "/mcp", [*MCP_HEADERS, ("Authorization", f"Bearer {credential}")], MCP_LIST)
    assert live.status == 200, live.body
    assert [t["name"] for t in json.loads(live.body)["result"]["tools"]] == ["knowledge_search"]
    ended = {"id": "matrix-end", "detail-type": missions.ENDED, "detail": {"mission_id": "matrix-mission"}}
    missions.intake(knowledge_on.agent_missions, knowledge_on.projects, knowledge_on.pages, ended)
    again = app.handle("POST", "/mcp", [*MCP_HEADERS, ("Authorization", f"Bearer {credential}")], MCP_LIST)
    assert again.status == 401
