"""``knowledge-admin migrate`` (``storage/migrations.py``): items saved under the keys issue 30
retired are found under their new keys after it, and a second run moves nothing."""

from __future__ import annotations

import json

import pytest

from knowledge_service.admin.cli import main
from knowledge_service.models import DEFAULT_PROJECT
from knowledge_service.runtime import Runtime
from knowledge_service.storage.migrations import MigrationTables, migrate

OLD_BINDINGS = [
    {"pk": "binding", "sk": "project#falcon", "project": "falcon", "knowledge_base": "falcon-kb", "state": "bound"},
    {"pk": "binding", "sk": "default", "project": "", "knowledge_base": "colony-kb", "state": "bound"},
    {"pk": "binding", "sk": "project#heron", "project": "heron", "state": "pending", "lease_owner": "x"},
]


def tables(rt: Runtime) -> MigrationTables:
    return MigrationTables(
        config=rt.env.config_table,
        pages=rt.env.pages_table,
        event_log=rt.env.event_log_table,
        verb_audit=rt.env.verb_audit_table,
    )


OLD_EVENTS = [
    {
        "event_type": "knowledge_base_created",
        "recorded": f"2026-11-01T00:00:0{n}+00:00#e{n}",
        "log": "all",
        "event_id": f"e{n}",
        "at": f"2026-11-01T00:00:0{n}+00:00",
        "actor": "ada",
        "payload": {"project": "falcon", "knowledge_base": "falcon-kb"},
    }
    for n in range(3)
]
OLD_AUDIT = [
    {
        "workspace": "falcon",
        "recorded": f"2026-11-01T00:00:0{n}+00:00#a{n}",
        "verb": "knowledge.list",
        "decision": "allowed",
    }
    for n in range(3)
]


@pytest.fixture
def old_items(aws: Runtime) -> Runtime:
    table = aws.config._table
    for item in OLD_BINDINGS:
        table.put_item(Item=item)
    aws.pages.table.put_item(Item={"pk": "META#falcon", "sk": "#", "gen": 7, "used_bytes": 1234})
    for item in OLD_EVENTS:
        aws.events._table.put_item(Item=item)
    for item in OLD_AUDIT:
        aws.verb_audit._table.put_item(Item=item)
    aws.projects.create("falcon", "colony")
    return aws


def test_a_mission_kept_under_the_one_old_credential_partition_authenticates_after_the_migration(aws: Runtime) -> None:
    from datetime import UTC, datetime, timedelta

    from knowledge_service.storage.agent_missions import MissionRecord

    now = datetime.now(UTC)
    hashed = "ab" * 32
    mission = MissionRecord.model_validate(
        {
            "mission_id": "m-old",
            "project": "falcon",
            "role": "researcher",
            "project_role": "viewer",
            "autonomy": "L1",
            "credential_hash": hashed,
            "started_at": now.isoformat(),
            "expires_at": (now + timedelta(hours=1)).isoformat(),
        }
    )
    aws.config._table.put_item(
        Item={"pk": "agent_credential", "sk": hashed, **mission.model_dump(mode="json", exclude_none=True)}
    )
    assert aws.agent_missions.by_credential_hash(hashed) is None  # not read under the old key
    assert migrate(aws.config._resource, tables(aws))["agent_credentials"] == 1
    assert aws.agent_missions.by_credential_hash(hashed) == mission
    assert migrate(aws.config._resource, tables(aws))["agent_credentials"] == 0


