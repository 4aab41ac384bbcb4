"""The MCP server in-process (moto, the FORAGER simulator): JSON-RPC through the SDK exactly
as ``POST /mcp`` receives it, each tool's refusals, the audit row, and the scope wall."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from hypothesis import given, settings, strategies as st

from devstack.lambdas import FakeLambdaContext
from knowledge_service.domain import agent_missions as missions
from knowledge_service.domain.pages.service import Pages
from knowledge_service.edge import mcp_tools
from knowledge_service.edge.mcp_server import MAX_ANSWER, MAX_BODY, JsonRpcMessage, handle
from knowledge_service.edge.openapi import openapi_document
from knowledge_service.errors import NotFound
from knowledge_service.identity.principal import ProjectRole
from knowledge_service.models import KnowledgeSettings
from knowledge_service.runtime import Runtime
from knowledge_service.storage.agent_missions import MissionRecord
from local_engine.double import Double
from tests import demo
from tests.unit.test_fault_injection import FAULT_ANSWERS

EVERY_TOOL = sorted(mcp_tools.SPECS)
ACCEPT = "application/json, text/event-stream"


def start(
    rt: Runtime,
    tools: list[str],
    autonomy: str = "L2",
    project: str = "falcon",
    role: str = "admin",
    lasting: timedelta = timedelta(hours=1),
) -> str:
    credential = missions.mint_credential()
    now = datetime.now(UTC)
    mission_id = str(uuid.uuid4())
    rt.pages.create_session(mission_id, project, "test mission", now + lasting)  # as intake does
    rt.agent_missions.record(
        MissionRecord(
            mission_id=mission_id,
            project=project,
            role="test",
            tools=tuple(tools),
            project_role=ProjectRole(role),
            autonomy=autonomy,
            credential_hash=missions.credential_hash(credential),
            started_at=now,
            expires_at=now + lasting,
        )
    )
    return credential


def post(credential: str | None, body: Any, **headers: str) -> dict[str, Any]:
    raw = body if isinstance(body, str) else json.dumps(body)
    auth = {"Authorization": f"Bearer {credential}"} if credential else {}
    event = {
        "httpMethod": "POST",
        "path": "/mcp",
        "headers": {"Content-Type": "application/json", "Accept": ACCEPT, **auth, **headers},
        "body": raw,
        "isBase64Encoded": False,
    }
    return handle(event)


def rpc(credential: str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    answer = post(credential, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})
    assert answer["statusCode"] == 200, answer
    return json.loads(answer["body"])  # type: ignore[no-any-return]


def call(credential: str, tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    result = rpc(credential, "tools/call", {"name": tool, "arguments": arguments})["result"]
    return bool(result.get("isError")), json.loads(result["content"][0]["text"])


def refused(credential: str, tool: str, arguments: dict[str, Any], code: str) -> dict[str, Any]:
    is_error, payload = call(credential, tool, arguments)
    assert is_error and payload["code"] == code, payload
    return payload


@pytest.fixture
def rt(knowledge_on: Runtime) -> Runtime:
    knowledge_on.config.bind("colony-docs", "harbour", "test")
    return knowledge_on


# ------------------------------------------------------------------------------ the door
@pytest.mark.parametrize("header", [None, "Bearer km_" + "x" * 43, "Bearer ks_" + "x" * 43, "Basic a"])
def test_no_live_credential_is_401_json_rpc_before_the_sdk_sees_the_body(rt: Runtime, header: str | None) -> None:
    answer = handle({"httpMethod": "POST", "headers": {"Authorization": header} if header else {}, "body": "{"})
    assert answer["statusCode"] == 401
    assert answer["headers"]["Content-Type"] == "application/json"
    body = json.loads(answer["body"])
    assert (body["jsonrpc"], body["id"], body["error"]["code"]) == ("2.0", None, -32001)
    assert body["error"]["data"] == {"code": "unauthenticated", "status": 401}
    assert answer["headers"]["WWW-Authenticate"].startswith("Bearer")


def test_a_body_over_its_bound_is_413_as_a_json_rpc_error_before_it_is_parsed(rt: Runtime) -> None:
    """Issue 39: an over-5 MiB body was answered problem+json, not the JSON-RPC error the docs describe."""
    credential = start(rt, ["knowledge_search"])
    answer = post(credential, "x" * (MAX_BODY + 1))
    assert answer["statusCode"] == 413
    assert answer["headers"]["Content-Type"] == "application/json"
    body = json.loads(answer["body"])
    assert (body["jsonrpc"], body["error"]["code"], body["error"]["data"]["code"]) == (
        "2.0",
        -32600,
        "payload_too_large",
    )


@pytest.mark.parametrize(
    "raw", ["\udcff\udcfe", "{", "[]", '{"jsonrpc": "2.0"}', '{"jsonrpc": "1.0", "method": "ping"}']
)
def test_a_body_that_is_no_json_rpc_message_is_400_never_a_500(rt: Runtime, raw: str) -> None:
    credential = start(rt, ["knowledge_search"])
    answer = post(credential, raw)
    assert answer["statusCode"] == 400, answer
    assert json.loads(answer["body"])["error"]["code"] in {-32700, -32600, -32602}


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": None}, "params"),
        ({"jsonrpc": "2.0", "id": 1, "method": "prompts/list"}, "method"),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, "id"),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, "id"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, "id"),
        ({"jsonrpc": "2.0", "id": 2**53, "method": "ping"}, "id"),
        ({"jsonrpc": "2.0", "id": "x" * 65, "method": "ping"}, "id"),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "extra": 1}, "extra"),
    ],
)
def test_a_message_outside_the_declared_envelope_is_400_naming_its_field(
    rt: Runtime, message: dict[str, Any], field: str
) -> None:
    """What the document declares for POST /mcp is what the door holds: the fuzz run's
    negative_data_rejection found a null params answered inside a 200 before the door held it."""
    credential = start(rt, ["knowledge_search"])
    answer = post(credential, message)
    assert answer["statusCode"] == 400, answer
    error = json.loads(answer["body"])["error"]
    assert error["code"] == -32600
    assert error["message"].startswith(f"Invalid request: {field}:"), error


def test_an_integral_number_is_an_integer_id_and_answered_as_one(rt: Runtime) -> None:
    """JSON Schema's integer includes 7.0 (the fuzz run sent one); the SDK sees the integer."""
    credential = start(rt, ["knowledge_search"])
    answer = post(credential, '{"jsonrpc": "2.0", "id": 439110987874257.0, "method": "ping"}')
    assert answer["statusCode"] == 200, answer
    assert json.loads(answer["body"])["id"] == 439110987874257


