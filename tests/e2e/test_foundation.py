"""The foundation's routes over HTTP against `make run`'s stack, as a user calls them."""

from __future__ import annotations

import functools
import http.client
import json
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from devstack.template import Template, create_resources
from knowledge_service.edge.catalog import knowledge_routes
from tests.localstack import LocalStack, bearer

pytestmark = pytest.mark.e2e

ROUTES = [(r.method, r.path, r.permission) for r in knowledge_routes()]
ALL_PERMISSIONS = ("read_status", "read_knowledge", "manage_knowledge", "manage_settings")


def call(
    http: httpx.Client,
    method: str,
    path: str,
    token: str | None,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    sent = {**(bearer(token) if token else {}), **(headers or {})}
    return http.request(method, path, json=body, headers=sent)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


# ---------------------------------------------------------------- the request line, as sent
@pytest.mark.parametrize(
    "target",
    [
        "//knowledge/status",
        "//knowledge/status?project=falcon",
        "//modules",
        "///knowledge/status",
        "//api/v1/projects/falcon/kb/pages/a.md",
        "//v/knowledge.get?workspace=falcon",
    ],
)
def test_a_leading_doubled_slash_over_http_is_no_route(stack: LocalStack, target: str) -> None:
    """Issue 39's probe: ``//knowledge/status`` answered 200 over HTTP (the HTTP server collapsed
    the leading ``//`` before the gateway saw it) while the gateway's own test passed. Sent here
    as a client sends it, the request line untouched (httpx would normalise the URL)."""
    address = urlsplit(stack.url)
    connection = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port, timeout=30)
    try:
        connection.request("GET", target, headers=bearer(stack.admin_token))
        answer = connection.getresponse()
        body = json.loads(answer.read())
    finally:
        connection.close()
    assert answer.status == 404, body
    assert (body["success"], body["code"]) == (False, "not_found")


# ---------------------------------------------------------------- status
def test_status_answers_with_the_printed_admin_token(http: httpx.Client, stack: LocalStack) -> None:
    answer = call(http, "GET", "/knowledge/status", stack.admin_token)
    assert answer.status_code == 200
    data = answer.json()["data"]
    assert (data["enabled"], data["reachable"], data["usable"]) == (True, True, True)
    assert data["package_agreement"] == "agreed"
    assert "falcon" in data["projects"]


def test_status_says_unreachable_when_forager_is_down(http: httpx.Client, stack: LocalStack) -> None:
    stack.fault("down")
    data = call(http, "GET", "/knowledge/status", stack.admin_token).json()["data"]
    assert (data["enabled"], data["reachable"], data["usable"]) == (True, False, False)
    assert data["reason"]


def supervised(stack: LocalStack, state: str, seconds: float = 15.0) -> dict[str, Any]:
    """What the stack's supervisor says of its engine, once it says ``state`` (it looks each second)."""
    deadline = time.monotonic() + seconds
    while True:
        said: dict[str, Any] = json.loads((stack.state_dir / "engine.json").read_text())
        if said["state"] == state or time.monotonic() > deadline:
            return said
        time.sleep(0.2)


def test_the_supervisor_says_backoff_while_the_engine_does_not_answer_then_running(stack: LocalStack) -> None:
    supervised(stack, "running")
    stack.fault("down")
    try:
        down = supervised(stack, "backoff")
        assert down["state"] == "backoff" and "did not answer" in down["reason"] and down["ready_since"] is None
    finally:
        stack.fault(None)
    up = supervised(stack, "running")
    assert (up["state"], up["reason"]) == ("running", None) and up["ready_since"]
    assert up["restarts_in_window"] >= 1  # the failure counted in the window


