"""Agent missions (MCP): role contracts, the missions intake recorded, their credentials.

Not the study missions of ``storage/missions.py`` (a queued finding put on the bus): an
*agent mission* is one agent's bounded visit to one project, started and ended by the
``agent.mission.started`` / ``agent.mission.ended`` events. Everything lives in the config
table, under its own partitions:

- ``pk=agent_role, sk=<name>``: a role contract (which tools the role may dispatch, the
  project role it stands in, how long its missions last) — data an operator manages with
  ``knowledge-admin role``;
- ``pk=agent_mission, sk=<mission id>``: the mission intake recorded (the event id is the
  mission id), with the SHA-256 of its credential (never the credential);
- ``pk=agent_credential#<sha256>, sk=credential``: the same mission, found by its credential's
  hash; each credential its own partition, so every agent's calls do not meet on one key (it
  was ``pk=agent_credential, sk=<sha256>`` before issue 30: ``knowledge-admin migrate`` moves it).

Both mission items are written in one transaction, conditional on the mission id being new:
an event delivered twice records one mission. Both carry ``expire_at_epoch`` (the table's TTL
attribute): DynamoDB removes a mission :data:`KEPT_AFTER_EXPIRY` after it expired, long after
its credential stopped opening anything, so ``knowledge-admin mission show`` still reads a
recent one and expired credentials do not pile up.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Key
from pydantic import ConfigDict, Field

from knowledge_service.base_model import Model
from knowledge_service.identity.principal import ProjectRole
from knowledge_service.storage.toolkit import conditionally

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource

ROLE_PK = "agent_role"
MISSION_PK = "agent_mission"
CREDENTIAL_PK = "agent_credential"
CREDENTIAL_SK = "credential"


def credential_key(credential_hash: str) -> dict[str, str]:
    """Where the mission found by ``credential_hash`` is kept: its own partition."""
    return {"pk": f"{CREDENTIAL_PK}#{credential_hash}", "sk": CREDENTIAL_SK}


EXPIRY_ATTRIBUTE = "expire_at_epoch"
"""The config table's TTL attribute (``template.yaml``): epoch seconds after which DynamoDB removes the item."""
KEPT_AFTER_EXPIRY = timedelta(days=30)


class RoleContract(Model):
    """What a role may do over MCP: its tools, its standing in the project, its missions' length."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,62}$")
    tools: tuple[str, ...]
    project_role: ProjectRole = ProjectRole.VIEWER
    mission_seconds: int = Field(default=8 * 3600, ge=60, le=7 * 24 * 3600)


class MissionRecord(Model):
    """One mission as intake recorded it: scope, role tool list, autonomy and expiry."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    mission_id: str
    project: str
    role: str
    tools: tuple[str, ...] = ()
    project_role: ProjectRole
    autonomy: str
    credential_hash: str
    started_at: datetime
    expires_at: datetime
    ended_at: datetime | None = None
    discovered: tuple[str, ...] = ()
    """Tier 2 tools this mission has asked for (``tools_discover``): listed from then on."""

    def live(self, now: datetime) -> bool:
        return self.ended_at is None and now < self.expires_at


class AgentMissionStore:
    def __init__(self, resource: DynamoDBServiceResource, table_name: str):
        self._table = resource.Table(table_name)
        self._client = resource.meta.client
        self._table_name = table_name

    # ------------------------------------------------------------------ role contracts
    def put_role(self, role: RoleContract) -> None:
        self._table.put_item(Item={"pk": ROLE_PK, "sk": role.name, **role.model_dump(mode="json")})

    def role(self, name: str) -> RoleContract | None:
        item = self._table.get_item(Key={"pk": ROLE_PK, "sk": name}, ConsistentRead=True).get("Item")
        return RoleContract.model_validate(_strip(item)) if item else None

    def roles(self) -> list[RoleContract]:
        items = self._table.query(KeyConditionExpression=Key("pk").eq(ROLE_PK), ConsistentRead=True).get("Items", [])
        return [RoleContract.model_validate(_strip(i)) for i in items]

    # ------------------------------------------------------------------ missions
    def record(self, mission: MissionRecord) -> bool:
        """Both items at once, only for a new mission id: False when the id was recorded already."""
        item = {
            **mission.model_dump(mode="json", exclude_none=True),
            EXPIRY_ATTRIBUTE: int((mission.expires_at + KEPT_AFTER_EXPIRY).timestamp()),
        }
        return conditionally(
            lambda: self._client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self._table_name,
                            "Item": _plain({"pk": MISSION_PK, "sk": mission.mission_id, **item}),
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                    {
                        "Put": {
                            "TableName": self._table_name,
                            "Item": _plain({**credential_key(mission.credential_hash), **item}),
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                ]
            )
        )

    def by_id(self, mission_id: str) -> MissionRecord | None:
        item = self._table.get_item(Key={"pk": MISSION_PK, "sk": mission_id}, ConsistentRead=True).get("Item")
        return MissionRecord.model_validate(item) if item else None

    def by_credential_hash(self, credential_hash: str) -> MissionRecord | None:
        item = self._table.get_item(Key=credential_key(credential_hash), ConsistentRead=True).get("Item")
        return MissionRecord.model_validate(item) if item else None

    def end(self, mission: MissionRecord, at: datetime | None = None) -> None:
        """Stamp ``ended_at`` on both items (the credential's first: it is what a call reads)."""
        when = (at or datetime.now(UTC)).isoformat()
        for key in (credential_key(mission.credential_hash), {"pk": MISSION_PK, "sk": mission.mission_id}):
            self._table.update_item(
                Key=key,
                UpdateExpression="SET ended_at = if_not_exists(ended_at, :at)",
                ExpressionAttributeValues={":at": when},
            )

    def discover(self, mission: MissionRecord, tool: str) -> None:
        """Remember a tier 2 tool the mission asked for, so ``tools/list`` offers it from now on."""
        if tool in mission.discovered:
            return
        self._table.update_item(
            Key=credential_key(mission.credential_hash),
            UpdateExpression="SET discovered = list_append(if_not_exists(discovered, :none), :tool)",
            ExpressionAttributeValues={":none": [], ":tool": [tool]},
        )


def _strip(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in {"pk", "sk"}}


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    """An item without empty values (the resource's client serializes the rest itself)."""
    return {k: v for k, v in item.items() if v not in ([], (), None)}