def test_a_lone_surrogate_escaped_in_params_is_invalid_params_naming_the_argument(rt: Runtime) -> None:
    credential = start(rt, ["knowledge_search"])
    arguments = '{"name": "knowledge_search", "arguments": {"q": "\\udc00"}}'  # JSON's escape of a lone surrogate
    raw = '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": ' + arguments + "}"
    answer = post(credential, raw)
    assert answer["statusCode"] == 400, answer
    body = json.loads(answer["body"])
    assert body["id"] == 3
    assert body["error"]["code"] == -32602
    assert body["error"]["message"].startswith("Invalid params: params.arguments.q: "), body


def test_a_brain_put_to_the_project_with_a_lone_surrogate_is_invalid_params_not_an_internal_error(
    rt: Runtime,
) -> None:
    """The probe's case (issue 39): brain_put with store "project" and content "\\ud800"."""
    credential = start(rt, ["brain_put"])
    arguments = '{"name": "brain_put", "arguments": {"path": "a.md", "content": "\\ud800", "store": "project"}}'
    answer = post(credential, '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": ' + arguments + "}")
    assert answer["statusCode"] == 400, answer
    error = json.loads(answer["body"])["error"]
    assert (error["code"], error["message"].split(": ")[1]) == (-32602, "params.arguments.content")


def test_a_key_given_twice_is_a_json_rpc_error_naming_it(rt: Runtime) -> None:
    credential = start(rt, ["knowledge_search"])
    answer = post(credential, '{"jsonrpc": "2.0", "id": 5, "method": "ping", "method": "tools/list"}')
    assert answer["statusCode"] == 400, answer
    body = json.loads(answer["body"])
    assert body["id"] == 5 and body["error"]["code"] == -32600
    assert body["error"]["message"] == "Invalid request: method: is given twice in one object."


def test_a_body_nested_past_the_edges_bound_is_a_parse_error_before_anything_reads_it(rt: Runtime) -> None:
    credential = start(rt, ["knowledge_search"])
    deep = '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ' + "[" * 40 + "]" * 40 + "}"
    answer = post(credential, deep)
    assert answer["statusCode"] == 400, answer
    error = json.loads(answer["body"])["error"]
    assert error["code"] == -32700 and "nested deeper" in error["message"]


