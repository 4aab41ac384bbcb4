"""Moving items saved under keys the service no longer reads (issue 30: no hot key).

Each step finds the items under an old key and writes each under its new key, then removes
the old one, in one transaction per item: the new item is put only when none is there yet
(a write under the new key since the deploy is newer, and wins), and the old one is deleted
either way. Every step is idempotent: a second run finds nothing to move. ``knowledge-admin
migrate`` runs them against a deployed stack (after ``sam deploy``), and the local stack runs
them on every start, after its saved state is loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, Key

from knowledge_service.storage.agent_missions import CREDENTIAL_PK, credential_key
from knowledge_service.storage.config_store import LEGACY_BINDING_PK, LISTED, binding_key, legacy_binding_project
from knowledge_service.storage.event_log import LOG_PARTITION, shard_of
from knowledge_service.storage.page_store import LEGACY_META_SK
from knowledge_service.storage.toolkit import conditionally, is_condition_refusal, query_all, scan_all
from knowledge_service.storage.verbs import audit_partition

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource


@dataclass(frozen=True)
class MigrationTables:
    """The tables a migration reads; a table left empty ("") is skipped."""

    config: str = ""
    pages: str = ""
    event_log: str = ""
    verb_audit: str = ""

    @classmethod
    def named_by(cls, named: Callable[[str], str]) -> MigrationTables:
        """The tables by the functions' environment names (``CONFIG_TABLE``, ...)."""
        return cls(
            config=named("CONFIG_TABLE"),
            pages=named("PAGES_TABLE"),
            event_log=named("EVENT_LOG_TABLE"),
            verb_audit=named("VERB_AUDIT_TABLE"),
        )


def migrate(resource: DynamoDBServiceResource, tables: MigrationTables) -> dict[str, int]:
    """Run every step; how many items each moved."""
    moved: dict[str, int] = {}
    if tables.config:
        moved["bindings"] = _bindings(resource, tables.config)
        moved["agent_credentials"] = _agent_credentials(resource, tables.config)
    if tables.pages:
        moved["page_meta"] = _page_meta(resource, tables.pages)
    if tables.event_log:
        moved["events"] = _events(resource, tables.event_log)
    if tables.verb_audit:
        moved["verb_audit"] = _verb_audit(resource, tables.verb_audit)
    return moved


def _events(resource: DynamoDBServiceResource, table_name: str) -> int:
    """``event_type=<type>, log=all`` → ``event_type=<type>#<n>, type=<type>, log=all#<n>``."""
    moved = 0
    for item in scan_all(resource.Table(table_name), FilterExpression=Attr("type").not_exists(), ConsistentRead=True):
        event_type, event_id = str(item["event_type"]), str(item.get("event_id", item["recorded"]))
        shard = shard_of(event_id)
        fresh = {**item, "event_type": f"{event_type}#{shard}", "type": event_type, "log": f"{LOG_PARTITION}#{shard}"}
        old_key = {"event_type": event_type, "recorded": item["recorded"]}
        moved += _move(resource, table_name, old_key, fresh, hash_attribute="event_type")
    return moved


def _verb_audit(resource: DynamoDBServiceResource, table_name: str) -> int:
    """``workspace=<workspace>`` → ``workspace=<workspace>#<n>`` (``n`` from ``recorded``)."""
    moved = 0
    legacy = scan_all(
        resource.Table(table_name), FilterExpression=~Attr("workspace").contains("#"), ConsistentRead=True
    )
    for item in legacy:
        workspace, recorded = str(item["workspace"]), str(item["recorded"])
        fresh = {**item, "workspace": audit_partition(workspace, recorded)}
        old_key = {"workspace": workspace, "recorded": recorded}
        moved += _move(resource, table_name, old_key, fresh, hash_attribute="workspace")
    return moved


