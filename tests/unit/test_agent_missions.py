"""Agent missions (moto): intake of the bus events, the credential, the role contract."""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from boto3.dynamodb.conditions import Key
from pydantic import ValidationError

from knowledge_service.domain import agent_missions as missions
from knowledge_service.domain.pages.service import Pages
from knowledge_service.domain.pages.session_brain import SessionBrain
from knowledge_service.errors import BadRequest, NotFound, Unauthenticated
from knowledge_service.identity.principal import Permission, PrincipalKind, ProjectRole
from knowledge_service.runtime import Runtime
from knowledge_service.storage.agent_missions import EXPIRY_ATTRIBUTE, RoleContract
from knowledge_service.storage.page_store import BRAIN_EXPIRY_ATTRIBUTE
from tests.conftest import TEMPLATE


@pytest.fixture
def rt(aws: Runtime) -> Runtime:
    aws.projects.create("falcon", "colony", name="Falcon")
    aws.projects.create("harbour", "colony", name="Harbour")
    aws.agent_missions.put_role(missions.role_contract("reader", ["knowledge_search", "brain_get"], "viewer", None))
    aws.agent_missions.put_role(
        missions.role_contract("writer", ["knowledge_search", "brain_put", "knowledge.publish"], "admin", 600)
    )
    return aws


def started(credential: str, role: str = "reader", event_id: str | None = None, **detail: Any) -> dict[str, Any]:
    return {
        "id": event_id or str(uuid.uuid4()),
        "detail-type": missions.STARTED,
        "source": missions.MISSION_SOURCE,
        "detail": {
            "project": "falcon",
            "role": role,
            "credential_sha256": missions.credential_hash(credential),
            **detail,
        },
    }


def intake(rt: Runtime, event: dict[str, Any]) -> Any:
    return missions.intake(rt.agent_missions, rt.projects, rt.pages, event)


def bearer(credential: str) -> str:
    return f"Bearer {credential}"


def test_intake_records_a_mission_bound_to_its_project_role_tools_and_expiry(rt: Runtime) -> None:
    credential = missions.mint_credential()
    mission = intake(rt, started(credential, autonomy="L1"))
    assert (mission.project, mission.role, mission.autonomy) == ("falcon", "reader", "L1")
    assert mission.tools == ("knowledge_search", "brain_get")
    assert mission.expires_at - mission.started_at == timedelta(hours=8)
    assert missions.authenticate(rt.agent_missions, bearer(credential)).mission_id == mission.mission_id


def test_the_same_event_twice_records_one_mission(rt: Runtime) -> None:
    credential = missions.mint_credential()
    event = started(credential)
    first = intake(rt, event)
    again = intake(rt, {**event, "detail": {**event["detail"], "role": "writer"}})
    assert again == first
    assert rt.agent_missions.record(first) is False  # the transaction's condition holds it too


def test_both_mission_items_carry_the_tables_ttl_thirty_days_after_expiry(rt: Runtime) -> None:
    mission = intake(rt, started(missions.mint_credential()))
    ttl = TEMPLATE.resources["ConfigTable"]["Properties"]["TimeToLiveSpecification"]
    assert ttl == {"AttributeName": EXPIRY_ATTRIBUTE, "Enabled": True}
    items = [i for i in rt.config._table.scan()["Items"] if i.get("mission_id") == mission.mission_id]  # type: ignore[attr-defined]
    assert len(items) == 2
    assert {int(i[EXPIRY_ATTRIBUTE]) for i in items} == {int((mission.expires_at + timedelta(days=30)).timestamp())}
    keys = {(i["pk"], i["sk"]) for i in items}
    assert keys == {
        ("agent_mission", mission.mission_id),
        (f"agent_credential#{mission.credential_hash}", "credential"),
    }


def test_the_credential_is_stored_only_as_its_hash(rt: Runtime) -> None:
    credential = missions.mint_credential()
    intake(rt, started(credential))
    items = rt.config._table.scan()["Items"]  # type: ignore[attr-defined]
    assert all(credential not in str(item) for item in items)
    assert any(hashlib.sha256(credential.encode()).hexdigest() in str(item) for item in items)


