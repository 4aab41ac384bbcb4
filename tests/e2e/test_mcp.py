"""Agent tools over MCP, end to end: the official ``mcp`` client over Streamable HTTP at
``<API URL>/mcp``, with a credential from ``knowledge-admin mission start``."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from pydantic import AnyUrl

from tests import secrets
from tests.localstack import LocalStack, bearer

pytestmark = [
    pytest.mark.e2e,
    # the client the issue names; mcp 1.x also offers it as streamable_http_client(http_client=...)
    pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning"),
]
T = TypeVar("T")

READER_TOOLS = ["knowledge_search", "knowledge_retrieve", "knowledge_sources", "brain_get", "brain_history"]
WRITER_TOOLS = [*READER_TOOLS, "brain_put", "brain_list", "brain_search", "knowledge.get", "knowledge.publish"]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def role(stack: LocalStack, tools: list[str], project_role: str = "admin") -> str:
    name = unique("role")
    stack.admin("role", "set", name, *(a for t in tools for a in ("--tool", t)), "--project-role", project_role)
    return name


def mission(stack: LocalStack, role_name: str, autonomy: str = "L2", project: str = "falcon") -> str:
    credential = stack.admin("mission", "start", project, "--role", role_name, "--autonomy", autonomy).strip()
    secrets.register(credential)
    assert credential.startswith("km_"), credential
    return credential


@asynccontextmanager
async def session(stack: LocalStack, credential: str) -> AsyncIterator[ClientSession]:
    async with (
        streamablehttp_client(f"{stack.url}/mcp", headers=bearer(credential)) as (read, write, _),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


def run(body: Callable[[], Awaitable[T]]) -> T:
    return anyio.run(body)


def payload(result: Any) -> dict[str, Any]:
    return json.loads(result.content[0].text)  # type: ignore[no-any-return]


def refused(result: Any, code: str) -> None:
    assert result.isError, result
    assert payload(result)["code"] == code, payload(result)


def test_an_agent_works_a_mission_over_mcp(stack: LocalStack, http: httpx.Client) -> None:
    credential = mission(stack, role(stack, WRITER_TOOLS))
    # an assertion to publish, distilled by the workspace's owner
    made = http.post(
        "/v/capture.create",
        params={"workspace": "falcon"},
        json={"body": "The launch moved to April 10, 2026."},
        headers=bearer(stack.admin_token),
    )
    assert made.status_code == 200, made.text
    distil = {"subject": "launch", "assertion": "The launch moved.", "captureId": made.json()["captureId"]}
    distilled = http.post(
        "/v/knowledge.distil",
        params={"workspace": "falcon"},
        json={**distil, "evidenceQuote": "moved to April 10"},
        headers=bearer(stack.admin_token),
    )
    assert distilled.status_code == 200, distilled.text
    knowledge_id = distilled.json()["knowledgeId"]
    page = f"/notes/{unique('mission')}.md"

    async def work() -> None:
        async with session(stack, credential) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            # tier 1 tools of the role, and the discover tool (knowledge.publish is tier 2)
            assert listed == (set(WRITER_TOOLS) - {"knowledge.publish"}) | {"tools_discover"}
            schema = next(t for t in (await client.list_tools()).tools if t.name == "knowledge_retrieve").inputSchema
            assert "project" not in schema["properties"] and "query" in schema["properties"]

            found = await client.call_tool("knowledge_search", {"q": "launch date"})
            assert not found.isError and payload(found)["hits"], payload(found)
            retrieved = await client.call_tool("knowledge_retrieve", {"query": "why did the launch date change"})
            assert "April 10, 2026" in payload(retrieved)["rendered"]

            launch = {"path": page, "content": "# Launch\n\nApril 10.\n", "store": "project"}
            put = await client.call_tool("brain_put", launch)
            assert not put.isError and payload(put)["ok"], payload(put)
            got = await client.call_tool("brain_get", {"path": page, "store": "project"})
            assert payload(got)["content"] == "# Launch\n\nApril 10.\n"
            searched = await client.call_tool("brain_search", {"q": "launch april"})
            assert payload(searched)["hits"][0]["path"] == payload(put)["path"], payload(searched)
            history = await client.call_tool("brain_history", {"path": page})
            assert [v["op"] for v in payload(history)["versions"]] == ["kb.put"]
            assert payload(history)["versions"][0]["actor"].startswith("agent:mission:")

            resources = {str(r.uri) for r in (await client.list_resources()).resources}
            uri = f"agenthub://project/falcon/kb{payload(put)['path']}"
            assert uri in resources
            text = (await client.read_resource(AnyUrl(uri))).contents[0]
            assert "April 10." in text.text  # type: ignore[union-attr]

            # knowledge.publish is offered on demand: refused until discovered, then listed
            refused(await client.call_tool("knowledge.publish", {"knowledgeId": knowledge_id}), "tool_not_discovered")
            offered = await client.call_tool("tools_discover", {})
            assert payload(offered)["tools"] == [{"name": "knowledge.publish", "loaded": False}]
            loaded = await client.call_tool("tools_discover", {"name": "knowledge.publish"})
            assert payload(loaded)["tool"]["inputSchema"]["required"] == ["knowledgeId"]
            assert "knowledge.publish" in {t.name for t in (await client.list_tools()).tools}
            published = await client.call_tool("knowledge.publish", {"knowledgeId": knowledge_id})
            assert payload(published)["status"] == "PUBLISHED", payload(published)

            # refusals: a project argument, a tool not in the role
            refused(
                await client.call_tool("knowledge_search", {"q": "launch", "project": "colony-docs"}), "bad_request"
            )
            refused(await client.call_tool("knowledge_statements", {}), "tool_not_in_role")

    run(work)


BRAIN_TOOLS = ["brain_get", "brain_put", "brain_list", "brain_delete"]
MIB = 1024 * 1024


def test_the_brain_tools_default_to_the_missions_own_session_brain(stack: LocalStack, http: httpx.Client) -> None:
    researcher = role(stack, BRAIN_TOOLS)
    mine, theirs = mission(stack, researcher, "L1"), mission(stack, researcher, "L1")
    note = f"/notes/{unique('scratch')}.md"
    shared = f"/notes/{unique('shared')}.md"
    big = "".join(f"{i:062d}\n" for i in range(4 * MIB // 63)).ljust(4 * MIB, "x")  # 4 MiB of lines

    def page(path: str) -> httpx.Response:
        return http.get(f"/api/v1/projects/falcon/kb/pages/fs{path}", headers=bearer(stack.admin_token))

    async def mine_writes() -> None:
        async with session(stack, mine) as client:
            schema = next(t for t in (await client.list_tools()).tools if t.name == "brain_put").inputSchema
            assert schema["properties"]["store"]["default"] == "session"
            put = await client.call_tool("brain_put", {"path": note, "content": "# Scratch\n"})
            assert payload(put) == {"ok": True, "path": f"/fs{note}", "store": "session", "size_bytes": 10}
            assert payload(await client.call_tool("brain_get", {"path": note}))["content"] == "# Scratch\n"
            refused(await client.call_tool("brain_get", {"path": note, "store": "project"}), "not_found")
            written = await client.call_tool("brain_put", {"path": shared, "content": "# Shared\n", "store": "project"})
            assert payload(written)["store"] == "project", payload(written)
            # a 4 MiB value: in over Streamable HTTP, and back out
            stored = await client.call_tool("brain_put", {"path": "/big.md", "content": big})
            assert payload(stored)["size_bytes"] == 4 * MIB, payload(stored)
            assert payload(await client.call_tool("brain_get", {"path": "/big.md"}))["content"] == big
            listed = payload(await client.call_tool("brain_list", {}))
            assert listed["store"] == "session" and not listed["truncated"]
            sizes = {e["path"]: e["size_bytes"] for e in listed["entries"]}
            assert sizes == {f"/fs{note}": 10, "/fs/big.md": 4 * MIB}

    run(mine_writes)
    assert page(shared).status_code == 200, page(shared).text  # the route finds a page written to the project
    assert page(note).status_code == 404, page(note).text  # and not the session brain's entry

    async def theirs_reads() -> None:
        async with session(stack, theirs) as client:
            refused(await client.call_tool("brain_get", {"path": note}), "not_found")
            assert payload(await client.call_tool("brain_list", {}))["entries"] == []
            refused(await client.call_tool("brain_delete", {"path": note}), "not_found")

    run(theirs_reads)

    async def mine_deletes() -> None:
        async with session(stack, mine) as client:
            gone = await client.call_tool("brain_delete", {"path": note})
            assert payload(gone) == {"ok": True, "path": f"/fs{note}", "store": "session"}
            refused(await client.call_tool("brain_get", {"path": note}), "not_found")
            refused(await client.call_tool("brain_delete", {"path": note}), "not_found")
            assert [e["path"] for e in payload(await client.call_tool("brain_list", {}))["entries"]] == ["/fs/big.md"]

    run(mine_deletes)


def test_knowledge_off_is_a_tool_error_not_an_absent_tool(stack: LocalStack, http: httpx.Client) -> None:
    credential = mission(stack, role(stack, READER_TOOLS, "viewer"), "L0")
    settings = http.get("/knowledge/status", headers=bearer(stack.admin_token))
    assert settings.status_code == 200, settings.text

    async def off() -> None:
        async with session(stack, credential) as client:
            assert "knowledge_search" in {t.name for t in (await client.list_tools()).tools}
            refused(await client.call_tool("knowledge_search", {"q": "launch"}), "knowledge_disabled")

    turned = http.post("/settings", json={"knowledge_enabled": False}, headers=bearer(stack.admin_token))
    assert turned.status_code == 200, turned.text
    try:
        run(off)
    finally:
        back = http.post("/settings", json={"knowledge_enabled": True}, headers=bearer(stack.admin_token))
        assert back.status_code == 200, back.text


def test_an_l0_agent_may_not_call_a_write_tool(stack: LocalStack) -> None:
    credential = mission(stack, role(stack, [*READER_TOOLS, "brain_put"], "operator"), "L0")

    async def write() -> None:
        async with session(stack, credential) as client:
            result = await client.call_tool("brain_put", {"path": "/notes/l0.md", "content": "# No\n"})
            refused(result, "permission_denied")
            assert "L1" in payload(result)["error"]

    run(write)


def test_an_ended_mission_is_401_a_json_rpc_error(stack: LocalStack, http: httpx.Client) -> None:
    credential = mission(stack, role(stack, READER_TOOLS, "viewer"), "L0")

    async def still_live() -> None:
        async with session(stack, credential) as client:
            assert (await client.call_tool("knowledge_sources", {})).isError is False

    run(still_live)
    stack.admin("mission", "end", credential)
    answer = http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={**bearer(credential), "Accept": "application/json, text/event-stream"},
    )
    assert answer.status_code == 401, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["error"]["data"]["code"] == "unauthenticated"

    async def ended() -> None:
        async with session(stack, credential):
            pass

    with pytest.raises(ExceptionGroup) as caught:  # the client wraps the 401 in its task groups
        run(ended)
    assert "401 Unauthorized" in repr(caught.value)
