"""The console's session: a second way in, held to the same rules as a bearer token.

Signing in exchanges a token for a cookie (``POST /knowledge/session``); the cookie then
authenticates every surface, a state-changing call needs the console's header besides, and
signing out, revoking the principal or eight idle hours end it. Each test tries to break one
rule (``identity/session.py``, ``edge/access.py``'s ``presented_credential``).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from knowledge_service.identity.principal import Permission, PrincipalKind, ProjectRole
from knowledge_service.identity.session import COOKIE_NAME, CSRF_HEADER, session_hash
from knowledge_service.runtime import Runtime
from tests import secrets
from tests.conftest import ADMIN, Answer, Api, principal

CONSOLE = {CSRF_HEADER: "1"}
VIEWER = principal("val", Permission.READ_STATUS, Permission.READ_KNOWLEDGE, roles={"falcon": ProjectRole.VIEWER})
SET_COOKIE = re.compile(rf"^{re.escape(COOKIE_NAME)}=([A-Za-z0-9_-]{{43}}); Path=/; HttpOnly; Secure; SameSite=Strict$")


def sign_in(api: Api, who: Any = ADMIN) -> str:
    """Sign ``who`` in; the session id its cookie holds (registered as a secret: it must never
    appear in a body or a log line, tests/secrets.py)."""
    answer = api.call("POST", "/knowledge/session", who, body={})
    assert answer.status == 200, answer.raw
    found = SET_COOKIE.match(answer.headers["Set-Cookie"])
    assert found, answer.headers["Set-Cookie"]
    secrets.register(found.group(1))
    return found.group(1)


def with_cookie(session_id: str, *, csrf: bool = False) -> dict[str, str]:
    return {"Cookie": f"theme=dark; {COOKIE_NAME}={session_id}", **(CONSOLE if csrf else {})}


def by_session(api: Api, method: str, path: str, session_id: str, *, csrf: bool = False, **kwargs: Any) -> Answer:
    return api.call(method, path, None, headers=with_cookie(session_id, csrf=csrf), **kwargs)


def test_signing_in_sets_a_host_only_http_only_strict_cookie_and_answers_who_signed_in(
    knowledge_on: Runtime, api: Api
) -> None:
    answer = api.call("POST", "/knowledge/session", ADMIN, body={})
    assert answer.status == 200
    session_id = SET_COOKIE.match(answer.headers["Set-Cookie"]).group(1)  # type: ignore[union-attr]
    assert session_id not in answer.raw  # the id travels in the cookie only
    assert answer.headers["Cache-Control"] == "no-store"
    data = answer.body["data"]
    assert (data["name"], data["kind"], data["owns_installation"]) == ("ada", "human", True)
    assert {p["project"] for p in data["projects"]} >= {"falcon", "colony-docs"}
    assert data["session"]["expires_at"]
    stored = knowledge_on.sessions._table.scan()["Items"]
    assert [item["session_hash"] for item in stored] == [session_hash(session_id)]  # the id itself is not kept
    assert session_id not in json.dumps(stored, default=str)


def test_the_cookie_authenticates_reads_on_every_surface(knowledge_on: Runtime, api: Api) -> None:
    session_id = sign_in(api)
    assert by_session(api, "GET", "/knowledge/status", session_id).status == 200
    assert by_session(api, "GET", "/knowledge/me", session_id).body["data"]["session"] is not None
    pages = by_session(
        api, "GET", "/api/v1/projects/falcon/kb/stats", session_id, resource="/api/v1/projects/{id}/kb/stats"
    )
    assert pages.status == 200, pages.raw
    assert (
        by_session(api, "GET", "/knowledge/search", session_id, query={"q": "launch", "project": "falcon"}).status
        == 200
    )


def test_a_get_that_starts_work_takes_the_console_header_with_the_cookie(knowledge_on: Runtime, api: Api) -> None:
    """Issue 39: GET kb/archive starts the archive's build; a cross-site image carrying the cookie
    must not start it. With the console's header (or a bearer token) it is answered as before."""
    session_id = sign_in(api)
    target = {"resource": "/api/v1/projects/{id}/kb/archive"}
    refused = by_session(api, "GET", "/api/v1/projects/falcon/kb/archive", session_id, **target)
    assert (refused.status, refused.body["code"]) == (403, "csrf_header_required")
    allowed = by_session(api, "GET", "/api/v1/projects/falcon/kb/archive", session_id, csrf=True, **target)
    assert allowed.status in (303, 409), allowed.raw
    reads = by_session(
        api, "GET", "/api/v1/projects/falcon/kb/stats", session_id, resource="/api/v1/projects/{id}/kb/stats"
    )
    assert reads.status == 200, reads.raw  # a read that starts nothing needs no header