@pytest.mark.parametrize(
    "header",
    [None, "", "Bearer", "Basic abc", "Bearer ks_" + "a" * 43, "Bearer km_" + "a" * 43, "Bearer km_short"],
)
def test_an_unknown_or_malformed_credential_is_401(rt: Runtime, header: str | None) -> None:
    with pytest.raises(Unauthenticated):
        missions.authenticate(rt.agent_missions, header)


def test_an_ended_mission_is_401(rt: Runtime) -> None:
    credential = missions.mint_credential()
    mission = intake(rt, started(credential))
    ended = intake(rt, {"id": "e2", "detail-type": missions.ENDED, "detail": {"mission_id": mission.mission_id}})
    assert ended.ended_at is not None
    with pytest.raises(Unauthenticated):
        missions.authenticate(rt.agent_missions, bearer(credential))


def test_an_expired_mission_is_401(rt: Runtime) -> None:
    credential = missions.mint_credential()
    mission = intake(rt, started(credential, expires_in_seconds=60))
    assert missions.authenticate(rt.agent_missions, bearer(credential))
    with pytest.raises(Unauthenticated):
        missions.authenticate(rt.agent_missions, bearer(credential), now=mission.expires_at + timedelta(seconds=1))


def test_a_mission_never_outlives_its_role(rt: Runtime) -> None:
    mission = intake(rt, started(missions.mint_credential(), role="writer", expires_in_seconds=86_400))
    assert mission.expires_at - mission.started_at == timedelta(seconds=600)


def test_an_unknown_project_or_role_is_refused_and_nothing_is_recorded(rt: Runtime) -> None:
    credential = missions.mint_credential()
    with pytest.raises(NotFound):
        intake(rt, started(credential, event_id="x1", project="nowhere"))
    with pytest.raises(NotFound):
        intake(rt, started(credential, event_id="x2", role="nobody"))
    assert rt.agent_missions.by_id("x1") is None and rt.agent_missions.by_id("x2") is None
    with pytest.raises(Unauthenticated):
        missions.authenticate(rt.agent_missions, bearer(credential))


def test_a_started_event_with_an_unknown_field_is_refused(rt: Runtime) -> None:
    with pytest.raises(ValidationError):
        intake(rt, started(missions.mint_credential(), tools=["knowledge.retire"]))


def test_the_mission_principal_is_an_agent_of_one_project_that_never_manages(rt: Runtime) -> None:
    reader = intake(rt, started(missions.mint_credential()))
    writer = intake(rt, started(missions.mint_credential(), role="writer", autonomy="L2"))
    as_reader, as_writer = missions.principal_of(reader), missions.principal_of(writer)
    assert as_reader.kind is PrincipalKind.AGENT
    assert as_reader.project_roles == {"falcon": ProjectRole.VIEWER}
    assert as_reader.permissions == {Permission.READ_KNOWLEDGE}
    assert as_writer.permissions == {Permission.READ_KNOWLEDGE, Permission.WRITE_KNOWLEDGE}
    assert not as_writer.holds(Permission.MANAGE_KNOWLEDGE)


def test_a_role_contract_lists_only_tools_that_exist_and_never_an_admin_only_verb(rt: Runtime) -> None:
    for tool in ("knowledge.retire", "knowledge.distil", "project_map", "nope"):
        with pytest.raises(BadRequest, match="tools"):
            missions.role_contract("r", [tool], "viewer", None)
    role = missions.role_contract("r", ["brain_get", "brain_get", "knowledge.get"], "operator", None)
    assert role.tools == ("brain_get", "knowledge.get")


def test_a_mission_is_its_session_brain(rt: Runtime) -> None:
    mission = intake(rt, started(missions.mint_credential()))
    session = rt.pages.session(mission.mission_id)
    assert session is not None and session["project"] == "falcon"