def test_engine_and_modules(http: httpx.Client, stack: LocalStack) -> None:
    supervised(stack, "running")  # a test before may have had the engine down
    engine = call(http, "GET", "/knowledge/engine", stack.admin_token).json()["data"]
    assert (engine["managed"], engine["state"], engine["reason"]) == (True, "running", None)  # the stack supervises it
    assert engine["endpoint"].startswith("http://127.0.0.1:") and engine["instance_id"].startswith("fgi_")
    assert engine["ready_since"]
    modules = call(http, "GET", "/modules", stack.admin_token).json()["data"]
    assert modules["modules"][0]["summary"] == "ok"


# ---------------------------------------------------------------- authentication
@pytest.fixture(scope="module")
def revoked(stack: LocalStack) -> str:
    """A token of a principal with every permission, revoked before its first use. One for the
    module: each ``knowledge-admin`` call is a process of ~0.5 s of CPU, and three a route (this
    and the 403 below) were most of this file's time."""
    name = unique("revoked")
    token = stack.principal(name, *[f"--permission={p}" for p in ALL_PERMISSIONS])
    stack.admin("principal", "revoke", name)
    return token


@pytest.mark.parametrize(("method", "path", "permission"), ROUTES)
def test_every_route_answers_the_same_401_for_every_bad_token(
    http: httpx.Client, revoked: str, method: str, path: str, permission: str
) -> None:
    answers = [
        http.request(method, path, json={"project": "falcon"}),
        http.request(method, path, headers={"Authorization": "Bearer"}),
        http.request(method, path, headers={"Authorization": "Basic YWRhOnNlY3JldA=="}),
        http.request(method, path, headers=bearer("ks_" + "x" * 43), params={"project": "falcon"}),
        http.request(method, path, headers=bearer(revoked), json={"knowledge_base": "x"}),
    ]
    assert {a.status_code for a in answers} == {401}
    assert len({a.content for a in answers}) == 1
    assert answers[0].json() == {
        "success": False,
        "message": "A valid bearer token is required.",
        "data": None,
        "code": "unauthenticated",
    }


# ---------------------------------------------------------------- permissions
@pytest.fixture(scope="module")
def lacking(stack: LocalStack) -> Callable[[str], str]:
    """The token of a principal holding every permission but ``permission`` (and admin of falcon),
    made once a permission for the module: a refusal changes nothing the next route would see."""

    @functools.cache
    def token(permission: str) -> str:
        others = [p for p in ALL_PERMISSIONS if p != permission]
        withheld = [f"--without={permission}"] if permission in ("read_knowledge", "manage_knowledge") else []
        granted = [f"--permission={p}" for p in others]
        return stack.principal(unique("lacks"), *granted, *withheld, "--role=falcon=admin")

    return token


@pytest.mark.parametrize(("method", "path", "permission"), ROUTES)
def test_a_principal_without_the_routes_permission_is_refused_403(
    http: httpx.Client, lacking: Callable[[str], str], method: str, path: str, permission: str
) -> None:
    token = lacking(permission)
    answer = call(http, method, path, token, body={} if method == "POST" else None)
    assert answer.status_code == 403
    assert answer.json()["code"] == "permission_denied"


def test_an_agent_is_refused_manage_routes_even_with_read_permissions(http: httpx.Client, stack: LocalStack) -> None:
    token = stack.principal(unique("agent"), "--kind=agent", "--permission=read_knowledge", "--permission=read_status")
    assert call(http, "GET", "/knowledge/status", token).status_code == 200
    refused = call(http, "POST", "/knowledge/project-map", token, {"project": "falcon", "knowledge_base": ""})
    assert refused.status_code == 403


# ---------------------------------------------------------------- settings
def test_settings_refuse_a_remote_endpoint_and_file_only_keys(http: httpx.Client, stack: LocalStack) -> None:
    remote = call(
        http,
        "POST",
        "/settings",
        stack.admin_token,
        {"knowledge_forager_endpoint": "http://169.254.169.254/latest/meta-data"},
    )
    assert remote.status_code == 400
    assert remote.json()["message"].startswith("knowledge_forager_endpoint:")
    file_only = call(http, "POST", "/settings", stack.admin_token, {"knowledge_forager_allow_remote": True})
    assert file_only.status_code == 400
    assert file_only.json()["message"].startswith("knowledge_forager_allow_remote: is file-only")


