"""The sample events in events/ (what `sam local invoke -e` sends) drive the real handlers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from devstack.events import SAMPLE_TOKEN
from devstack.lambdas import FakeLambdaContext, load_handler
from devstack.template import Template
from knowledge_service.runtime import Runtime
from local_engine.double import Double
from tests.conftest import ADMIN, enrol

TEMPLATE = Template()
EVENTS = TEMPLATE.path.parent / "events"
FUNCTION_OF_PREFIX = TEMPLATE.function_of_folder()  # a sample event's prefix is its function's folder


API_GROUPS = {"curation", "exports", "ingestion", "console"}


@pytest.fixture(autouse=True)
def sample_caller(request: pytest.FixtureRequest) -> None:
    """``ada`` enrolled under the sample events' token, for a test that runs on moto."""
    if "aws" in request.fixturenames or "knowledge_on" in request.fixturenames:
        request.getfixturevalue("aws")
        enrol(ADMIN, SAMPLE_TOKEN)


def invoke(function: str, event: dict[str, Any]) -> Any:
    props = TEMPLATE.functions()[function]["Properties"]
    handler = load_handler(TEMPLATE.path.parent / props["CodeUri"], props["Handler"], f"lambda_{function}")
    return handler(event, FakeLambdaContext(function))


def test_every_function_has_a_sample_event() -> None:
    prefixes = {p.name.split("_")[0] for p in EVENTS.glob("*.json")}
    functions = {FUNCTION_OF_PREFIX[p] for p in prefixes}
    assert functions == set(TEMPLATE.functions())


@pytest.mark.parametrize(
    "path",
    sorted(p for p in EVENTS.glob("*.json") if p.name.split("_")[0] in {"status", "bindings", "reads", *API_GROUPS}),
    ids=lambda p: p.name,
)
def test_each_api_sample_event_is_answered_in_the_envelope(knowledge_on: Runtime, path: Path) -> None:
    event = json.loads(path.read_text())
    response = invoke(FUNCTION_OF_PREFIX[path.name.split("_")[0]], event)
    body = json.loads(response["body"])
    assert response["statusCode"] == 200, body
    assert body["success"] is True


def test_the_verbs_sample_event_lists_the_workspaces_assertions(knowledge_on: Runtime) -> None:
    response = invoke("VerbsFunction", json.loads((EVENTS / "verbs_list.json").read_text()))
    body = json.loads(response["body"])
    assert response["statusCode"] == 200, body
    assert body == {"items": [], "total": 0, "limit": 10, "offset": 0}


def test_the_schedule_sample_event_runs_the_pass(knowledge_on: Runtime) -> None:
    report = invoke("ScheduleFunction", json.loads((EVENTS / "schedule_six_hourly.json").read_text()))
    assert report["bound_projects"] == ["falcon"]


def test_the_pages_sample_event_writes_a_page(aws: Runtime) -> None:
    aws.projects.create("falcon", "colony")
    response = invoke("PagesFunction", json.loads((EVENTS / "pages_put_page.json").read_text()))
    body = json.loads(response["body"])
    assert response["statusCode"] == 200, body
    assert body["path"] == "/fs/svc/caddy.md"
    assert aws.pages.head("falcon", "/fs/svc/caddy.md") is not None


def test_the_mcp_sample_event_without_a_live_mission_is_a_401_json_rpc_error(aws: Runtime) -> None:
    response = invoke("McpFunction", json.loads((EVENTS / "mcp_tools_list.json").read_text()))
    assert response["statusCode"] == 401
    body = json.loads(response["body"])  # every refusal of /mcp is a JSON-RPC error (docs/api.md)
    assert (body["jsonrpc"], body["error"]["code"]) == ("2.0", -32001)


def test_the_missions_sample_event_records_a_mission_once(aws: Runtime) -> None:
    from devstack.seed import seed_demo_role

    aws.projects.create("falcon", "colony")
    seed_demo_role(aws.agent_missions)
    event = json.loads((EVENTS / "missions_started.json").read_text())
    first = invoke("AgentMissionsFunction", event)
    assert first == invoke("AgentMissionsFunction", event)
    mission = aws.agent_missions.by_id(event["id"])
    assert mission is not None and (mission.project, mission.role) == ("falcon", "researcher")


def test_the_page_signal_sample_event_reaches_the_search_compactor(aws: Runtime) -> None:
    from knowledge_service.domain.pages import page_search
    from knowledge_service.domain.pages.page_search import PageSearch

    event = json.loads((EVENTS / "search_page_signal.json").read_text())
    assert invoke("SearchCompactionFunction", event) == {"project": "falcon", "compacted": False}
    with aws.pages.table.batch_writer() as batch:  # an overlay at the compaction threshold, settled
        for n in range(page_search.COMPACT_AFTER):
            path = f"/fs/p{n}.md"
            batch.put_item(Item={"pk": "SROW#falcon", "sk": path, "path": path, "body": "b", "version": "v"})
            batch.put_item(Item={"pk": "SCHG#falcon", "sk": f"{n:017d}-seed", "path": path})
    done = invoke("SearchCompactionFunction", event)
    assert (done["compacted"], done["rows"], done["folded"]) == (
        True,
        page_search.COMPACT_AFTER,
        page_search.COMPACT_AFTER,
    )
    assert PageSearch(aws.search, "falcon").pending() == 0


def test_the_verification_sample_event_reaches_the_export_verifier(knowledge_on: Runtime, forager: Double) -> None:
    from local_engine.exports import jobs as sim_exports

    event = json.loads((EVENTS / "verifier_export_requested.json").read_text())
    export_id = event["detail"]["export_id"]
    # an export no FORAGER holds is gone: recorded for the downloads to answer, not raised
    assert invoke("ExportVerifierFunction", event) == {"export_id": export_id, "outcome": "gone"}
    book = sim_exports.book(forager.state)
    export = book.wait(book.start("falcon", "jsonl", {}).export_id)  # built, then held under the event's id
    book.exports[export_id] = export
    export.export_id = export_id
    assert invoke("ExportVerifierFunction", event) == {"export_id": export_id, "outcome": "verified"}


def test_the_archive_request_sample_event_reaches_the_archive_builder(aws: Runtime) -> None:
    from knowledge_service.domain.pages.service import Pages

    event = json.loads((EVENTS / "kbarchive_requested.json").read_text())
    Pages(aws.pages, "falcon").put("/fs/ops/deploy.md", "# Deploy\n", None)
    done = invoke("KbArchiveFunction", event)
    assert (done["project"], done["built"], done["pages"]) == ("falcon", True, 1)
    assert invoke("KbArchiveFunction", event)["reason"] == "already built"
