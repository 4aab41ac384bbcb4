"""The console's session over HTTP against the local stack: signing in, the cookie on every
surface, the console's header, signing out, revocation, eight idle hours, the console's files."""

from __future__ import annotations

import gzip
import re
import uuid
from collections.abc import Callable

import httpx

from knowledge_service.identity.session import COOKIE_NAME, CSRF_HEADER
from tests import secrets
from tests.localstack import LocalStack, bearer

PERMISSIONS = ("read_status", "read_knowledge", "manage_knowledge", "manage_settings")
SET_COOKIE = re.compile(rf"^{re.escape(COOKIE_NAME)}=([A-Za-z0-9_-]{{43}}); Path=/; HttpOnly; Secure; SameSite=Strict$")


def person(stack: LocalStack) -> tuple[str, str]:
    name = f"console-{uuid.uuid4().hex[:8]}"
    token = stack.principal(name, *[f"--permission={p}" for p in PERMISSIONS], "--role=falcon=operator")
    return name, token


def sign_in(http: httpx.Client, token: str) -> str:
    answer = http.post("/knowledge/session", headers=bearer(token), json={})
    assert answer.status_code == 200, answer.text
    found = SET_COOKIE.match(answer.headers["set-cookie"])
    assert found, answer.headers["set-cookie"]
    secrets.register(found.group(1))  # never in a body or the stack's log (tests/secrets.py)
    assert found.group(1) not in answer.text
    return found.group(1)


def cookie(session_id: str, *, console: bool = True) -> dict[str, str]:
    return {"Cookie": f"{COOKIE_NAME}={session_id}", **({CSRF_HEADER: "1"} if console else {})}


def test_a_person_signs_in_works_with_the_cookie_and_signs_out(stack: LocalStack, http: httpx.Client) -> None:
    name, token = person(stack)
    session_id = sign_in(http, token)
    me = http.get("/knowledge/me", headers=cookie(session_id, console=False))
    assert me.status_code == 200
    assert (me.json()["data"]["name"], me.json()["data"]["projects"]) == (
        name,
        [{"project": "falcon", "role": "operator"}],
    )
    assert http.get("/knowledge/status", headers=cookie(session_id, console=False)).status_code == 200
    pages = http.get("/api/v1/projects/falcon/kb/pages", headers=cookie(session_id, console=False))
    # an operator is not the pages' admin (their refusal is 401, "the admin token"): the session is its principal
    assert (pages.status_code, pages.json()["detail"]) == (401, "This route takes the admin token of the project.")

    refused = http.post("/knowledge/feed/sync?project=falcon", headers=cookie(session_id, console=False))
    assert (refused.status_code, refused.json()["code"]) == (403, "csrf_header_required")
    synced = http.post("/knowledge/feed/sync?project=falcon", headers=cookie(session_id))
    assert synced.status_code not in (401, 403), synced.text

    out = http.delete("/knowledge/session", headers=cookie(session_id))
    assert (out.status_code, out.json()["data"]) == (200, {"signed_out": True})
    assert "Max-Age=0" in out.headers["set-cookie"]
    assert http.get("/knowledge/status", headers=cookie(session_id)).status_code == 401


def test_revoking_the_principal_ends_its_session_on_the_next_request(stack: LocalStack, http: httpx.Client) -> None:
    name, token = person(stack)
    session_id = sign_in(http, token)
    assert http.get("/knowledge/me", headers=cookie(session_id)).status_code == 200
    stack.admin("principal", "revoke", name)
    assert http.get("/knowledge/me", headers=cookie(session_id)).status_code == 401


def test_eight_idle_hours_end_the_session(
    stack: LocalStack, http: httpx.Client, move_clock: Callable[[int], None]
) -> None:
    _, token = person(stack)
    session_id = sign_in(http, token)
    move_clock(8 * 3600)
    assert http.get("/knowledge/status", headers=cookie(session_id)).status_code == 401


def test_the_console_is_served_compressed_with_its_policy_to_anyone(stack: LocalStack) -> None:
    raw = httpx.get(f"{stack.url}/console/", headers={"Accept-Encoding": "identity"}, timeout=30.0)
    assert raw.status_code == 200 and raw.headers["content-type"] == "text/html; charset=utf-8"
    assert "script-src 'self'" in raw.headers["content-security-policy"]
    with httpx.Client(timeout=30.0) as client:
        request = client.build_request("GET", f"{stack.url}/console/", headers={"Accept-Encoding": "gzip"})
        streamed = client.send(request, stream=True)
        body = b"".join(streamed.iter_raw())
        streamed.close()
    if len(raw.content) >= 1024:
        assert streamed.headers["content-encoding"] == "gzip"
        assert gzip.decompress(body) == raw.content
    else:
        assert body == raw.content