def test_settings_write_study_settings_and_never_echo_the_credential(http: httpx.Client, stack: LocalStack) -> None:
    answer = call(
        http,
        "POST",
        "/settings",
        stack.admin_token,
        {"knowledge_revision_study": "off", "knowledge_auto_study": "suggest"},
    )
    assert answer.status_code == 200
    data = answer.json()["data"]
    assert (data["knowledge_revision_study"], data["revision_study_resolved"]) == ("off", "off")
    assert data["knowledge_forager_token_set"] is True
    status = call(http, "GET", "/knowledge/status", stack.admin_token).json()["data"]
    assert (status["revision_study"], status["revision_study_resolved"]) == ("off", "off")
    call(http, "POST", "/settings", stack.admin_token, {"knowledge_revision_study": "inherit"})


# ---------------------------------------------------------------- bindings
def test_bind_rebind_and_unbind_are_seen_by_the_next_call(http: httpx.Client, stack: LocalStack) -> None:
    project = unique("docs")
    stack.admin("project", "create", project, "--organization", "colony")
    body = {"project": project, "knowledge_base": "harbour"}
    owner_only = call(http, "POST", "/knowledge/project-map", stack.admin_token, body)
    assert owner_only.status_code == 403  # binding is the project's own setting: its admin's (issue 39)
    stack.admin("principal", "grant", "local-admin", f"--role={project}=admin")
    bound = call(http, "POST", "/knowledge/project-map", stack.admin_token, body)
    assert bound.status_code == 200
    assert bound.json()["data"]["project_map"][project] == "harbour"
    rebound = call(
        http, "POST", "/knowledge/project-map", stack.admin_token, {"project": project, "knowledge_base": "falcon"}
    )
    assert rebound.json()["data"]["project_map"][project] == "falcon"
    listed = call(http, "GET", "/knowledge/project-map", stack.admin_token).json()["data"]["bindings"]
    assert [(b["knowledge_base"], b["bound_by"]) for b in listed if b["project"] == project] == [
        ("falcon", "local-admin")
    ]
    unbound = call(
        http, "POST", "/knowledge/project-map", stack.admin_token, {"project": project, "knowledge_base": ""}
    )
    assert project not in unbound.json()["data"]["project_map"]
    listed = call(http, "GET", "/knowledge/project-map", stack.admin_token).json()["data"]["bindings"]
    assert project not in {b["project"] for b in listed}


def test_another_organizations_owner_can_neither_bind_to_nor_list_our_base_over_http(
    http: httpx.Client, stack: LocalStack
) -> None:
    """The probe's cross-organization case (issue 39), as a caller sends it: an owner and admin
    of another organization binds its project to falcon's base, rebinds falcon and lists bases."""
    organization, project = unique("otherorg"), unique("theirs")
    stack.admin("project", "create", project, "--organization", organization)
    token = stack.principal(unique("otherowner"), "--owns", organization, f"--role={project}=admin")
    to_ours = call(http, "POST", "/knowledge/project-map", token, {"project": project, "knowledge_base": "falcon"})
    missing = call(http, "POST", "/knowledge/project-map", token, {"project": project, "knowledge_base": "nope"})
    assert to_ours.status_code == 404 and to_ours.content == missing.content.replace(b"nope", b"falcon")
    rebind = call(http, "POST", "/knowledge/project-map", token, {"project": "falcon", "knowledge_base": "harbour"})
    ghost = call(http, "POST", "/knowledge/project-map", token, {"project": "ghost-x", "knowledge_base": "harbour"})
    assert rebind.status_code == 404 and rebind.content == ghost.content.replace(b"ghost-x", b"falcon")
    listed = call(http, "GET", "/knowledge/projects", token).json()["data"]["projects"]
    assert "falcon" not in {p["project_ref"] for p in listed}
    status = call(http, "GET", "/knowledge/status", stack.admin_token).json()["data"]
    assert "falcon" in status["projects"]  # ours still see it