def _bindings(resource: DynamoDBServiceResource, table_name: str) -> int:
    """``pk=binding, sk=project#<id>|default`` → ``pk=binding#<id>, sk=binding`` (listed)."""

    def fresh(item: dict[str, Any]) -> dict[str, Any] | None:
        project = legacy_binding_project(item)
        return None if project is None else {**item, **binding_key(project), **LISTED, "project": project}

    return _move_partition(resource, table_name, LEGACY_BINDING_PK, fresh)


def _agent_credentials(resource: DynamoDBServiceResource, table_name: str) -> int:
    """``pk=agent_credential, sk=<sha256>`` → ``pk=agent_credential#<sha256>, sk=credential``."""
    return _move_partition(
        resource, table_name, CREDENTIAL_PK, lambda item: {**item, **credential_key(str(item["sk"]))}
    )


def _move_partition(
    resource: DynamoDBServiceResource,
    table_name: str,
    pk: str,
    fresh_of: Callable[[dict[str, Any]], dict[str, Any] | None],
) -> int:
    """Each item of the old partition ``pk`` moved to the item ``fresh_of`` makes of it (None: left)."""
    items = query_all(resource.Table(table_name), KeyConditionExpression=Key("pk").eq(pk), ConsistentRead=True)
    moved = 0
    for item in items:
        fresh = fresh_of(item)
        if fresh is not None:
            moved += _move(resource, table_name, {"pk": item["pk"], "sk": item["sk"]}, fresh)
    return moved


def _page_meta(resource: DynamoDBServiceResource, table_name: str) -> int:
    """``META#<project>/#`` (one item a project) → added into ``META#<project>/#0`` (a shard)."""
    client: Any = resource.meta.client
    legacy = scan_all(
        resource.Table(table_name),
        FilterExpression=Attr("pk").begins_with("META#") & Attr("sk").eq(LEGACY_META_SK),
        ConsistentRead=True,
    )
    moved = 0
    for item in legacy:
        values = {":gen": int(item.get("gen", 0)), ":used": int(item.get("used_bytes", 0))}
        # deleted only as read: a writer of the old version that moved it since is met, and the
        # next run folds what it holds then
        delete: dict[str, Any] = {
            "TableName": table_name,
            "Key": {"pk": item["pk"], "sk": LEGACY_META_SK},
            "ConditionExpression": "attribute_exists(pk)"
            + (" AND gen = :gen" if "gen" in item else " AND attribute_not_exists(gen)")
            + (" AND used_bytes = :used" if "used_bytes" in item else " AND attribute_not_exists(used_bytes)"),
        }
        used_values = {
            k: v
            for k, v in values.items()
            if (k == ":gen" and "gen" in item) or (k == ":used" and "used_bytes" in item)
        }
        if used_values:
            delete["ExpressionAttributeValues"] = used_values
        transaction = [
            {
                "Update": {
                    "TableName": table_name,
                    "Key": {"pk": item["pk"], "sk": "#0"},
                    "UpdateExpression": "ADD gen :gen, used_bytes :used",
                    "ExpressionAttributeValues": values,
                }
            },
            {"Delete": delete},
        ]
        if conditionally(partial(client.transact_write_items, TransactItems=transaction), refused=is_condition_refusal):
            moved += 1
    return moved


def _move(
    resource: DynamoDBServiceResource,
    table_name: str,
    old_key: dict[str, Any],
    fresh: dict[str, Any],
    hash_attribute: str = "pk",
) -> int:
    """Put ``fresh`` unless its key holds an item already, and delete ``old_key``: 1 when it moved."""
    client: Any = resource.meta.client  # the resource's client: it serializes plain values

    def both() -> None:
        client.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": table_name,
                        "Item": fresh,
                        "ConditionExpression": "attribute_not_exists(#hash)",
                        "ExpressionAttributeNames": {"#hash": hash_attribute},
                    }
                },
                {"Delete": {"TableName": table_name, "Key": old_key}},
            ]
        )

    if conditionally(both, refused=is_condition_refusal):
        return 1
    client.delete_item(TableName=table_name, Key=old_key)  # the new key was written since: it wins
    return 0
