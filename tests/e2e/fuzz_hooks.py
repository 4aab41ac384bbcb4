"""Schemathesis hooks for the fuzz run (loaded through ``SCHEMATHESIS_HOOKS``).

After each call that may have changed what the next call relies on (settings, bindings),
put it back: knowledge on, pointed at the simulator, falcon and the console default
bound to falcon. The fuzz run
is sequential (one worker), so the next case always starts from that state.

Once per operation, beside the generated cases, the hostile inputs that found issue 25's
500s and collisions are sent too: a JSON body nested 1,000 deep and an integer of 5,000
digits on every operation that reads a JSON body (the document's ``application/json``
bodies, and every page write), and invalid UTF-8 (an overlong ``%C0%AE``, ``%FF%FE``, an
encoded surrogate ``%ED%B0%80``) in each path parameter. Each must be answered below 500,
in its surface's own shape (``docs/api.md``); a page path that is not UTF-8 is
``400 invalid_argument``. A hook that raises fails the run.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import schemathesis

# One TLS context for the hooks' clients (httpx would build one a client: certifi read, ~20 ms);
# they speak plain HTTP on loopback.
TLS = httpx.create_ssl_context()

RESTORE_AFTER = ("/settings", "/knowledge/project-map", "/knowledge/bases")
HOSTILE_BODIES = {
    "nested 1,000 deep": '{"a": ' + "[" * 1000 + "]" * 1000 + "}",
    "an integer of 5,000 digits": '{"a": ' + "1" * 5000 + "}",
}
INVALID_UTF8 = ("%C0%AE", "%FF%FE", "%ED%B0%80")
PAGES = "/api/v1/projects/"
GATEWAY_STATUSES = (404, 413)  # API Gateway's own answers: the envelope on every surface
_probed: set[str] = set()


@schemathesis.hook
def after_call(context: Any, case: Any, response: Any) -> None:
    probe_hostile_inputs(case)
    if case.path not in RESTORE_AFTER:
        return
    base_url, token, simulator = (
        os.environ["FUZZ_BASE_URL"],
        os.environ["FUZZ_TOKEN"],
        os.environ["FUZZ_FORAGER_ENDPOINT"],
    )
    with httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30, verify=TLS
    ) as client:
        client.post(
            "/settings",
            json={
                "knowledge_enabled": True,
                "knowledge_forager_endpoint": simulator,
                "knowledge_forager_token": os.environ["FUZZ_FORAGER_TOKEN"],
            },
        )
        restore_bindings(client)


def restore_bindings(client: httpx.Client) -> None:
    """falcon, and the console default, read FORAGER's falcon: reads without ?project= reach
    the engine instead of stopping at not_found."""
    client.post("/knowledge/project-map", json={"project": "falcon", "knowledge_base": "falcon"})
    client.post("/knowledge/project-map", json={"project": "", "knowledge_base": "falcon"})


@cache
def _document() -> dict[str, Any]:
    """The document the run fuzzes: the file ``test_fuzz.py`` read from the stack (``FUZZ_DOCUMENT``)."""
    return json.loads(Path(os.environ["FUZZ_DOCUMENT"]).read_bytes())  # type: ignore[no-any-return]


def reads_json(method: str, path: str) -> bool:
    operation = _document()["paths"].get(path, {}).get(method.lower(), {})
    declared = "application/json" in (operation.get("requestBody") or {}).get("content", {})
    return declared or (path.startswith(PAGES) and method.upper() in ("PUT", "POST"))


def probe_hostile_inputs(case: Any) -> None:
    key = f"{case.method.upper()} {case.path}"
    if key in _probed:
        return
    _probed.add(key)
    values = {name: quote(str(value), safe="") for name, value in (case.path_parameters or {}).items()}
    headers = {"Authorization": f"Bearer {_credential(case.path)}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(base_url=os.environ["FUZZ_BASE_URL"], headers=headers, timeout=30, verify=TLS) as client:
        if reads_json(case.method, case.path):
            for kind, body in HOSTILE_BODIES.items():
                target = _formatted(case.path, values)
                answer = client.request(
                    case.method, target, params=case.query, content=body, headers={"Content-Type": "application/json"}
                )
                held_to_its_shape(case, f"{kind} body", answer)
        for name in values:
            for spelling in INVALID_UTF8:
                target = _formatted(case.path, {**values, name: f"{spelling}x"})
                answer = client.request(case.method, target, params=case.query)
                held_to_its_shape(case, f"{spelling} in {{{name}}}", answer)
                if case.path.startswith(PAGES) and name == "path" and "id" in values and answer.status_code == 400:
                    assert answer.json()["code"] in ("invalid_argument", "bad_request"), (case.path, answer.text)


def _credential(path: str) -> str:
    return os.environ["FUZZ_MISSION_CREDENTIAL"] if path == "/mcp" else os.environ["FUZZ_TOKEN"]


def _formatted(path: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        path = path.replace("{" + name + "}", value)
    return path


def held_to_its_shape(case: Any, what: str, answer: httpx.Response) -> None:
    """Below 500, and in the surface's own shape (or API Gateway's envelope for its own answers)."""
    where = f"{case.method.upper()} {case.path} with {what}: {answer.status_code} {answer.text[:300]}"
    assert answer.status_code < 500, where
    if answer.status_code < 400:
        return
    media = answer.headers.get("content-type", "")
    assert "json" in media, where
    body = json.loads(answer.content)
    if answer.status_code in GATEWAY_STATUSES and isinstance(body, dict) and body.get("success") is False:
        return
    if case.path.startswith(PAGES):
        assert media.startswith("application/problem+json") and "code" in body, where
    elif case.path.startswith("/v/") or case.path == "/v":
        assert set(body) == {"error", "code"}, where
    elif case.path == "/mcp":
        assert body.get("jsonrpc") == "2.0" and "error" in body, where
    else:
        assert body.get("success") is False and "code" in body, where