def test_bindings_under_the_one_old_partition_are_found_after_the_migration(old_items: Runtime) -> None:
    rt = old_items
    assert rt.config.bindings() == []  # the old keys are not read
    moved = migrate(rt.config._resource, tables(rt))
    assert moved["bindings"] == 3
    assert {(b.project, b.knowledge_base) for b in rt.config.bindings()} == {
        ("falcon", "falcon-kb"),
        (DEFAULT_PROJECT, "colony-kb"),
    }
    scoped = rt.config.scope("falcon")
    assert scoped.binding is not None and scoped.binding.knowledge_base == "falcon-kb"
    assert (
        rt.config._table.query(KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": "binding"})["Items"]
        == []
    )
    assert moved == {"bindings": 3, "agent_credentials": 0, "page_meta": 1, "events": 3, "verb_audit": 3}
    assert migrate(rt.config._resource, tables(rt)) == {  # idempotent
        "bindings": 0,
        "agent_credentials": 0,
        "page_meta": 0,
        "events": 0,
        "verb_audit": 0,
    }


def test_the_page_meta_item_is_folded_into_a_shard_and_its_sums_kept(old_items: Runtime) -> None:
    rt = old_items
    assert rt.pages.generation("falcon") == (7, 1234)  # summed like a shard before the migration
    migrate(rt.config._resource, tables(rt))
    assert rt.pages.generation("falcon") == (7, 1234)
    assert "Item" not in rt.pages.table.get_item(Key={"pk": "META#falcon", "sk": "#"})


def test_old_event_rows_and_audit_rows_are_read_after_the_migration(old_items: Runtime) -> None:
    rt = old_items
    migrate(rt.config._resource, tables(rt))
    assert [e.event_id for e in rt.events.recent("knowledge_base_created")] == ["e2", "e1", "e0"]
    rows, _ = rt.events.page(act="knowledge_base_created", project="falcon", limit=10, before=None)
    assert [r.event_id for r in rows] == ["e2", "e1", "e0"]
    assert [r["recorded"] for r in rt.verb_audit.rows("falcon")] == [i["recorded"] for i in OLD_AUDIT]


def test_a_binding_written_under_the_new_key_since_wins_over_the_old_one(old_items: Runtime) -> None:
    rt = old_items
    rt.config.bind("falcon", "rebound-kb", "ada")
    migrate(rt.config._resource, tables(rt))
    falcon = [b for b in rt.config.bindings() if b.project == "falcon"]
    assert [b.knowledge_base for b in falcon] == ["rebound-kb"]


def test_the_admin_command_migrates_and_says_what_it_moved(
    old_items: Runtime, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["migrate", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["bindings"] == 3
    assert main(["migrate", "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out).values()) == {0}


# ---------------------------------------------------------------------- mutation survivors (issue 39)
def test_a_legacy_binding_is_gone_after_the_migration_even_where_the_new_key_won(old_items: Runtime) -> None:
    rt = old_items
    rt.config.bind("falcon", "rebound-kb", "ada")
    migrate(rt.config._resource, tables(rt))
    legacy = rt.config._table.get_item(Key={"pk": "binding", "sk": "project#falcon"}).get("Item")
    assert legacy is None


def test_a_page_meta_change_between_the_scan_and_the_fold_is_not_lost(
    old_items: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An old writer moves META# after the migration read it: the fold of what was read must not
    delete what it did not read; the next run folds it whole."""
    from knowledge_service.storage import migrations

    rt = old_items
    real = migrations.scan_all

    def scanned_then_written(table: object, **kwargs: object) -> object:
        found = list(real(table, **kwargs))  # type: ignore[arg-type]
        if any(item.get("sk") == "#" and str(item.get("pk", "")).startswith("META#") for item in found):
            rt.pages.table.update_item(
                Key={"pk": "META#falcon", "sk": "#"},
                UpdateExpression="ADD gen :one, used_bytes :more",
                ExpressionAttributeValues={":one": 1, ":more": 100},
            )
        return found

    monkeypatch.setattr(migrations, "scan_all", scanned_then_written)
    assert migrate(rt.config._resource, tables(rt))["page_meta"] == 0  # refused: it changed meanwhile
    monkeypatch.setattr(migrations, "scan_all", real)
    assert migrate(rt.config._resource, tables(rt))["page_meta"] == 1
    assert rt.pages.generation("falcon") == (8, 1334)


def test_a_migrated_audit_row_is_concluded_in_place_not_written_twice(old_items: Runtime) -> None:
    rt = old_items
    migrate(rt.config._resource, tables(rt))
    recorded = OLD_AUDIT[1]["recorded"]
    rt.verb_audit.conclude("falcon", recorded, {"outcome": "answered"})
    rows = rt.verb_audit.rows("falcon")
    assert [r["recorded"] for r in rows] == [i["recorded"] for i in OLD_AUDIT]  # one row each, no copy
    assert next(r for r in rows if r["recorded"] == recorded)["outcome"] == "answered"
