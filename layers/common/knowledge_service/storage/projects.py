"""ANTHILL projects: the ids ``?project=`` names, each in an organization."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from boto3.dynamodb.conditions import Attr, Key

from knowledge_service.errors import Conflict
from knowledge_service.models import ProjectRecord
from knowledge_service.storage.toolkit import batch_get_all, conditionally, query_all, scan_all

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource


class ProjectStore:
    def __init__(self, resource: DynamoDBServiceResource, table_name: str):
        self._resource = resource
        self._name = table_name
        self._table = resource.Table(table_name)

    def get(self, project_id: str) -> ProjectRecord | None:
        item = self._table.get_item(Key={"project_id": project_id}, ConsistentRead=True).get("Item")
        return ProjectRecord.model_validate(item) if item else None

    def many(self, project_ids: set[str]) -> dict[str, ProjectRecord]:
        """The records of ``project_ids`` that exist, by id (100 keys a request)."""
        keys = [{"project_id": project_id} for project_id in sorted(project_ids)]
        found = batch_get_all(self._resource, {self._name: keys}, consistent=True)[self._name] if keys else []
        records = (ProjectRecord.model_validate(item) for item in found)
        return {record.project_id: record for record in records}

    def create(self, project_id: str, organization: str, name: str = "") -> ProjectRecord:
        record = ProjectRecord(
            project_id=project_id, organization=organization, name=name or project_id, created_at=datetime.now(UTC)
        )
        if not conditionally(
            lambda: self._table.put_item(
                Item=record.model_dump(mode="json"), ConditionExpression=Attr("project_id").not_exists()
            )
        ):
            raise Conflict(f"Project '{project_id}' already exists.")
        return record

    def in_organizations(self, organizations: set[str]) -> list[str]:
        """The ids of every project of ``organizations``, sorted: one Query an organization on the
        ``by_organization`` index (eventually consistent: a project made this second may be missing)."""
        found: set[str] = set()
        for organization in sorted(organizations):
            items = query_all(
                self._table, IndexName="by_organization", KeyConditionExpression=Key("organization").eq(organization)
            )
            found.update(str(item["project_id"]) for item in items)
        return sorted(found)

    def all(self) -> list[ProjectRecord]:
        return sorted((ProjectRecord.model_validate(i) for i in scan_all(self._table)), key=lambda p: p.project_id)
