"""The metrics counted by outcome at the edges (``knowledge_service.observability``): every API
request by its status per function, MCP tool calls, verb refusals by budget and autonomy, and
ingestion's jobs queued and batches refused at preflight, each when its event happens."""

from __future__ import annotations

from decimal import Decimal

import pytest

from knowledge_service import observability
from knowledge_service.domain import ingestion
from knowledge_service.runtime import Runtime
from knowledge_service.upstream.client import ForagerClient
from tests.conftest import Api
from tests.unit.test_mcp_tools import call as tool_call, rt, start  # noqa: F401 - rt is a fixture
from tests.unit.test_metrics import emitted, metric, metric_set  # noqa: F401 - the autouse metric set
from tests.unit.test_verbs import WORKSPACE, agent, capture, distilled, verb, workspaces  # noqa: F401


def outcomes(capsys: pytest.CaptureFixture[str], name: str) -> list[str]:
    return [dimensions["outcome"] for dimensions, _ in metric(emitted(capsys, flush=False), name)]


def test_every_request_is_counted_by_its_status(
    knowledge_on: Runtime, api: Api, capsys: pytest.CaptureFixture[str]
) -> None:
    api.call("GET", "/knowledge/status")
    api.call("GET", "/knowledge/status", None)
    api.call("GET", "/knowledge/items/nothing-here", query={"project": "falcon"}, resource="/knowledge/items/{id}")
    api.call("GET", "/knowledge/jobs", None, headers={"Authorization": "Bearer nope"})
    assert outcomes(capsys, "Requests") == ["200", "401", "400", "401"]  # nothing-here is no item id's form


def test_each_tool_call_is_counted_by_its_outcome(rt: Runtime, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    credential = start(rt, ["knowledge_search"])
    capsys.readouterr()
    tool_call(credential, "knowledge_search", {"q": "launch"})
    tool_call(credential, "knowledge_sources", {})
    assert outcomes(capsys, "McpToolCalls") == ["ok", "tool_not_in_role"]


def test_a_verb_refused_for_budget_or_autonomy_is_counted_as_such(
    api: Api,
    workspaces: Runtime,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    knowledge_id = distilled(api)
    request = {"subject": "s", "assertion": "a", "captureId": capture(api), "evidenceQuote": "colony"}
    workspaces.verbs.set_budget(WORKSPACE, Decimal(10), Decimal(10))
    capsys.readouterr()
    verb(api, "knowledge.distil", request)
    verb(api, "knowledge.publish", {"knowledgeId": knowledge_id}, agent("L0"))
    verb(api, "knowledge.get", {"knowledgeId": "no-such-id"}, workspace="nowhere")
    assert outcomes(capsys, "VerbCallsRefused") == ["budget", "autonomy", "NotFound"]


def test_a_job_queued_and_a_batch_refused_at_preflight_are_counted(
    knowledge_on: Runtime, api: Api, capsys: pytest.CaptureFixture[str]
) -> None:
    job = api.call("POST", "/knowledge/jobs", body={"project": "falcon", "paths": ["docs"]})
    assert job.status == 200, job.raw

    class Refusing:
        def preflight(self, *args: object, **kwargs: object) -> ingestion.Admission:
            return ingestion.Admission(
                admitted=False, measured_bytes=10, measured="10 B", limit_bytes=1, limit="1 B",
                entry_count=1, admitted_count=0, rejected_count=1,
            )  # fmt: skip

    client: ForagerClient = Refusing()  # type: ignore[assignment]
    ingestion.preflight_inline(client, "falcon", [("a.md", b"# a\n")], "key")
    observability.metrics().flush_metrics()
    lines = emitted(capsys)
    assert [set(d) for d, _ in metric(lines, "IngestionJobsQueued")] == [{"service"}]
    assert [set(d) for d, _ in metric(lines, "PreflightsRefused")] == [{"service"}]