def test_a_state_changing_call_with_the_cookie_but_without_the_console_header_is_refused(
    knowledge_on: Runtime, api: Api
) -> None:
    session_id = sign_in(api)
    before = knowledge_on.config.settings()
    refused = by_session(api, "POST", "/settings", session_id, body={"knowledge_enabled": True})
    assert (refused.status, refused.body["code"]) == (403, "csrf_header_required")
    assert knowledge_on.config.settings() == before  # nothing written
    page = by_session(
        api,
        "PUT",
        "/api/v1/projects/falcon/kb/pages/notes/a.md",
        session_id,
        body={"content": "# a\n", "if_version": "absent"},
        resource="/api/v1/projects/{id}/kb/pages/{path+}",
    )
    assert (page.status, page.body["code"]) == (403, "csrf_header_required")  # problem+json, the pages surface's shape
    verb = by_session(api, "POST", "/v/knowledge.list", session_id, body={}, query={"workspace": "falcon"})
    assert (verb.status, verb.body["code"]) == (403, "Forbidden")  # the verbs' own vocabulary of codes
    assert CSRF_HEADER in verb.body["error"]
    for method, path in (("POST", "/knowledge/feed/sync"), ("DELETE", "/knowledge/session")):
        assert by_session(api, method, path, session_id, body={}).status == 403
    assert by_session(api, "GET", "/knowledge/status", session_id).status == 200  # the session still stands

    allowed = by_session(api, "POST", "/settings", session_id, csrf=True, body={"knowledge_enabled": True})
    assert allowed.status == 200, allowed.raw


def test_the_header_is_not_asked_of_a_bearer_token(knowledge_on: Runtime, api: Api) -> None:
    assert api.call("POST", "/settings", ADMIN, body={"knowledge_enabled": True}).status == 200


def test_a_request_with_an_authorization_header_is_judged_by_it_alone(knowledge_on: Runtime, api: Api) -> None:
    session_id = sign_in(api)
    for authorization in ("Bearer not-a-token", "Basic abc", ""):
        answer = api.call(
            "GET", "/knowledge/status", None, headers={**with_cookie(session_id), "Authorization": authorization}
        )
        assert answer.status == 401, authorization


def test_signing_out_ends_the_session_and_clears_the_cookie(knowledge_on: Runtime, api: Api) -> None:
    session_id = sign_in(api)
    out = by_session(api, "DELETE", "/knowledge/session", session_id, csrf=True)
    assert (out.status, out.body["data"]) == (200, {"signed_out": True})
    assert out.headers["Set-Cookie"] == f"{COOKIE_NAME}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Strict"
    assert by_session(api, "GET", "/knowledge/status", session_id).status == 401
    assert by_session(api, "GET", "/knowledge/me", session_id).status == 401


def test_a_revoked_principal_s_session_is_refused_on_its_next_request(knowledge_on: Runtime, api: Api) -> None:
    session_id = sign_in(api, VIEWER)
    assert by_session(api, "GET", "/knowledge/status", session_id).status == 200
    knowledge_on.principals.revoke("val")
    assert by_session(api, "GET", "/knowledge/status", session_id).status == 401
    pages = by_session(
        api, "GET", "/api/v1/projects/falcon/kb/stats", session_id, resource="/api/v1/projects/{id}/kb/stats"
    )
    assert pages.status == 401