def test_post_mcp_declares_the_envelope_the_door_holds() -> None:
    declared = openapi_document()["paths"]["/mcp"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    model = JsonRpcMessage.model_json_schema()
    assert {k: v for k, v in declared.items() if k != "description"} == {
        k: v for k, v in model.items() if k != "description"
    }


def test_initialize_answers_the_server_and_its_capabilities(rt: Runtime) -> None:
    credential = start(rt, ["knowledge_search"])
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    result = rpc(credential, "initialize", params)["result"]
    assert result["serverInfo"]["name"] == "knowledge-service"
    assert {"tools", "resources"} <= set(result["capabilities"])


# ------------------------------------------------------------------------------ tools/list
def test_tools_list_is_exactly_the_roles_tier_1_tools_with_schemas_that_name_no_scope(rt: Runtime) -> None:
    credential = start(rt, ["knowledge_retrieve", "brain_put", "knowledge.get", "knowledge.publish"])
    tools = {t["name"]: t for t in rpc(credential, "tools/list")["result"]["tools"]}
    assert set(tools) == {"knowledge_retrieve", "brain_put", "knowledge.get", "tools_discover"}
    for tool in tools.values():
        assert not set(tool["inputSchema"].get("properties", {})) & set(mcp_tools.SCOPE_WORDS), tool["name"]
        assert tool["inputSchema"].get("additionalProperties") is False, tool["name"]
    assert tools["knowledge_retrieve"]["inputSchema"]["required"] == ["query"]


def test_no_tool_of_the_catalogue_takes_a_project_or_scope_argument() -> None:
    for spec in mcp_tools.SPECS.values():
        fields = set(spec.args.model_fields) | {f.alias for f in spec.args.model_fields.values() if f.alias}
        assert not fields & {"project", "project_id", "projectId", "scope", "knowledge_base", "workspace"}, spec.name


# ------------------------------------------------------------------------------ refusals
def test_an_argument_naming_a_scope_is_refused_as_unknown_by_every_tool(rt: Runtime) -> None:
    credential = start(rt, EVERY_TOOL)
    mission = rt.agent_missions.by_credential_hash(missions.credential_hash(credential))
    assert mission is not None
    rt.agent_missions.discover(mission, "knowledge.publish")
    for tool in EVERY_TOOL:
        for word in mcp_tools.SCOPE_WORDS:
            payload = refused(credential, tool, {word: "colony-docs"}, "bad_request")
            assert payload["error"].startswith(f"{word}:"), (tool, payload)


def test_tools_discover_refuses_an_unknown_argument_and_a_tool_not_offered(rt: Runtime) -> None:
    credential = start(rt, ["knowledge.publish", "knowledge.get"])
    refused(credential, "tools_discover", {"project": "colony-docs"}, "bad_request")
    refused(credential, "tools_discover", {"name": "knowledge.get"}, "tool_not_in_role")
    refused(credential, "tools_discover", {"name": "knowledge.retire"}, "tool_not_in_role")


def test_a_tool_not_in_the_role_is_refused(rt: Runtime) -> None:
    credential = start(rt, ["knowledge_search"])
    refused(credential, "knowledge_sources", {}, "tool_not_in_role")
    refused(credential, "knowledge.retire", {"knowledgeId": "x"}, "tool_not_in_role")


def test_a_tier_2_tool_is_refused_until_discovered(rt: Runtime) -> None:
    credential = start(rt, ["knowledge.publish"])
    refused(credential, "knowledge.publish", {"knowledgeId": "k"}, "tool_not_discovered")
    is_error, loaded = call(credential, "tools_discover", {"name": "knowledge.publish"})
    assert not is_error and loaded["loaded"] == "knowledge.publish"
    assert "knowledge.publish" in {t["name"] for t in rpc(credential, "tools/list")["result"]["tools"]}


@pytest.mark.parametrize("tool", ["brain_put", "brain_delete", "brain_promote", "brain_revert"])
def test_an_l0_mission_may_not_call_a_write_tool(rt: Runtime, tool: str) -> None:
    credential = start(rt, [tool], autonomy="L0")
    assert "L1" in refused(credential, tool, {"path": "/notes/a.md"}, "permission_denied")["error"]


def test_knowledge_off_is_a_tool_error_naming_knowledge_disabled_not_an_absent_tool(rt: Runtime) -> None:
    credential = start(rt, list(missions.KNOWLEDGE_TOOLS))
    rt.config.save_settings(KnowledgeSettings(knowledge_enabled=False))
    assert {t["name"] for t in rpc(credential, "tools/list")["result"]["tools"]} == set(missions.KNOWLEDGE_TOOLS)
    item = {"id": demo.statement("falcon", "March 3, 2026")}
    arguments = {
        "knowledge_search": {"q": "launch"},
        "knowledge_retrieve": {"query": "launch"},
        "knowledge_item": item,
        "knowledge_evidence": item,
    }
    for tool in missions.KNOWLEDGE_TOOLS:
        refused(credential, tool, arguments.get(tool, {}), "knowledge_disabled")


def test_a_publish_by_a_mission_without_sensitive_autonomy_is_refused_at_the_front_door(rt: Runtime) -> None:
    credential = start(rt, ["knowledge.publish"], autonomy="L1")
    call(credential, "tools_discover", {"name": "knowledge.publish"})
    refused(credential, "knowledge.publish", {"knowledgeId": "kn_" + "0" * 24}, "permission_denied")


# ------------------------------------------------------------------------------ the audit
def test_every_call_leaves_one_audit_row_and_never_the_arguments(rt: Runtime) -> None:
    credential = start(rt, ["knowledge_search"])
    mission = rt.agent_missions.by_credential_hash(missions.credential_hash(credential))
    assert mission is not None
    call(credential, "knowledge_search", {"q": "launch secret-words-here"})
    refused(credential, "knowledge_sources", {}, "tool_not_in_role")
    refused(credential, "knowledge_search", {"q": "secret-words-here", "project": "x"}, "bad_request")
    rows = [r for r in rt.verb_audit.rows("falcon") if r.get("mission") == mission.mission_id]
    assert [(r["verb"], r["decision"]) for r in rows] == [
        ("mcp:knowledge_search", "allowed"),
        ("mcp:knowledge_sources", "refused"),
        ("mcp:knowledge_search", "refused"),
    ]
    assert "secret-words-here" not in json.dumps(rows, default=str)


# ------------------------------------------------------------------------------ the scope wall
def test_no_tool_reaches_another_projects_knowledge_page_or_assertion(rt: Runtime) -> None:
    credential = start(rt, EVERY_TOOL)
    harbour_item = demo.statement("harbour", "opens at 06:00")
    for tool in ("knowledge_item", "knowledge_evidence"):
        assert call(credential, tool, {"id": harbour_item})[1]["code"] == "not_found"
    # a page of colony-docs, by every path spelling and every store
    Pages(rt.pages, "colony-docs").put("/notes/secret.md", "# Secret\n", None)
    for path in ("/notes/secret.md", "/fs/notes/secret.md", "../colony-docs/notes/secret.md"):
        for store in ("project", "session"):
            is_error, payload = call(credential, "brain_get", {"path": path, "store": store})
            assert is_error and "Secret" not in json.dumps(payload), payload
        assert call(credential, "brain_history", {"path": path})[0]
    for store in ("project", "session"):
        assert "secret.md" not in json.dumps(call(credential, "brain_list", {"store": store})[1])
    found = call(credential, "brain_search", {"q": "secret"})[1]
    assert found["total"] == 0 and "secret.md" not in json.dumps(found)
    resources = rpc(credential, "resources/list")["result"]["resources"]
    assert all("/project/falcon/" in r["uri"] for r in resources)
    stolen = rpc(credential, "resources/read", {"uri": "agenthub://project/colony-docs/kb/fs/notes/secret.md"})
    assert "error" in stolen and "Secret" not in json.dumps(stolen)
    # an assertion of another workspace is not found, in the words an unknown id gets
    knowledge_id = _assertion_in(rt, "colony-docs")
    stolen_assertion = refused(credential, "knowledge.get", {"knowledgeId": knowledge_id}, "not_found")
    unknown = refused(credential, "knowledge.get", {"knowledgeId": "kn_" + "0" * 24}, "not_found")
    assert stolen_assertion == unknown or "colony-docs" not in json.dumps(stolen_assertion)


def _assertion_in(rt: Runtime, workspace: str, text: str = "It moved.") -> str:
    from knowledge_service.domain.verbs import door
    from tests.conftest import ADMIN

    stores = door.Stores(rt.projects, rt.verbs, rt.verb_audit)
    body = "The chamber moved north last spring."
    capture = door.invoke(stores, door.Call("capture.create", ADMIN, workspace, json.dumps({"body": body}).encode()))
    request = {
        "subject": "chamber",
        "assertion": text,
        "captureId": capture.capture_id,  # type: ignore[attr-defined]
        "evidenceQuote": "moved north",
    }
    made = door.invoke(stores, door.Call("knowledge.distil", ADMIN, workspace, json.dumps(request).encode()))
    return str(made.knowledge_id)  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------ the brain
def test_the_brain_tools_write_read_list_promote_revert_and_delete_the_projects_pages(rt: Runtime) -> None:
    credential = start(rt, sorted(missions.BRAIN_READS + missions.BRAIN_WRITES), autonomy="L1")
    put = call(credential, "brain_put", {"path": "/notes/plan.md", "content": "# Plan\n\nOne.\n", "store": "project"})[
        1
    ]
    assert put["ok"] and put["store"] == "project"
    path, first = put["path"], put["version"]
    second = call(
        credential, "brain_put", {"path": path, "content": "# Plan\n\nTwo.\n", "if_version": first, "store": "project"}
    )[1]
    stale = refused(
        credential,
        "brain_put",
        {"path": path, "content": "# Plan\n\nX.\n", "if_version": first, "store": "project"},
        "conflict",
    )
    assert stale["code"] == "conflict"
    assert (
        call(credential, "brain_get", {"path": path, "version": first, "store": "project"})[1]["content"]
        == "# Plan\n\nOne.\n"
    )
    listed = call(credential, "brain_list", {"prefix": "/notes", "store": "project"})[1]
    assert path in [e["path"] for e in listed["entries"]]
    reverted = call(credential, "brain_revert", {"path": path, "version": first})[1]
    assert reverted["version"] == first and reverted["changed"] is True
    history = call(credential, "brain_history", {"path": path})[1]
    assert [v["op"] for v in history["versions"]] == ["kb.revert", "kb.put", "kb.put"]
    assert all(v["actor"].startswith("agent:mission:") for v in history["versions"])
    assert second["version"] in [v["version"] for v in history["versions"]]
    # the session brain: the mission's own, promoted into a page with its source
    noted = call(credential, "brain_put", {"path": "/scratch.md", "content": "# Found\n", "store": "session"})[1]
    assert noted["store"] == "session"
    assert call(credential, "brain_get", {"path": "/scratch.md", "store": "session"})[1]["content"] == "# Found\n"
    promoted = call(credential, "brain_promote", {"from_path": noted["path"], "to_path": "/notes/found.md"})[1]
    assert promoted.get("ok"), promoted
    page = call(credential, "brain_get", {"path": promoted["path"], "store": "project"})[1]["content"]
    assert "agenthub://session/" in page
    assert call(credential, "brain_delete", {"path": promoted["path"], "store": "project"})[1]["ok"]
    refused(credential, "brain_delete", {"path": promoted["path"], "store": "project"}, "not_found")


def test_brain_search_finds_the_missions_projects_pages_as_soon_as_they_are_written(rt: Runtime) -> None:
    credential = start(rt, ["brain_put", "brain_delete", "brain_search"], autonomy="L1")
    Pages(rt.pages, "colony-docs").put("/notes/other.md", "---\ntype: Concept\n---\nlighthouse keeper\n", None)
    page = "---\ntype: Runbook\ntitle: Lighthouse\ntags: [coast]\n---\nThe lighthouse keeper logs the lamp.\n"
    put = call(credential, "brain_put", {"path": "/coast/light.md", "content": page, "store": "project"})[1]
    assert put["ok"], put
    found = call(credential, "brain_search", {"q": "lighthouse keeper", "tag": "coast"})[1]
    assert found["store"] == "project"
    assert [h["path"] for h in found["hits"]] == ["/fs/coast/light.md"]  # never colony-docs' page
    assert found["hits"][0]["title"] == "Lighthouse"
    assert {"text": "keeper", "hit": True} in found["hits"][0]["snippet"]
    assert call(credential, "brain_delete", {"path": "/coast/light.md", "store": "project"})[1]["ok"]
    assert call(credential, "brain_search", {"q": "lighthouse"})[1]["hits"] == []
    refused(credential, "brain_search", {"q": ""}, "bad_request")
    assert call(credential, "brain_search", {"q": '""'})[1]["hits"] == []  # no word: nothing found
    refused(credential, "brain_search", {"q": "x", "project": "colony-docs"}, "bad_request")


# ------------------------------------------------------------------------------ whatever the arguments
MARKER = "ZEBRA-SECRET-7"
_HOSTILE = st.sampled_from(
    [  # first what reaches furthest: Hypothesis draws the first elements most
        "/notes/secret.md",
        "/fs/notes/secret.md",
        "colony-docs",
        "../colony-docs/fs/notes/secret.md",
        "%2e%2e/colony-docs",
        "agenthub://project/colony-docs/kb/fs/notes/secret.md",
        demo.statement("harbour", "opens at 06:00"),
        "session",
        "project",
        MARKER,
    ]
)
_VALUES = st.one_of(_HOSTILE, _HOSTILE, _HOSTILE, st.text(max_size=40), st.integers())


def _arguments(tool: str) -> st.SearchStrategy[dict[str, Any]]:
    """The tool's own fields (the required ones always there), a scope word now and then, and
    values that name another project's page, record or URI more often than not."""
    fields = mcp_tools.SPECS[tool].args.model_fields
    names = [f.alias or n for n, f in fields.items()]
    required = {f.alias or n: _VALUES for n, f in fields.items() if f.is_required()}
    optional = st.dictionaries(st.sampled_from([*names, *mcp_tools.SCOPE_WORDS]), _VALUES, max_size=3)
    return st.fixed_dictionaries(required).flatmap(lambda r: optional.map(lambda o: {**o, **r}))


@pytest.mark.parametrize("tool", EVERY_TOOL)
def test_whatever_the_arguments_no_tool_answers_another_projects_page_or_assertion(
    scoped: tuple[Runtime, str], tool: str
) -> None:
    _, credential = scoped

    @settings(max_examples=12, deadline=None, derandomize=True)
    @given(arguments=_arguments(tool))
    def holds(arguments: dict[str, Any]) -> None:
        _, payload = call(credential, tool, arguments)
        assert MARKER not in json.dumps(payload).replace(json.dumps(arguments), ""), (arguments, payload)

    holds()


@pytest.fixture
def scoped(rt: Runtime) -> tuple[Runtime, str]:
    """A falcon mission holding every tool; colony-docs holds a page and an assertion marked."""
    Pages(rt.pages, "colony-docs").put("/notes/secret.md", f"# {MARKER}\n", None)
    _assertion_in(rt, "colony-docs", MARKER)
    credential = start(rt, EVERY_TOOL)
    mission = rt.agent_missions.by_credential_hash(missions.credential_hash(credential))
    assert mission is not None
    rt.agent_missions.discover(mission, "knowledge.publish")
    return rt, credential


# ------------------------------------------------------------------------------ FORAGER's faults
def test_a_tool_call_shares_the_requests_budget_a_stalled_forager_is_answered_inside_it(
    rt: Runtime, forager: Double
) -> None:
    """Lambda's remaining time less the margin bounds every FORAGER call a tool makes, as on
    every route: 2.6 s left is a 0.6 s budget, so a FORAGER stalling 30 s after its headers is
    a tool error in well under the client's own 8 s deadline."""
    credential = start(rt, ["knowledge_search"])
    forager.set_fault("stall", delay_seconds=30.0)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    message["params"] = {"name": "knowledge_search", "arguments": {"q": "launch"}}
    event = {
        "httpMethod": "POST",
        "path": "/mcp",
        "headers": {"Content-Type": "application/json", "Accept": ACCEPT, "Authorization": f"Bearer {credential}"},
        "body": json.dumps(message),
        "isBase64Encoded": False,
    }
    started = time.monotonic()
    try:
        answer = handle(event, FakeLambdaContext(timeout_seconds=2.6))
    finally:
        forager.clear_faults()
    assert time.monotonic() - started < 4.0  # the budget (0.6 s), not the call's own 8 s
    result = json.loads(answer["body"])["result"]
    assert result["isError"] and json.loads(result["content"][0]["text"])["code"] == "upstream_timeout"


@pytest.mark.parametrize("fault", sorted(FAULT_ANSWERS))
def test_a_knowledge_tool_under_an_upstream_fault_is_a_tool_error_with_its_code(
    rt: Runtime, inject_fault: Callable[[str], None], fault: str
) -> None:
    credential = start(rt, ["knowledge_retrieve"])
    inject_fault(fault)
    answer = post(
        credential,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "knowledge_retrieve", "arguments": {"query": "launch"}},
        },
    )
    assert answer["statusCode"] == 200 and "Traceback" not in answer["body"], answer
    result = json.loads(answer["body"])["result"]
    payload = json.loads(result["content"][0]["text"])
    assert result["isError"], payload
    assert payload["code"] in {"knowledge_unreachable", "upstream_timeout", "upstream_error"}, payload


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"])
def test_a_wrong_content_type_is_a_json_rpc_error_labelled_as_json(rt: Runtime, content_type: str) -> None:
    credential = start(rt, ["brain_list"])
    answer = post(credential, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, **{"Content-Type": content_type})
    assert answer["statusCode"] == 400
    assert answer["headers"]["Content-Type"] == "application/json"
    error = json.loads(answer["body"])
    assert error["jsonrpc"] == "2.0" and error["error"]["code"] == -32600
    assert "Content-Type" in error["error"]["message"]


