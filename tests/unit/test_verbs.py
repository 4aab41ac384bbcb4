"""The verbs through their Lambda handler, in process (moto): the front door, captures,
the evidence gate, the lifecycle and the audit. End to end over HTTP: tests/e2e/test_verbs.py."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import boto3
import pytest
from moto.dynamodb.models import DynamoDBBackend

from devstack.events import rest_event
from devstack.lambdas import FakeLambdaContext, load_handler
from knowledge_service.domain.verbs.door import Call, Stores, invoke
from knowledge_service.domain.verbs.models import Published
from knowledge_service.identity.principal import Permission, Principal, PrincipalKind, ProjectRole
from knowledge_service.runtime import Runtime
from knowledge_service.storage.projects import ProjectStore
from knowledge_service.storage.verbs import INLINE_MAX, AssertionRecord, VerbAudit, VerbStore
from tests.budget import sized
from tests.conftest import TEMPLATE, Answer, Api, enrol

WORKSPACE = "falcon"
OTHER = "elsewhere"
READ_WRITE = frozenset({Permission.READ_KNOWLEDGE, Permission.WRITE_KNOWLEDGE})
MEMBER = Principal(name="mia", permissions=READ_WRITE, project_roles={WORKSPACE: ProjectRole.VIEWER})
ADMIN = Principal(
    name="ada", permissions=READ_WRITE | {Permission.MANAGE_KNOWLEDGE}, project_roles={WORKSPACE: ProjectRole.ADMIN}
)
OWNER = Principal(name="olu", permissions=frozenset(Permission), organizations=frozenset({"colony"}))
OTHER_ADMIN = Principal(name="oz", permissions=ADMIN.permissions, project_roles={OTHER: ProjectRole.ADMIN})
BODY = "Field notes. The colony moved the queen's chamber north in spring. Foragers followed."
QUOTE = "moved the queen's chamber north"


def agent(level: str | None) -> Principal:
    return Principal(
        name=f"agent-{level}",
        kind=PrincipalKind.AGENT,
        permissions=READ_WRITE,
        project_roles={WORKSPACE: ProjectRole.ADMIN},
        autonomy=level,
    )


@pytest.fixture
def workspaces(aws: Runtime) -> Runtime:
    aws.projects.create(WORKSPACE, "colony")
    aws.projects.create(OTHER, "other-org")
    return aws


def verb(
    api: Api,
    name: str,
    body: Any,
    who: Principal | None = ADMIN,
    *,
    workspace: str = WORKSPACE,
    headers: dict[str, str] | None = None,
) -> Answer:
    return api.call(
        "POST",
        f"/v/{name}",
        who,
        body=body,
        query={"workspace": workspace},
        headers={"Content-Type": "application/json", **(headers or {})},
    )


def capture(api: Api, body: str = BODY, *, workspace: str = WORKSPACE, who: Principal = ADMIN) -> str:
    made = verb(api, "capture.create", {"body": body, "title": "notes"}, who, workspace=workspace)
    assert made.status == 200, made.raw
    return str(made.body["captureId"])


def distil(api: Api, *, workspace: str = WORKSPACE, who: Principal = ADMIN, quote: str = QUOTE) -> Answer:
    capture_id = capture(api, workspace=workspace, who=who)
    return verb(
        api,
        "knowledge.distil",
        {"subject": "queen", "assertion": "The chamber moved north.", "captureId": capture_id, "evidenceQuote": quote},
        who,
        workspace=workspace,
    )


def distilled(api: Api, **kwargs: Any) -> str:
    answer = distil(api, **kwargs)
    assert answer.status == 200, answer.raw
    return str(answer.body["knowledgeId"])


def refused(answer: Answer, status: int, code: str) -> None:
    assert answer.status == status, answer.raw
    assert set(answer.body) == {"error", "code"}, answer.raw
    assert answer.body["code"] == code


def plant_draft(rt: Runtime) -> str:
    now = datetime.now(UTC)
    rt.verbs.create_assertion(
        AssertionRecord(
            workspace=WORKSPACE,
            knowledge_id="kn_" + "d" * 24,
            status="DRAFT",
            subject="note",
            assertion="a working note",
            created_by="specialist",
            created_at=now,
            updated_at=now,
        )
    )
    return "kn_" + "d" * 24


# ---------------------------------------------------------------------- captures
def test_a_capture_is_stored_with_its_sha256_and_read_back(api: Api, workspaces: Runtime) -> None:
    made = verb(api, "capture.create", {"body": BODY})
    assert made.status == 200, made.raw
    assert made.body["storage"] == "inline"
    assert made.body["size"] == len(BODY.encode())
    read = verb(api, "capture.get", {"captureId": made.body["captureId"]}, MEMBER)
    assert read.status == 200, read.raw
    assert read.body["body"] == BODY
    assert read.body["sha256"] == made.body["sha256"]


def test_a_large_capture_goes_to_s3_content_addressed(api: Api, workspaces: Runtime) -> None:
    body = "ant " * (INLINE_MAX // 4 + 10)
    made = verb(api, "capture.create", {"body": body})
    assert made.status == 200, made.raw
    assert made.body["storage"] == "s3"
    bucket = workspaces.env.archive_bucket
    keys = [o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket=bucket)["Contents"]]
    assert keys == [f"captures/sha256/{made.body['sha256']}"]
    assert verb(api, "capture.get", {"captureId": made.body["captureId"]}).body["body"] == body


def test_a_capture_whose_stored_bytes_changed_is_refused_not_served(api: Api, workspaces: Runtime) -> None:
    body = "ant " * (INLINE_MAX // 4 + 10)
    made = verb(api, "capture.create", {"body": body})
    boto3.client("s3").put_object(
        Bucket=workspaces.env.archive_bucket, Key=f"captures/sha256/{made.body['sha256']}", Body=b"tampered"
    )
    refused(verb(api, "capture.get", {"captureId": made.body["captureId"]}), 500, "Internal")


# ---------------------------------------------------------------------- the evidence gate
def test_distil_stores_an_assertion_whose_quote_is_in_the_capture(api: Api, workspaces: Runtime) -> None:
    answer = distil(api)
    assert answer.status == 200, answer.raw
    assert answer.body["status"] == "DISTILLED"
    assert answer.body["evidenceQuote"] == QUOTE
    assert answer.body["supersededById"] is None
    assert {"knowledgeId", "status", "subject", "assertion", "captureId", "evidenceQuote"} <= set(answer.body)


def test_a_quote_one_character_off_is_bad_input_and_nothing_is_written(api: Api, workspaces: Runtime) -> None:
    refused(distil(api, quote=QUOTE[:-1] + "H"), 400, "BadInput")
    assert verb(api, "knowledge.list", {}).body["total"] == 0


def test_propose_marks_the_distilled_row_for_review(api: Api, workspaces: Runtime) -> None:
    capture_id = capture(api)
    answer = verb(
        api,
        "knowledge.propose",
        {"captureId": capture_id, "subject": "s", "assertion": "a", "evidenceQuote": "Foragers", "confidence": 0.5},
        MEMBER,
    )
    assert answer.status == 200, answer.raw
    assert (answer.body["status"], answer.body["proposed"], answer.body["confidence"]) == ("DISTILLED", True, 0.5)


def test_a_snake_case_field_is_refused_naming_it(api: Api, workspaces: Runtime) -> None:
    answer = verb(api, "knowledge.get", {"knowledge_id": "kn_" + "0" * 24})
    refused(answer, 400, "BadInput")
    assert answer.body["error"].startswith("knowledge_id:")


# ---------------------------------------------------------------------- the lifecycle
def test_publish_promotes_distilled_and_a_republish_is_reported_not_rewritten(api: Api, workspaces: Runtime) -> None:
    knowledge_id = distilled(api)
    first = verb(api, "knowledge.publish", {"knowledgeId": knowledge_id})
    assert (first.body["status"], first.body["alreadyPublished"]) == ("PUBLISHED", False)
    again = verb(api, "knowledge.publish", {"knowledgeId": knowledge_id})
    assert (again.body["status"], again.body["alreadyPublished"]) == ("PUBLISHED", True)
    assert again.body["updatedAt"] == first.body["updatedAt"]


def test_publish_of_a_draft_is_a_conflict(api: Api, workspaces: Runtime) -> None:
    refused(verb(api, "knowledge.publish", {"knowledgeId": plant_draft(workspaces)}), 409, "Conflict")


def test_retire_only_from_published_and_it_is_terminal(api: Api, workspaces: Runtime) -> None:
    knowledge_id = distilled(api)
    refused(verb(api, "knowledge.retire", {"knowledgeId": knowledge_id}), 409, "Conflict")
    verb(api, "knowledge.publish", {"knowledgeId": knowledge_id})
    retired = verb(api, "knowledge.retire", {"knowledgeId": knowledge_id, "reason": "wrong season"})
    assert (retired.body["status"], retired.body["retiredReason"]) == ("RETIRED", "wrong season")
    refused(verb(api, "knowledge.retire", {"knowledgeId": knowledge_id}), 409, "Conflict")
    refused(verb(api, "knowledge.publish", {"knowledgeId": knowledge_id}), 409, "Conflict")


def test_review_reject_changes_nothing_but_is_audited_and_approve_publishes(api: Api, workspaces: Runtime) -> None:
    knowledge_id = distilled(api)
    rejected = verb(api, "knowledge.review", {"knowledgeId": knowledge_id, "decision": "REJECT", "reason": "thin"})
    assert (rejected.body["status"], rejected.body["decision"]) == ("DISTILLED", "REJECT")
    rows = [r for r in workspaces.verb_audit.rows(WORKSPACE) if r["verb"] == "knowledge.review"]
    assert rows[0]["detail"] == {"knowledgeId": knowledge_id, "decision": "REJECT", "reason": "thin"}
    assert rows[0]["outcome"] == "ok"
    approved = verb(api, "knowledge.review", {"knowledgeId": knowledge_id, "decision": "APPROVE"})
    assert (approved.body["status"], approved.body["decision"]) == ("PUBLISHED", "APPROVE")


def test_supersede_points_forward_and_retains_the_superseded_row(api: Api, workspaces: Runtime) -> None:
    old, new = distilled(api), distilled(api)
    answer = verb(api, "knowledge.supersede", {"knowledgeId": old, "supersededById": new})
    assert (answer.body["status"], answer.body["supersededById"]) == ("SUPERSEDED", new)
    kept = verb(api, "knowledge.get", {"knowledgeId": old})
    assert (kept.body["status"], kept.body["supersededById"], kept.body["captureBody"]) == ("SUPERSEDED", new, BODY)
    refused(verb(api, "knowledge.publish", {"knowledgeId": old}), 409, "Conflict")  # SUPERSEDED is a Conflict
    refused(verb(api, "knowledge.supersede", {"knowledgeId": old, "supersededById": distilled(api)}), 409, "Conflict")


def test_supersede_by_itself_is_bad_input(api: Api, workspaces: Runtime) -> None:
    knowledge_id = distilled(api)
    refused(
        verb(api, "knowledge.supersede", {"knowledgeId": knowledge_id, "supersededById": knowledge_id}), 400, "BadInput"
    )


def test_a_two_step_and_a_three_step_cycle_are_refused(api: Api, workspaces: Runtime) -> None:
    a, b = distilled(api), distilled(api)
    assert verb(api, "knowledge.supersede", {"knowledgeId": b, "supersededById": a}).status == 200
    refused(verb(api, "knowledge.supersede", {"knowledgeId": a, "supersededById": b}), 409, "Conflict")
    d, e, f = distilled(api), distilled(api), distilled(api)
    assert verb(api, "knowledge.supersede", {"knowledgeId": e, "supersededById": f}).status == 200
    assert verb(api, "knowledge.supersede", {"knowledgeId": f, "supersededById": d}).status == 200
    refused(verb(api, "knowledge.supersede", {"knowledgeId": d, "supersededById": e}), 409, "Conflict")
    assert verb(api, "knowledge.get", {"knowledgeId": d}).body["status"] == "DISTILLED"


def test_list_filters_by_status_and_jurisdiction_with_limit_and_offset(api: Api, workspaces: Runtime) -> None:
    capture_id = capture(api)
    ids = []
    for jurisdiction in ("eu", "eu", "us"):
        made = verb(
            api,
            "knowledge.distil",
            {
                "subject": "s",
                "assertion": "a",
                "captureId": capture_id,
                "evidenceQuote": "colony",
                "jurisdiction": jurisdiction,
            },
        )
        ids.append(made.body["knowledgeId"])
    verb(api, "knowledge.publish", {"knowledgeId": ids[0]})
    eu = verb(api, "knowledge.list", {"jurisdiction": "eu"}, MEMBER).body
    assert (eu["total"], [i["knowledgeId"] for i in eu["items"]]) == (2, ids[:2])
    published = verb(api, "knowledge.list", {"status": "PUBLISHED"}).body
    assert [i["knowledgeId"] for i in published["items"]] == [ids[0]]
    page = verb(api, "knowledge.list", {"limit": 1, "offset": 1}).body
    assert (page["total"], [i["knowledgeId"] for i in page["items"]]) == (3, [ids[1]])
    refused(verb(api, "knowledge.list", {"limit": 101}), 400, "BadInput")
    refused(verb(api, "knowledge.list", {"limit": "8"}), 400, "BadInput")


# ---------------------------------------------------------------------- the front door
def test_another_workspaces_id_answers_exactly_as_a_missing_one(api: Api, workspaces: Runtime) -> None:
    theirs = distilled(api, workspace=OTHER, who=OTHER_ADMIN)
    their_capture = capture(api, workspace=OTHER, who=OTHER_ADMIN)
    missing = "kn_" + "0" * 24
    for name, body in (
        ("knowledge.get", {"knowledgeId": "{id}"}),
        ("knowledge.publish", {"knowledgeId": "{id}"}),
        ("knowledge.retire", {"knowledgeId": "{id}"}),
        ("knowledge.review", {"knowledgeId": "{id}", "decision": "REJECT"}),
        ("knowledge.supersede", {"knowledgeId": "{id}", "supersededById": distilled(api)}),
    ):
        answers = [
            verb(api, name, {k: (v.replace("{id}", i) if isinstance(v, str) else v) for k, v in body.items()})
            for i in (theirs, missing)
        ]
        refused(answers[0], 404, "NotFound")
        assert answers[0].raw == answers[1].raw.replace(missing, theirs), name
    other = verb(api, "capture.get", {"captureId": their_capture})
    never = verb(api, "capture.get", {"captureId": "cap_" + "0" * 24})
    refused(other, 404, "NotFound")
    assert other.raw == never.raw.replace("cap_" + "0" * 24, their_capture)
    assert verb(api, "knowledge.get", {"knowledgeId": theirs}, OTHER_ADMIN, workspace=OTHER).status == 200


def test_a_member_calling_an_admin_verb_is_forbidden(api: Api, workspaces: Runtime) -> None:
    knowledge_id = distilled(api, who=MEMBER)
    for name in ("knowledge.publish", "knowledge.supersede"):
        refused(
            verb(api, name, {"knowledgeId": knowledge_id, "supersededById": knowledge_id}, MEMBER), 403, "Forbidden"
        )
    assert verb(api, "knowledge.get", {"knowledgeId": knowledge_id}, MEMBER).body["status"] == "DISTILLED"


def test_naming_a_workspace_without_standing_is_forbidden_and_an_unknown_one_not_found(
    api: Api, workspaces: Runtime
) -> None:
    refused(verb(api, "knowledge.list", {}, MEMBER, workspace=OTHER), 403, "Forbidden")
    refused(verb(api, "knowledge.list", {}, MEMBER, workspace="nowhere"), 404, "NotFound")
    refused(verb(api, "knowledge.list", {}, MEMBER, workspace="not a project!"), 400, "BadInput")
    refused(api.call("POST", "/v/knowledge.list", MEMBER, body={}), 400, "BadInput")  # no ?workspace=


@pytest.mark.parametrize(
    ("level", "allowed"),
    [
        (None, {"knowledge.list"}),
        ("L0", {"knowledge.list"}),
        ("L1", {"knowledge.list", "capture.create"}),
        ("L2", {"knowledge.list", "capture.create", "knowledge.publish"}),
    ],
)
def test_an_agent_is_held_to_its_autonomy(api: Api, workspaces: Runtime, level: str | None, allowed: set[str]) -> None:
    knowledge_id = distilled(api)
    calls = {
        "knowledge.list": {},
        "capture.create": {"body": "x"},
        "knowledge.publish": {"knowledgeId": knowledge_id},
    }
    for name, body in calls.items():
        answer = verb(api, name, body, agent(level))
        if name in allowed:
            assert answer.status == 200, f"{level} {name}: {answer.raw}"
        else:
            refused(answer, 403, "Forbidden")


def test_an_agent_never_reviews_or_retires_whatever_its_autonomy(api: Api, workspaces: Runtime) -> None:
    knowledge_id = distilled(api)
    refused(
        verb(api, "knowledge.review", {"knowledgeId": knowledge_id, "decision": "APPROVE"}, agent("L2")),
        403,
        "Forbidden",
    )
    refused(verb(api, "knowledge.retire", {"knowledgeId": knowledge_id}, agent("L2")), 403, "Forbidden")


def test_the_budget_gate_refuses_until_the_owner_breaks_glass(api: Api, workspaces: Runtime) -> None:
    capture_id = capture(api)
    request = {"subject": "s", "assertion": "a", "captureId": capture_id, "evidenceQuote": "colony"}
    workspaces.verbs.set_budget(WORKSPACE, Decimal(10), Decimal(10))
    refused(verb(api, "knowledge.distil", request), 429, "BudgetExceeded")
    assert verb(api, "knowledge.propose", request).status == 200  # propose is not budget-gated
    refused(verb(api, "knowledge.distil", request, headers={"X-Break-Glass": "incident 7"}), 403, "Forbidden")
    glass = verb(api, "knowledge.distil", request, OWNER, headers={"X-Break-Glass": "incident 7"})
    assert glass.status == 200, glass.raw
    rows = [r for r in workspaces.verb_audit.rows(WORKSPACE) if r["verb"] == "knowledge.distil"]
    assert [(r["decision"], r.get("code"), r.get("break_glass")) for r in rows] == [
        ("refused", "BudgetExceeded", None),
        ("refused", "Forbidden", None),
        ("allowed", None, "incident 7"),
    ]
    workspaces.verbs.set_budget(WORKSPACE, Decimal(20), None)
    assert verb(api, "knowledge.distil", request).status == 200


def test_every_call_allowed_or_refused_leaves_one_audit_row(api: Api, workspaces: Runtime) -> None:
    before = len(workspaces.verb_audit.rows(WORKSPACE))
    answers = [
        verb(api, "knowledge.list", {}),
        verb(api, "knowledge.list", {}, agent("L0")),
        verb(api, "knowledge.publish", {"knowledgeId": "kn_" + "0" * 24}),
        verb(api, "knowledge.publish", {"knowledgeId": "kn_" + "0" * 24}, MEMBER),
        verb(api, "knowledge.list", {"bogus": 1}),
    ]
    assert [a.status for a in answers] == [200, 200, 404, 403, 400]
    rows = workspaces.verb_audit.rows(WORKSPACE)[before:]
    assert [(r["decision"], r.get("code") or r.get("outcome")) for r in rows] == [
        ("allowed", "ok"),
        ("allowed", "ok"),
        ("allowed", "NotFound"),
        ("refused", "Forbidden"),
        ("refused", "BadInput"),
    ]


def test_an_unauthenticated_call_is_refused_and_audited(api: Api, workspaces: Runtime) -> None:
    refused(verb(api, "knowledge.list", {}, None), 401, "Unauthenticated")
    assert workspaces.verb_audit.rows(WORKSPACE)[-1]["code"] == "Unauthenticated"


def test_the_catalogue_reports_tiers_and_risk(api: Api, workspaces: Runtime) -> None:
    answer = api.call("GET", "/v", MEMBER)
    assert answer.status == 200, answer.raw
    verbs = {v["verb"]: v for v in answer.body["verbs"]}
    assert {n for n, v in verbs.items() if v["mcpTier"] == 1} == {"knowledge.get", "knowledge.list"}
    assert {n for n, v in verbs.items() if v["mcpTier"] == 2} == {"knowledge.publish"}
    assert verbs["knowledge.publish"]["idempotent"] is True
    assert (verbs["knowledge.supersede"]["riskClass"], verbs["knowledge.supersede"]["minAutonomy"]) == (
        "sensitive",
        "L2",
    )
    assert verbs["knowledge.distil"]["budgetGated"] is True


# ---------------------------------------------------------------------- concurrency
@pytest.fixture
def atomic_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """DynamoDB evaluates a conditional write and applies it atomically; moto, called from two
    threads, can interleave the two. Give moto DynamoDB's guarantee, nothing more."""
    lock = threading.RLock()
    for name in ("put_item", "update_item", "transact_write_items"):
        original = getattr(DynamoDBBackend, name)

        def serialized(self: Any, *args: Any, __original: Any = original, **kwargs: Any) -> Any:
            with lock:
                return __original(self, *args, **kwargs)

        monkeypatch.setattr(DynamoDBBackend, name, serialized)


