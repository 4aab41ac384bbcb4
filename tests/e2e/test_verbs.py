"""The knowledge.* verbs over HTTP against the local stack, as a client calls them: every verb
and every refusal the issue lists, with principals made by ``knowledge-admin --local``."""

from __future__ import annotations

import json
import uuid
from functools import cached_property
from pathlib import Path
from typing import Any

import httpx
import pytest

from knowledge_service.storage.verbs import AUDIT_SHARDS
from tests.localstack import LocalStack, bearer

pytestmark = pytest.mark.e2e

BODY = "Survey, spring. The colony moved the queen's chamber north after the flood. Foragers followed."
QUOTE = "moved the queen's chamber north"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class Workspace:
    """A fresh workspace (project) for one test; calls are the Owner's unless a token is named.
    Its Admin and Member principals are made on first use (each is a knowledge-admin run)."""

    def __init__(self, stack: LocalStack, http: httpx.Client) -> None:
        self.stack, self.http = stack, http
        self.id = unique("ws")
        stack.admin("project", "create", self.id, "--organization", "colony")
        self.owner = stack.admin_token  # the stack's admin owns organization colony

    @cached_property
    def admin(self) -> str:
        rw = ("--permission", "read_knowledge", "--permission", "write_knowledge", "--permission", "manage_knowledge")
        return self.stack.principal(unique("admin"), *rw, "--role", f"{self.id}=admin")

    @cached_property
    def member(self) -> str:
        rw = ("--permission", "read_knowledge", "--permission", "write_knowledge")
        return self.stack.principal(unique("member"), *rw, "--role", f"{self.id}=viewer")

    def agent(self, level: str) -> str:
        return self.stack.principal(
            unique(f"agent-{level}"),
            "--kind",
            "agent",
            "--permission",
            "read_knowledge",
            "--permission",
            "write_knowledge",
            "--role",
            f"{self.id}=admin",
            "--autonomy",
            level,
        )

    def call(
        self, verb: str, body: Any, token: str | None = None, *, workspace: str | None = None, **headers: str
    ) -> httpx.Response:
        return self.http.post(
            f"/v/{verb}",
            params={"workspace": workspace or self.id},
            json=body,
            headers={**bearer(token or self.owner), **headers},
        )

    def capture(self, body: str = BODY) -> str:
        made = self.call("capture.create", {"body": body, "title": "survey"})
        assert made.status_code == 200, made.text
        return str(made.json()["captureId"])

    def distil(self, quote: str = QUOTE, token: str | None = None) -> httpx.Response:
        request = {"subject": "queen", "assertion": "The chamber moved north.", "captureId": self.capture()}
        return self.call("knowledge.distil", {**request, "evidenceQuote": quote}, token)

    def distilled(self) -> str:
        answer = self.distil()
        assert answer.status_code == 200, answer.text
        return str(answer.json()["knowledgeId"])


@pytest.fixture
def ws(stack: LocalStack, http: httpx.Client) -> Workspace:
    return Workspace(stack, http)