def test_a_base_one_organization_made_and_unbound_is_neither_listed_to_nor_bindable_by_another_over_http(
    http: httpx.Client, stack: LocalStack
) -> None:
    """Issue 57: a knowledge base belongs to the organization that made it, bound or not."""
    ours = unique("ourbase")
    stack.admin("project", "create", ours, "--organization", "colony")
    stack.admin("principal", "grant", "local-admin", f"--role={ours}=admin")
    made = call(http, "POST", "/knowledge/bases", stack.admin_token, {"name": "Ours alone", "project": ours})
    assert made.status_code == 200, made.text
    ref = made.json()["data"]["knowledge_base"]["project_ref"]
    gone = call(http, "POST", "/knowledge/project-map", stack.admin_token, {"project": ours, "knowledge_base": ""})
    assert gone.status_code == 200, gone.text
    organization, theirs = unique("otherorg"), unique("theirs")
    stack.admin("project", "create", theirs, "--organization", organization)
    token = stack.principal(
        unique("otheradmin"),
        "--permission=manage_knowledge",
        "--permission=read_knowledge",
        "--permission=manage_settings",
        "--owns",
        organization,
        f"--role={theirs}=admin",
    )
    listed = call(http, "GET", "/knowledge/projects", token).json()["data"]["projects"]
    assert ref not in {p["project_ref"] for p in listed}
    claim = call(http, "POST", "/knowledge/project-map", token, {"project": theirs, "knowledge_base": ref})
    missing = call(http, "POST", "/knowledge/project-map", token, {"project": theirs, "knowledge_base": "nope"})
    assert claim.status_code == 404 and claim.content == missing.content.replace(b"nope", ref.encode())
    # and it may not set or clear the installation's console default either
    default = call(http, "POST", "/knowledge/project-map", token, {"project": "", "knowledge_base": ""})
    assert (default.status_code, default.json()["code"]) == (403, "permission_denied")
    ours_again = call(
        http, "POST", "/knowledge/project-map", stack.admin_token, {"project": ours, "knowledge_base": ref}
    )
    assert ours_again.status_code == 200, ours_again.text


def test_a_bind_sent_as_knowledgeBase_is_refused_and_changes_nothing(http: httpx.Client, stack: LocalStack) -> None:
    answer = call(
        http, "POST", "/knowledge/project-map", stack.admin_token, {"project": "falcon", "knowledgeBase": "harbour"}
    )
    assert answer.status_code == 400
    assert "knowledgeBase" in answer.json()["message"]
    projects = call(
        http, "POST", "/knowledge/project-map", stack.admin_token, {"project": "falcon", "knowledge_base": "falcon"}
    ).json()["data"]["project_map"]
    assert projects["falcon"] == "falcon"


def test_project_map_refusals(http: httpx.Client, stack: LocalStack) -> None:
    missing = call(
        http, "POST", "/knowledge/project-map", stack.admin_token, {"project": "ghost", "knowledge_base": ""}
    )
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    stack.fault("down")
    down = call(http, "POST", "/knowledge/project-map", stack.admin_token, {"project": "falcon", "knowledge_base": ""})
    assert (down.status_code, down.json()["code"]) == (503, "knowledge_unreachable")


def test_projects_lists_what_forager_holds(http: httpx.Client, stack: LocalStack) -> None:
    refs = {
        p["project_ref"] for p in call(http, "GET", "/knowledge/projects", stack.admin_token).json()["data"]["projects"]
    }
    assert {"falcon", "harbour"} <= refs


