"""The door's one read: the caller's principal, the project a request names and whatever the
route reads first, in one consistent BatchGetItem.

The ``/knowledge`` surface reads its principal with the settings, binding and project
(``ConfigStore.scope``); the pages and verbs surfaces read theirs here, with the project
record and, for a route that asks, items of its own tables (a page's head, the project's
page meta shards), so a page ``GET`` is one DynamoDB request for the caller, the project and
the page together.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from knowledge_service.models import ProjectRecord
from knowledge_service.storage.principals import PrincipalRecord
from knowledge_service.storage.toolkit import batch_get_all

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource


@dataclass(frozen=True)
class DoorRecords:
    """What the door's read found: the principal (None: unknown token), the project (None:
    none named, or none there) and the items found for the route's own keys, by table."""

    principal: PrincipalRecord | None
    project: ProjectRecord | None
    items: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


class DoorReads:
    def __init__(self, resource: DynamoDBServiceResource, principals_table: str, projects_table: str):
        self._resource = resource
        self._principals = principals_table
        self._projects = projects_table

    def read(
        self, token_hash: str, project: str | None = None, extra: Mapping[str, list[dict[str, Any]]] | None = None
    ) -> DoorRecords:
        """The principal of ``token_hash``, the record of ``project`` (when named) and the items
        of ``extra`` (table name → keys), in one consistent BatchGetItem (100 keys at most)."""
        keys: dict[str, list[dict[str, Any]]] = {self._principals: [{"token_hash": token_hash}]}
        if project is not None:
            keys[self._projects] = [{"project_id": project}]
        for table, table_keys in (extra or {}).items():
            if table in keys:
                raise ValueError(f"The door's read already reads table {table}.")
            if table_keys:
                keys[table] = list(table_keys)
        found = batch_get_all(self._resource, keys, consistent=True)
        principals = found.get(self._principals, [])
        projects = found.get(self._projects, []) if project is not None else []
        return DoorRecords(
            PrincipalRecord.model_validate(principals[0]) if principals else None,
            ProjectRecord.model_validate(projects[0]) if projects else None,
            {table: found.get(table, []) for table in (extra or {})},
        )