def refused(answer: httpx.Response, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.json().keys() == {"error", "code"}
    assert answer.json()["code"] == code


# ---------------------------------------------------------------------- every verb
def test_capture_create_and_get(ws: Workspace) -> None:
    capture_id = ws.capture()
    read = ws.call("capture.get", {"captureId": capture_id}, ws.member)
    assert read.status_code == 200, read.text
    assert (read.json()["body"], len(read.json()["sha256"])) == (BODY, 64)


def test_a_large_capture_round_trips_through_s3(ws: Workspace) -> None:
    body = "ant trail " * 10_000
    made = ws.call("capture.create", {"body": body})
    assert (made.status_code, made.json()["storage"]) == (200, "s3"), made.text
    assert ws.call("capture.get", {"captureId": made.json()["captureId"]}).json()["body"] == body


def test_distil_get_list_publish_retire(ws: Workspace) -> None:
    knowledge_id = ws.distilled()
    got = ws.call("knowledge.get", {"knowledgeId": knowledge_id}, ws.member).json()
    assert (got["status"], got["evidenceQuote"], got["captureBody"], got["supersededById"]) == (
        "DISTILLED",
        QUOTE,
        BODY,
        None,
    )
    listed = ws.call("knowledge.list", {"status": "DISTILLED", "limit": 10}, ws.member).json()
    assert [i["knowledgeId"] for i in listed["items"]] == [knowledge_id]
    published = ws.call("knowledge.publish", {"knowledgeId": knowledge_id}).json()
    assert (published["status"], published["alreadyPublished"]) == ("PUBLISHED", False)
    again = ws.call("knowledge.publish", {"knowledgeId": knowledge_id}).json()
    assert (again["status"], again["alreadyPublished"]) == ("PUBLISHED", True)
    retired = ws.call("knowledge.retire", {"knowledgeId": knowledge_id, "reason": "flood survey superseded"})
    assert retired.json()["status"] == "RETIRED", retired.text


def test_propose_then_review_reject_and_approve(ws: Workspace) -> None:
    request = {"captureId": ws.capture(), "subject": "s", "assertion": "a", "evidenceQuote": "Foragers followed."}
    proposed = ws.call("knowledge.propose", request, ws.member).json()
    assert (proposed["status"], proposed["proposed"]) == ("DISTILLED", True)
    rejected = ws.call("knowledge.review", {"knowledgeId": proposed["knowledgeId"], "decision": "REJECT"}).json()
    assert (rejected["status"], rejected["decision"]) == ("DISTILLED", "REJECT")
    approved = ws.call("knowledge.review", {"knowledgeId": proposed["knowledgeId"], "decision": "APPROVE"}).json()
    assert approved["status"] == "PUBLISHED"


def test_supersede_keeps_the_old_row_pointing_forward(ws: Workspace) -> None:
    old, new = ws.distilled(), ws.distilled()
    answer = ws.call("knowledge.supersede", {"knowledgeId": old, "supersededById": new})
    assert (answer.json()["status"], answer.json()["supersededById"]) == ("SUPERSEDED", new), answer.text
    assert ws.call("knowledge.get", {"knowledgeId": old}).json()["supersededById"] == new


def test_the_catalogue_reports_each_verbs_tier(ws: Workspace, http: httpx.Client) -> None:
    answer = http.get("/v", headers=bearer(ws.member))
    assert answer.status_code == 200, answer.text
    tiers = {v["verb"]: v["mcpTier"] for v in answer.json()["verbs"]}
    assert tiers["knowledge.get"] == tiers["knowledge.list"] == 1
    assert tiers["knowledge.publish"] == 2
    assert tiers["knowledge.distil"] is None
    assert http.get("/v/", headers=bearer(ws.member)).json() == answer.json()  # GET /v/ is the same route


# ---------------------------------------------------------------------- every refusal
def test_a_quote_one_character_off_is_bad_input(ws: Workspace) -> None:
    refused(ws.distil(QUOTE.replace("north", "nortH")), 400, "BadInput")
    assert ws.call("knowledge.list", {}).json()["total"] == 0


def test_another_workspaces_id_answers_as_a_missing_one(ws: Workspace, stack: LocalStack, http: httpx.Client) -> None:
    other = Workspace(stack, http)
    theirs = other.distilled()
    missing = "kn_" + "0" * 24
    from_other = ws.call("knowledge.get", {"knowledgeId": theirs})
    never = ws.call("knowledge.get", {"knowledgeId": missing})
    refused(from_other, 404, "NotFound")
    assert from_other.text == never.text.replace(missing, theirs)
    refused(ws.call("knowledge.list", {}, other.admin), 403, "Forbidden")  # naming another workspace


def test_a_member_calling_an_admin_verb_is_forbidden(ws: Workspace) -> None:
    knowledge_id = ws.distilled()
    refused(ws.call("knowledge.publish", {"knowledgeId": knowledge_id}, ws.member), 403, "Forbidden")
    refused(ws.call("knowledge.retire", {"knowledgeId": knowledge_id}, ws.member), 403, "Forbidden")


def test_an_l0_agent_calling_a_write_verb_is_forbidden_and_l1_is_let_through(ws: Workspace) -> None:
    refused(ws.distil(token=ws.agent("L0")), 403, "Forbidden")
    l1 = ws.agent("L1")
    assert ws.distil(token=l1).status_code == 200
    refused(ws.call("knowledge.publish", {"knowledgeId": ws.distilled()}, l1), 403, "Forbidden")
    assert ws.call("knowledge.publish", {"knowledgeId": ws.distilled()}, ws.agent("L2")).status_code == 200


def test_the_budget_gate_with_and_without_break_glass(ws: Workspace, stack: LocalStack) -> None:
    stack.admin("budget", "set", ws.id, "--limit", "5", "--spent", "5")
    refused(ws.distil(), 429, "BudgetExceeded")
    request = {"subject": "s", "assertion": "a", "captureId": ws.capture(), "evidenceQuote": QUOTE}
    refused(ws.call("knowledge.distil", request, ws.admin, **{"X-Break-Glass": "not mine"}), 403, "Forbidden")
    glass = ws.call("knowledge.distil", request, ws.owner, **{"X-Break-Glass": "incident 42"})
    assert glass.status_code == 200, glass.text
    audit = [  # the workspace's rows: its shards (storage/verbs.py's VerbAudit)
        item
        for shard in range(AUDIT_SHARDS)
        for item in stack.aws_client("dynamodb").query(
            TableName=stack.env["VERB_AUDIT_TABLE"],
            KeyConditionExpression="workspace = :w",
            ExpressionAttributeValues={":w": {"S": f"{ws.id}#{shard}"}},
        )["Items"]
    ]
    assert [i["break_glass"]["S"] for i in audit if "break_glass" in i] == ["incident 42"]


def test_publish_of_a_draft_is_a_conflict(ws: Workspace, stack: LocalStack) -> None:
    draft = "kn_" + uuid.uuid4().hex[:24]
    now = "2026-11-30T00:00:00+00:00"
    stack.aws_client("dynamodb").put_item(  # a DRAFT comes from another surface (a working note)
        TableName=stack.env["VERBS_TABLE"],
        Item={
            "workspace": {"S": ws.id},
            "sk": {"S": f"knowledge#{draft}"},
            "knowledge_id": {"S": draft},
            "status": {"S": "DRAFT"},
            "subject": {"S": "note"},
            "assertion": {"S": "a working note"},
            "created_by": {"S": "specialist"},
            "created_at": {"S": now},
            "updated_at": {"S": now},
        },
    )
    refused(ws.call("knowledge.publish", {"knowledgeId": draft}), 409, "Conflict")
    assert ws.call("knowledge.get", {"knowledgeId": draft}).json()["status"] == "DRAFT"


def test_retire_of_a_distilled_assertion_is_a_conflict(ws: Workspace) -> None:
    knowledge_id = ws.distilled()
    refused(ws.call("knowledge.retire", {"knowledgeId": knowledge_id}), 409, "Conflict")


def test_a_two_step_supersede_cycle_is_refused(ws: Workspace) -> None:
    a, b = ws.distilled(), ws.distilled()
    assert ws.call("knowledge.supersede", {"knowledgeId": a, "supersededById": b}).status_code == 200
    refused(ws.call("knowledge.supersede", {"knowledgeId": b, "supersededById": a}), 409, "Conflict")


def test_a_three_step_supersede_cycle_is_refused(ws: Workspace) -> None:
    a, b, c = ws.distilled(), ws.distilled(), ws.distilled()
    assert ws.call("knowledge.supersede", {"knowledgeId": a, "supersededById": b}).status_code == 200
    assert ws.call("knowledge.supersede", {"knowledgeId": b, "supersededById": c}).status_code == 200
    refused(ws.call("knowledge.supersede", {"knowledgeId": c, "supersededById": a}), 409, "Conflict")
    assert ws.call("knowledge.get", {"knowledgeId": c}).json()["status"] == "DISTILLED"


def test_no_token_is_unauthenticated(ws: Workspace, http: httpx.Client) -> None:
    answer = http.post(f"/v/knowledge.list?workspace={ws.id}", json={})
    assert answer.status_code == 401


# ---------------------------------------------------------------------- the CLI door
def test_the_cli_door_calls_the_same_front_door(ws: Workspace, stack: LocalStack, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(ws.member)
    capture_id = ws.capture()
    request = json.dumps({"subject": "s", "assertion": "a", "captureId": capture_id, "evidenceQuote": QUOTE})
    out = stack.admin(
        "verb", "knowledge.distil", "--workspace", ws.id, "--json", request, "--token-file", str(token_file)
    )
    knowledge_id = json.loads(out)["knowledgeId"]
    assert ws.call("knowledge.get", {"knowledgeId": knowledge_id}).json()["createdBy"].startswith("member-")