def test_making_a_knowledge_base_from_nothing(http: httpx.Client, stack: LocalStack) -> None:
    project = unique("harbour")
    stack.admin("project", "create", project, "--organization", "colony")
    stack.admin("principal", "grant", "local-admin", f"--role={project}=admin")
    body = {"name": "Harbour handbook", "description": "What the harbour team wrote down", "project": project}
    made = call(http, "POST", "/knowledge/bases", stack.admin_token, body, headers={"Idempotency-Key": unique("k")})
    assert made.status_code == 200, made.text
    data = made.json()["data"]
    assert data["bound"] is True
    assert data["knowledge_base"]["state"] == "empty"
    assert data["project_map"][project] == data["knowledge_base"]["project_ref"]
    again = call(http, "POST", "/knowledge/bases", stack.admin_token, {**body, "name": "Second"})
    assert (again.status_code, again.json()["code"]) == (409, "already_bound")


def test_bases_is_held_to_the_projects_admin(http: httpx.Client, stack: LocalStack) -> None:
    operator = stack.principal(unique("operator"), "--permission=manage_knowledge", "--role=falcon=operator")
    refused = call(http, "POST", "/knowledge/bases", operator, {"name": "X", "project": "falcon"})
    assert (refused.status_code, refused.json()["code"]) == (403, "permission_denied")
    missing = call(http, "POST", "/knowledge/bases", stack.admin_token, {"name": "X", "project": "nowhere"})
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")


def test_binding_failed_names_the_base_when_the_binding_cannot_be_saved(http: httpx.Client, stack: LocalStack) -> None:
    """FORAGER made the base, then DynamoDB refused the write (here: the event log table,
    written in the same transaction as the binding, is gone): nothing is bound or logged,
    and the answer names the base so it can be bound from the list."""
    project = unique("lost")
    stack.admin("project", "create", project, "--organization", "colony")
    stack.admin("principal", "grant", "local-admin", f"--role={project}=admin")
    dynamodb = stack.aws_client("dynamodb")
    event_log = stack.env["EVENT_LOG_TABLE"]
    dynamodb.delete_table(TableName=event_log)
    try:
        failed = call(http, "POST", "/knowledge/bases", stack.admin_token, {"name": "Orphaned", "project": project})
    finally:
        create_resources(Template(), dynamodb)
    assert (failed.status_code, failed.json()["code"]) == (500, "binding_failed"), failed.text
    made = [
        p
        for p in call(http, "GET", "/knowledge/projects", stack.admin_token).json()["data"]["projects"]
        if p["name"] == "Orphaned"
    ]
    assert len(made) == 1
    assert made[0]["project_ref"] in failed.json()["message"]
    retry = call(
        http,
        "POST",
        "/knowledge/project-map",
        stack.admin_token,
        {"project": project, "knowledge_base": made[0]["project_ref"]},
    )
    assert retry.json()["data"]["project_map"][project] == made[0]["project_ref"]


def test_local_schedule_runs_the_six_hourly_pass(http: httpx.Client) -> None:
    answer = http.post("/_local/schedules/ScheduleFunction/run")
    assert answer.status_code == 200
    assert "falcon" in answer.json()["bound_projects"]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Content-Type": "text/plain"}, 415),  # a cross-site form's simple POST
        ({"Content-Type": "application/json", "Origin": "http://evil.example"}, 403),
        ({"Content-Type": "application/json", "Host": "rebound.evil.example"}, 403),  # DNS rebinding
    ],
    ids=["text-plain", "foreign-origin", "foreign-host"],
)
def test_the_local_clock_refuses_over_http_what_a_web_page_could_send(
    stack: LocalStack, headers: dict[str, str], status: int
) -> None:
    """Issue 57, at the socket: PUT /_local/clock moves the functions' clock, so a page of another
    origin must not be able to."""
    before = httpx.get(f"{stack.url}/_local/clock", timeout=30.0).json()["offset_seconds"]
    answer = httpx.put(
        f"{stack.url}/_local/clock", content=b'{"offset_seconds": 315360000}', headers=headers, timeout=30.0
    )
    assert answer.status_code == status, answer.text
    assert httpx.get(f"{stack.url}/_local/clock", timeout=30.0).json()["offset_seconds"] == before