# ------------------------------------------------------------------------------ the session brain
BRAIN_TOOLS = ("brain_get", "brain_put", "brain_list", "brain_delete")
MIB = 1024 * 1024


def _mission(rt: Runtime, credential: str) -> MissionRecord:
    mission = rt.agent_missions.by_credential_hash(missions.credential_hash(credential))
    assert mission is not None
    return mission


def _brain_objects(rt: Runtime, mission_id: str) -> list[str]:
    listed = boto3.client("s3").list_objects_v2(Bucket=rt.env.archive_bucket, Prefix=f"brain/{mission_id}/")
    return [o["Key"] for o in listed.get("Contents", [])]


def _markdown(size: int) -> str:
    """``size`` bytes of text with a newline every 64 (JSON writes each as two bytes)."""
    line = "a" * 63 + "\n"
    return (line * (size // len(line) + 1))[:size]


@pytest.mark.parametrize("tool", BRAIN_TOOLS)
def test_each_brain_tools_schema_defaults_store_to_session(rt: Runtime, tool: str) -> None:
    credential = start(rt, [tool])
    (listed,) = rpc(credential, "tools/list")["result"]["tools"]
    store = listed["inputSchema"]["properties"]["store"]
    assert store["default"] == "session"
    assert set(store["enum"]) == {"project", "session"}
    assert "session" in listed["description"]


def test_a_brain_put_without_store_lands_in_the_session_brain_not_the_knowledge_base(rt: Runtime) -> None:
    credential = start(rt, list(BRAIN_TOOLS), autonomy="L1")
    put = call(credential, "brain_put", {"path": "/notes/scratch.md", "content": "# Draft\n"})[1]
    assert put == {"ok": True, "path": "/fs/notes/scratch.md", "store": "session", "size_bytes": 8}
    assert call(credential, "brain_get", {"path": "/notes/scratch.md"})[1]["content"] == "# Draft\n"
    refused(credential, "brain_get", {"path": "/notes/scratch.md", "store": "project"}, "not_found")
    with pytest.raises(NotFound):
        Pages(rt.pages, "falcon").get("/notes/scratch.md")
    assert rt.pages.feed("falcon") == []  # no kb signal: the knowledge base never saw it


def test_brain_get_and_delete_without_store_never_touch_a_page(rt: Runtime) -> None:
    Pages(rt.pages, "falcon").put("/notes/shared.md", "# Shared\n", None)
    credential = start(rt, list(BRAIN_TOOLS), autonomy="L1")
    refused(credential, "brain_get", {"path": "/notes/shared.md"}, "not_found")
    refused(credential, "brain_delete", {"path": "/notes/shared.md"}, "not_found")
    assert Pages(rt.pages, "falcon").get("/notes/shared.md")["content"] == "# Shared\n"
    assert call(credential, "brain_list", {})[1] == {"store": "session", "entries": [], "truncated": False}


def test_brain_list_lists_the_session_brain_under_a_prefix_bounded_and_paged(rt: Runtime) -> None:
    credential = start(rt, list(BRAIN_TOOLS), autonomy="L1")
    for path in ("/notes/b.md", "/notes/a.md", "/notes/deep/c.md", "/notesy.md", "/other.md"):
        call(credential, "brain_put", {"path": path, "content": f"# {path}\n"})
    first = call(credential, "brain_list", {"prefix": "/notes", "limit": 2})[1]
    assert first["store"] == "session" and first["truncated"] is True
    assert [e["path"] for e in first["entries"]] == ["/fs/notes/a.md", "/fs/notes/b.md"]
    assert first["entries"][0]["size_bytes"] == len("# /notes/a.md\n")
    assert datetime.fromisoformat(first["entries"][0]["written_at"]) <= datetime.now(UTC)
    rest = call(credential, "brain_list", {"prefix": "/notes", "limit": 2, "after": "/fs/notes/b.md"})[1]
    assert [e["path"] for e in rest["entries"]] == ["/fs/notes/deep/c.md"] and rest["truncated"] is False
    everything = call(credential, "brain_list", {})[1]["entries"]
    assert len(everything) == 5
    assert call(credential, "brain_list", {"prefix": "/notes", "after": "/fs/z.md"})[1]["entries"] == []


def test_brain_delete_removes_a_session_entry_and_its_bytes_and_a_missing_one_is_not_found(rt: Runtime) -> None:
    credential = start(rt, list(BRAIN_TOOLS), autonomy="L1")
    mission_id = _mission(rt, credential).mission_id
    call(credential, "brain_put", {"path": "/scratch.md", "content": "# One\n"})
    call(credential, "brain_put", {"path": "/scratch.md", "content": "# Two\n"})  # the overwrite drops One's bytes
    assert len(_brain_objects(rt, mission_id)) == 1
    deleted = call(credential, "brain_delete", {"path": "/scratch.md"})
    assert deleted == (False, {"ok": True, "path": "/fs/scratch.md", "store": "session"})
    assert _brain_objects(rt, mission_id) == []
    refused(credential, "brain_get", {"path": "/scratch.md"}, "not_found")
    again = refused(credential, "brain_delete", {"path": "/scratch.md"}, "not_found")
    missing_page = refused(credential, "brain_delete", {"path": "/scratch.md", "store": "project"}, "not_found")
    assert again.keys() == missing_page.keys() == {"error", "code"}


def test_if_version_is_refused_naming_it_on_the_session_brain_which_has_no_versions(rt: Runtime) -> None:
    credential = start(rt, list(BRAIN_TOOLS), autonomy="L1")
    bad = refused(credential, "brain_put", {"path": "/a.md", "content": "x", "if_version": "absent"}, "bad_request")
    assert "if_version" in bad["error"]
    assert (
        "if_version"
        in refused(credential, "brain_delete", {"path": "/a.md", "if_version": "v"}, "bad_request")["error"]
    )


def test_a_4_mib_session_value_goes_through_mcp_and_back_and_one_byte_more_is_refused(rt: Runtime) -> None:
    credential = start(rt, list(BRAIN_TOOLS), autonomy="L1")
    value = _markdown(4 * MIB)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    put = post(
        credential, {**body, "params": {"name": "brain_put", "arguments": {"path": "/big.md", "content": value}}}
    )
    assert put["statusCode"] == 200, put["body"][:500]
    assert json.loads(json.loads(put["body"])["result"]["content"][0]["text"])["size_bytes"] == 4 * MIB
    got = rpc(credential, "tools/call", {"name": "brain_get", "arguments": {"path": "/big.md"}})["result"]
    assert "structuredContent" not in got  # one copy: two would not fit one Lambda answer
    assert json.loads(got["content"][0]["text"])["content"] == value
    over = refused(credential, "brain_put", {"path": "/big.md", "content": value + "a"}, "payload_too_large")
    assert "4 MiB" in over["error"]


def test_the_mcp_body_cap_carries_a_4_mib_value_escaped_and_stays_bounded(rt: Runtime) -> None:
    credential = start(rt, ["brain_put"], autonomy="L1")
    framing = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "brain_put"}})
    assert 4 * MIB + len(framing) + 65_536 <= MAX_BODY <= 6 * MIB - 64 * 1024  # headroom for the event's headers
    assert post(credential, "x" * (MAX_BODY + 1))["statusCode"] == 413