def _brain_items(rt: Runtime, mission_id: str) -> list[dict[str, Any]]:
    table = boto3.resource("dynamodb").Table(rt.env.pages_table)
    return table.query(KeyConditionExpression=Key("pk").eq(f"SESSION#{mission_id}"))["Items"]  # type: ignore[no-any-return]


def test_a_missions_session_brain_and_its_entries_carry_the_pages_tables_ttl_at_the_missions_expiry(
    rt: Runtime,
) -> None:
    ttl = TEMPLATE.resources["PagesTable"]["Properties"]["TimeToLiveSpecification"]
    assert ttl == {"AttributeName": BRAIN_EXPIRY_ATTRIBUTE, "Enabled": True}
    mission = intake(rt, started(missions.mint_credential(), role="writer"))
    SessionBrain(rt.pages, mission.mission_id, mission.expires_at).put("/notes/a.md", "# A\n")
    items = _brain_items(rt, mission.mission_id)
    assert {i["sk"] for i in items} == {"#", "brain#/fs/notes/a.md"}
    assert {int(i[BRAIN_EXPIRY_ATTRIBUTE]) for i in items} == {int(mission.expires_at.timestamp())}


def test_a_missions_bytes_expire_in_the_bucket_after_its_longest_life() -> None:
    rules = TEMPLATE.resources["ArchiveBucket"]["Properties"]["LifecycleConfiguration"]["Rules"]
    (brain,) = [r for r in rules if r.get("Prefix") == "brain/"]
    longest = RoleContract.model_fields["mission_seconds"].metadata
    assert brain["Status"] == "Enabled"
    assert brain["ExpirationInDays"] * 86_400 > max(m.le for m in longest if hasattr(m, "le"))


def test_the_missions_end_ends_its_session_brain_for_a_promote_too(rt: Runtime) -> None:
    mission = intake(rt, started(missions.mint_credential(), role="writer"))
    SessionBrain(rt.pages, mission.mission_id, mission.expires_at).put("/notes/a.md", "# A\n")
    pages = Pages(rt.pages, "falcon")
    assert pages.promote(mission.mission_id, "/fs/notes/a.md", "/notes/kept.md", {}, None).path == "/fs/notes/kept.md"
    ended = {"id": str(uuid.uuid4()), "detail-type": missions.ENDED, "detail": {"mission_id": mission.mission_id}}
    intake(rt, ended)
    assert rt.pages.session(mission.mission_id) is None
    with pytest.raises(NotFound, match="no session"):
        pages.promote(mission.mission_id, "/fs/notes/a.md", "/notes/late.md", {}, None)
    intake(rt, ended)  # delivered twice: still ended, nothing raised


def test_an_expired_missions_session_brain_is_gone(rt: Runtime) -> None:
    now = datetime.now(UTC)
    rt.pages.create_session("m-live", "falcon", "live", now + timedelta(minutes=1))
    rt.pages.create_session("m-expired", "falcon", "expired", now)
    assert rt.pages.session("m-live") == {"project": "falcon", "name": "live"}
    assert rt.pages.session("m-live", now + timedelta(minutes=1)) is None
    assert rt.pages.session("m-expired") is None
    with pytest.raises(NotFound, match="no session"):
        Pages(rt.pages, "falcon").promote("m-expired", "/fs/a.md", "/b.md", {}, None)


def test_live_is_false_after_expiry_or_end() -> None:
    now = datetime.now(UTC)
    from knowledge_service.storage.agent_missions import MissionRecord

    base = MissionRecord(
        mission_id="m",
        project="falcon",
        role="r",
        project_role=ProjectRole.VIEWER,
        autonomy="L0",
        credential_hash="0" * 64,
        started_at=now,
        expires_at=now + timedelta(minutes=1),
    )
    assert base.live(now)
    assert not base.live(now + timedelta(minutes=2))
    assert not base.model_copy(update={"ended_at": now}).live(now)