def test_eight_idle_hours_end_a_session_and_each_use_slides_its_end(
    knowledge_on: Runtime, api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = datetime(2026, 12, 1, 9, tzinfo=UTC)
    now = [start]
    monkeypatch.setitem(knowledge_on.__dict__, "clock", lambda: now[0])
    first, second = sign_in(api), sign_in(api)
    now[0] = start + timedelta(hours=7, minutes=59)
    assert by_session(api, "GET", "/knowledge/status", first).status == 200  # used: its end moves on
    now[0] = start + timedelta(hours=8)
    assert by_session(api, "GET", "/knowledge/status", second).status == 401  # idle eight hours
    now[0] = start + timedelta(hours=15, minutes=58)
    assert by_session(api, "GET", "/knowledge/status", first).status == 200
    now[0] = start + timedelta(hours=24)
    assert by_session(api, "GET", "/knowledge/status", first).status == 401


def test_an_agent_is_not_given_a_session_and_a_session_does_not_make_another(knowledge_on: Runtime, api: Api) -> None:
    agent = principal("bot", *Permission, kind=PrincipalKind.AGENT, roles={"falcon": ProjectRole.ADMIN})
    refused = api.call("POST", "/knowledge/session", agent, body={})
    assert (refused.status, "Set-Cookie" in refused.headers) == (403, False)
    session_id = sign_in(api)
    again = by_session(api, "POST", "/knowledge/session", session_id, csrf=True, body={})
    assert (again.status, "Set-Cookie" in again.headers) == (401, False)


def test_a_session_reaches_no_project_its_principal_has_no_standing_in(knowledge_on: Runtime, api: Api) -> None:
    """Byte for byte the answer a project that does not exist gets."""
    session_id = sign_in(api, VIEWER)
    hidden = by_session(api, "GET", "/knowledge/search", session_id, query={"q": "launch", "project": "elsewhere"})
    missing = by_session(api, "GET", "/knowledge/search", session_id, query={"q": "launch", "project": "nowhere"})
    assert hidden.status == missing.status == 404
    assert hidden.raw == missing.raw.replace("nowhere", "elsewhere")
    acted = by_session(api, "POST", "/knowledge/feed/sync", session_id, csrf=True, query={"project": "falcon"})
    assert (acted.status, acted.body["message"]) == (
        403,
        api.call("POST", "/knowledge/feed/sync", VIEWER, query={"project": "falcon"}).body["message"],
    )  # a viewer's session acts no more than the viewer's token, refused in the same words


@pytest.mark.parametrize(
    "cookie",
    [
        f"{COOKIE_NAME}=",
        f"{COOKIE_NAME}=short",
        f"{COOKIE_NAME}={'a' * 43}",  # well-formed, never issued
        f'{COOKIE_NAME}="{"a" * 43}"; x',
        "knowledge-session=" + "a" * 43,  # without the prefix: not the console's cookie
        "=;;=" * 50,
        "a" * 9000,
    ],
)
def test_every_bad_cookie_is_the_one_401(knowledge_on: Runtime, api: Api, cookie: str) -> None:
    answer = api.call("GET", "/knowledge/status", None, headers={"Cookie": cookie})
    assert (answer.status, answer.body["code"]) == (401, "unauthenticated")


def test_an_owner_s_projects_come_from_its_organizations_by_index_never_a_scan(knowledge_on: Runtime, api: Api) -> None:
    from devstack.metering import aws_calls

    knowledge_on.projects.create("ant-ops", "other-colony")
    with aws_calls() as calls:
        answer = api.call("GET", "/knowledge/me", ADMIN)
    listed = {p["project"] for p in answer.body["data"]["projects"]}
    assert {"falcon", "colony-docs"} <= listed
    assert "ant-ops" not in listed  # another organization's project
    assert calls["dynamodb:Scan"] == 0
    assert calls["dynamodb:Query"] == 1  # one organization, one Query on by_organization


# ---------------------------------------------------------------------- mutation survivors (issue 39)
@pytest.mark.parametrize("value", ["0", "true", "yes", "11", " 1", ""])
def test_the_console_header_must_be_exactly_1(knowledge_on: Runtime, api: Api, value: str) -> None:
    session_id = sign_in(api)
    headers = {**with_cookie(session_id), CSRF_HEADER: value}
    answer = api.call("POST", "/settings", None, headers=headers, body={"knowledge_enabled": True})
    assert (answer.status, answer.body["code"]) == (403, "csrf_header_required"), value


def test_a_bearer_sign_out_beside_a_live_cookie_does_not_end_the_cookies_session(
    knowledge_on: Runtime, api: Api
) -> None:
    # Given a live session, and a request that carries the cookie and a bearer token
    session_id = sign_in(api)
    both = {**with_cookie(session_id, csrf=True), "Authorization": f"Bearer {api.token(ADMIN)}"}
    # When it signs out, and asks who it is
    out = api.call("DELETE", "/knowledge/session", None, headers=both)
    me = api.call("GET", "/knowledge/me", None, headers=both)
    # Then the call was the token's: no session ended, none shown, and the cookie still works
    assert out.status == 200 and out.body["data"]["signed_out"] is False, out.raw
    assert me.status == 200 and me.body["data"]["session"] is None, me.raw
    assert by_session(api, "GET", "/knowledge/me", session_id).status == 200


def test_an_owners_explicit_role_on_one_of_its_projects_shows_in_me(knowledge_on: Runtime, api: Api) -> None:
    owner = principal(
        "olive", Permission.READ_STATUS, roles={"falcon": ProjectRole.OPERATOR}, owns=frozenset({"colony"})
    )
    picks = {p["project"]: p["role"] for p in api.call("GET", "/knowledge/me", owner).body["data"]["projects"]}
    assert picks["falcon"] == "operator"  # its role, not the bare ownership of colony
    assert picks["colony-docs"] is None


def test_a_refresh_racing_a_sign_out_leaves_no_session_and_lets_nothing_in(knowledge_on: Runtime, api: Api) -> None:
    # Given a session due its refresh, and a sign-out that lands between the refresh's read and write
    session_id = sign_in(api)
    store = knowledge_on.sessions
    table = store._table
    later = datetime.now(UTC) + timedelta(minutes=10)
    read = table.get_item

    def read_then_signed_out(**kwargs: Any) -> Any:
        found = read(**kwargs)
        store.end(session_id)
        return found

    table.get_item = read_then_signed_out  # type: ignore[method-assign]
    try:
        answered = store.token_hash_for(session_id, later)
    finally:
        table.get_item = read  # type: ignore[method-assign]
    # Then the request is not let in, and the refresh did not bring the session back
    assert answered is None
    assert table.get_item(Key={"session_hash": session_hash(session_id)}).get("Item") is None