def test_every_other_tool_keeps_its_own_limit_under_the_larger_body_cap(rt: Runtime) -> None:
    credential = start(rt, ["brain_put", "knowledge_search"], autonomy="L1")
    page = {"path": "/notes/big.md", "content": _markdown(MIB + 1), "store": "project"}
    assert "1 MiB" in refused(credential, "brain_put", page, "payload_too_large")["error"]
    refused(credential, "knowledge_search", {"q": "x" * (MIB + 1)}, "bad_request")


def test_an_answer_over_what_lambda_returns_is_a_tool_error_never_a_broken_answer(rt: Runtime) -> None:
    credential = start(rt, ["brain_get"])
    quotes = b'"' * (4 * MIB)  # written within the store's limit, but eight times escaped on the way out
    rt.pages.brain_put(_mission(rt, credential).mission_id, "/fs/quotes.md", quotes)
    params = {"name": "brain_get", "arguments": {"path": "/quotes.md"}}
    answer = post(credential, {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
    assert answer["statusCode"] == 200 and len(json.dumps(answer)) <= MAX_ANSWER
    result = json.loads(answer["body"])
    assert result["id"] == 7 and result["result"]["isError"] is True
    assert json.loads(result["result"]["content"][0]["text"])["code"] == "payload_too_large"


def test_another_mission_of_the_same_project_cannot_reach_the_session_brain(rt: Runtime) -> None:
    tools = [*BRAIN_TOOLS, "brain_promote"]
    mine, theirs = start(rt, tools, autonomy="L1"), start(rt, tools, autonomy="L1")
    call(mine, "brain_put", {"path": "/notes/mine.md", "content": "# Mine\n"})
    refused(theirs, "brain_get", {"path": "/notes/mine.md"}, "not_found")
    assert call(theirs, "brain_list", {})[1]["entries"] == []
    refused(theirs, "brain_promote", {"from_path": "/notes/mine.md", "to_path": "/notes/stolen.md"}, "not_found")
    refused(theirs, "brain_delete", {"path": "/notes/mine.md"}, "not_found")
    assert call(mine, "brain_get", {"path": "/notes/mine.md"})[1]["content"] == "# Mine\n"


@pytest.mark.parametrize("how", ["ended", "expired"])
def test_a_missions_session_brain_is_unreachable_once_it_ends_or_expires(rt: Runtime, how: str) -> None:
    lasting = timedelta(hours=1) if how == "ended" else timedelta(seconds=2)
    credential = start(rt, list(BRAIN_TOOLS), autonomy="L1", lasting=lasting)
    call(credential, "brain_put", {"path": "/notes/mine.md", "content": "# Mine\n"})
    if how == "ended":
        rt.agent_missions.end(_mission(rt, credential))
    else:
        time.sleep(2.1)
    arguments = {"path": "/notes/mine.md"}
    answer = post(
        credential,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "brain_get", "arguments": arguments}},
    )
    assert answer["statusCode"] == 401 and "Mine" not in answer["body"]


def test_a_4_mib_non_ascii_value_passes_the_door_and_the_sdk_it_hands_the_message_to(rt: Runtime) -> None:
    credential = start(rt, ["brain_put"], autonomy="L1")
    value = "é" * (2 * MIB)  # 4 MiB of UTF-8, sent as UTF-8, that the door hands on as 12 MiB of \u escapes
    params = {"name": "brain_put", "arguments": {"path": "/accents.md", "content": value}}
    answer = post(
        credential,
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, ensure_ascii=False),
    )
    assert answer["statusCode"] == 200, answer["body"][:300]
    assert json.loads(json.loads(answer["body"])["result"]["content"][0]["text"])["size_bytes"] == 4 * MIB
    assert rt.pages.brain_get(_mission(rt, credential).mission_id, "/fs/accents.md") == value.encode()