PUBLISH_RACES = sized(ci=25, deep=200)
"""50 races took 9 s at load 4 and 35 s at load 7; make deep runs 200."""


def test_two_concurrent_publishes_exactly_one_writes_in_every_trial(
    api: Api, workspaces: Runtime, atomic_writes: None
) -> None:
    env = workspaces.env

    def stores() -> Stores:  # one boto3 resource per thread (resources are not thread-safe)
        resource = boto3.resource("dynamodb")
        return Stores(
            ProjectStore(resource, env.projects_table),
            VerbStore(resource, env.verbs_table, boto3.client("s3"), env.archive_bucket),
            VerbAudit(resource, env.verb_audit_table),
        )

    capture_id = capture(api)
    for trial in range(PUBLISH_RACES):
        made = verb(
            api,
            "knowledge.distil",
            {"subject": f"s{trial}", "assertion": "a", "captureId": capture_id, "evidenceQuote": "colony"},
        )
        knowledge_id = made.body["knowledgeId"]
        body = json.dumps({"knowledgeId": knowledge_id}).encode()
        barrier = threading.Barrier(2)
        results: list[Any] = []

        def publish(
            own: Stores, body: bytes = body, barrier: threading.Barrier = barrier, results: list[Any] = results
        ) -> None:
            barrier.wait()
            results.append(invoke(own, Call("knowledge.publish", ADMIN, WORKSPACE, body)))

        threads = [threading.Thread(target=publish, args=(stores(),)) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(results) == 2
        assert all(isinstance(r, Published) and r.status == "PUBLISHED" for r in results)
        assert sorted(r.already_published for r in results) == [False, True], f"trial {trial}"


@pytest.mark.parametrize("raw", ["null", "[]", '"x"', "7", "{", "", '{"knowledgeId": null}', "\ud800"])
def test_a_body_that_is_not_the_verbs_input_is_bad_input(api: Api, workspaces: Runtime, raw: str) -> None:
    for name in ("knowledge.get", "knowledge.list", "capture.create"):
        answer = verb(api, name, raw if raw else None)
        if name == "knowledge.list" and raw == "":
            assert answer.status == 200, answer.raw  # every field of list is optional: no body is {}
            continue
        refused(answer, 400, "BadInput")


def test_an_oversized_body_is_refused_before_it_is_parsed(api: Api, workspaces: Runtime) -> None:
    refused(verb(api, "capture.create", '{"body": "' + "a" * (2 * 1024 * 1024) + '"}'), 400, "BadInput")


def test_bytes_that_are_not_utf8_are_bad_input_not_a_failure(workspaces: Runtime) -> None:
    (route,) = [r for r in TEMPLATE.routes() if (r.method, r.path) == ("POST", "/v/knowledge.supersede")]
    handler = load_handler(route.handler_dir, route.handler, f"lambda_{route.function}")
    for body in (b"Eq\xff\xfe", b'{"knowledgeId": "\xff"}'):
        event = rest_event(  # bytes that are not UTF-8 travel base64-encoded, as API Gateway sends them
            "POST",
            "/v/knowledge.supersede",
            resource=route.path,
            query={"workspace": WORKSPACE, "\u00e3\u00f3": "9191151480406024.0"},
            body=body,
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {enrol(ADMIN)}"},
        )
        assert event["isBase64Encoded"] is True
        response = handler(event, FakeLambdaContext(route.function))
        assert (response["statusCode"], json.loads(response["body"])["code"]) == (400, "BadInput"), response


# ---------------------------------------------------------------------- the nets (issue 25)
def test_an_agent_owning_the_workspace_cannot_break_glass_and_nothing_is_written(api: Api, workspaces: Runtime) -> None:
    owner_agent = Principal(
        name="agent-owner",
        kind=PrincipalKind.AGENT,
        permissions=READ_WRITE,
        organizations=frozenset({"colony"}),
        autonomy="L2",
    )
    capture_id = capture(api)
    request = {"subject": "s", "assertion": "a", "captureId": capture_id, "evidenceQuote": "colony"}
    workspaces.verbs.set_budget(WORKSPACE, Decimal(10), Decimal(10))
    answer = verb(api, "knowledge.distil", request, owner_agent, headers={"X-Break-Glass": "incident 7"})
    refused(answer, 403, "Forbidden")
    assert verb(api, "knowledge.list", {}).body["total"] == 0
    row = [r for r in workspaces.verb_audit.rows(WORKSPACE) if r["verb"] == "knowledge.distil"][-1]
    assert (row["verb"], row["principal"], row["decision"], row["code"]) == (
        "knowledge.distil",
        "agent-owner",
        "refused",
        "Forbidden",
    )
    assert row.get("break_glass") is None


@pytest.mark.parametrize("level", ["L9", "l3", "root", ""])
def test_an_unknown_autonomy_value_acts_as_l0_never_more(api: Api, workspaces: Runtime, level: str) -> None:
    knowledge_id = distilled(api)
    assert verb(api, "knowledge.list", {}, agent(level)).status == 200
    refused(verb(api, "capture.create", {"body": "x"}, agent(level)), 403, "Forbidden")
    refused(verb(api, "knowledge.publish", {"knowledgeId": knowledge_id}, agent(level)), 403, "Forbidden")
    assert verb(api, "knowledge.get", {"knowledgeId": knowledge_id}).body["status"] == "DISTILLED"


def test_the_verb_audit_never_keeps_a_body_or_an_evidence_quote(api: Api, workspaces: Runtime) -> None:
    capture_id = capture(api)
    made = verb(
        api,
        "knowledge.propose",
        {"captureId": capture_id, "subject": "s", "assertion": "a", "evidenceQuote": QUOTE, "confidence": 0.5},
    )
    assert made.status == 200, made.raw
    knowledge_id = distilled(api)
    verb(api, "knowledge.review", {"knowledgeId": knowledge_id, "decision": "REJECT", "reason": "thin"})
    rows = workspaces.verb_audit.rows(WORKSPACE)
    assert {r["verb"] for r in rows} >= {"capture.create", "knowledge.propose", "knowledge.distil", "knowledge.review"}
    for row in rows:
        kept = json.dumps(row, default=str)
        assert QUOTE not in kept and "Field notes" not in kept, row
        assert set(row.get("detail", {})) <= {
            "knowledgeId",
            "supersededById",
            "captureId",
            "decision",
            "reason",
            "status",
        }


def test_a_reject_of_a_published_assertion_is_a_conflict_and_changes_nothing(api: Api, workspaces: Runtime) -> None:
    knowledge_id = distilled(api)
    published = verb(api, "knowledge.publish", {"knowledgeId": knowledge_id})
    refused(verb(api, "knowledge.review", {"knowledgeId": knowledge_id, "decision": "REJECT"}), 409, "Conflict")
    kept = verb(api, "knowledge.get", {"knowledgeId": knowledge_id}).body
    assert (kept["status"], kept["updatedAt"]) == ("PUBLISHED", published.body["updatedAt"])


def test_a_valid_body_over_the_verbs_own_cap_is_refused_by_that_cap(api: Api, workspaces: Runtime) -> None:
    from knowledge_service.domain.verbs.door import MAX_BODY

    padded = '{"limit": 1}' + " " * (MAX_BODY - len('{"limit": 1}') + 1)  # valid JSON, one byte over the cap
    answer = verb(api, "knowledge.list", padded)
    refused(answer, 400, "BadInput")
    assert answer.body["error"].startswith("body:")
    at_cap = '{"limit": 1}' + " " * (MAX_BODY - len('{"limit": 1}'))
    assert verb(api, "knowledge.list", at_cap).status == 200


def test_a_break_glass_reason_of_500_characters_is_taken_and_501_is_refused_naming_the_header(
    api: Api, workspaces: Runtime
) -> None:
    capture_id = capture(api)
    request = {"subject": "s", "assertion": "a", "captureId": capture_id, "evidenceQuote": "colony"}
    workspaces.verbs.set_budget(WORKSPACE, Decimal(10), Decimal(10))
    too_long = verb(api, "knowledge.distil", request, OWNER, headers={"X-Break-Glass": "r" * 501})
    refused(too_long, 400, "BadInput")
    assert too_long.body["error"].startswith("X-Break-Glass:")
    taken = verb(api, "knowledge.distil", request, OWNER, headers={"X-Break-Glass": "r" * 500})
    assert taken.status == 200, taken.raw
