"""Principals, keyed by the SHA-256 of their bearer token (the token itself is never stored).

A principal's record holds its name, kind, installation permissions, project roles,
owned organizations and, for the verbs, workspace roles and autonomy. Revoking stamps
``revoked_at``; the record stays, so the list says who held what.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, Key

from knowledge_service.errors import Conflict, NotFound
from knowledge_service.identity.principal import Principal
from knowledge_service.storage.toolkit import conditionally, scan_all

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource

BY_NAME = "by_name"


class PrincipalRecord(Principal):
    token_hash: str
    created_at: datetime | None = None
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def principal(self) -> Principal:
        return Principal.model_validate(self.model_dump(include=set(Principal.model_fields)))


class PrincipalStore:
    def __init__(self, resource: DynamoDBServiceResource, table_name: str):
        self._table = resource.Table(table_name)

    def by_token_hash(self, token_hash: str) -> PrincipalRecord | None:
        item = self._table.get_item(Key={"token_hash": token_hash}, ConsistentRead=True).get("Item")
        return PrincipalRecord.model_validate(item) if item else None

    def by_name(self, name: str) -> list[PrincipalRecord]:
        items = self._table.query(IndexName=BY_NAME, KeyConditionExpression=Key("name").eq(name)).get("Items", [])
        return [PrincipalRecord.model_validate(i) for i in items]

    def active_by_name(self, name: str) -> PrincipalRecord:
        for record in self.by_name(name):
            if record.active:
                return record
        raise NotFound(f"No active principal named '{name}'.")

    def create(self, principal: Principal, token_hash: str) -> PrincipalRecord:
        if any(r.active for r in self.by_name(principal.name)):
            raise Conflict(f"An active principal named '{principal.name}' already exists.")
        record = PrincipalRecord(**principal.model_dump(), token_hash=token_hash, created_at=datetime.now(UTC))
        if not conditionally(
            lambda: self._table.put_item(Item=_item(record), ConditionExpression=Attr("token_hash").not_exists())
        ):
            raise Conflict("That token is already in use.")
        return record

    def replace(self, record: PrincipalRecord) -> None:
        """Write a changed grant back; refused if the principal was revoked meanwhile."""
        if not conditionally(
            lambda: self._table.put_item(
                Item=_item(record), ConditionExpression=Attr("token_hash").exists() & Attr("revoked_at").not_exists()
            )
        ):
            raise Conflict(f"Principal '{record.name}' was revoked.")

    def revoke(self, name: str) -> PrincipalRecord:
        record = self.active_by_name(name)
        now = datetime.now(UTC)
        self._table.update_item(
            Key={"token_hash": record.token_hash},
            UpdateExpression="SET revoked_at = :now",
            ExpressionAttributeValues={":now": now.isoformat()},
        )
        return record.model_copy(update={"revoked_at": now})

    def all(self) -> list[PrincipalRecord]:
        return sorted(
            (PrincipalRecord.model_validate(i) for i in scan_all(self._table)),
            key=lambda r: (r.name, str(r.created_at)),
        )


def _item(record: PrincipalRecord) -> dict[str, Any]:
    item = record.model_dump(mode="json", exclude_none=True)
    # DynamoDB refuses empty sets; lists read back the same through pydantic.
    return {k: v for k, v in item.items() if v not in ([], {})}
