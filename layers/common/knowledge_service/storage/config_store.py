"""The configuration table: knowledge settings and the project map.

One table, two kinds of item:

- ``pk=settings, sk=knowledge`` holds the console-writable knowledge settings;
- ``pk=base#<ref>, sk=owner`` says which organization a knowledge base belongs to (the one
  that made it, or, for a base made before, the first to bind it); it carries
  ``listed=owners``, so the same sparse index lists every owner;
- ``pk=binding#<id>, sk=binding`` (``pk=binding#`` for the console default) holds one
  binding, each project's in a partition of its own, so no read of one project's binding
  lands on another's. Every binding item carries ``listed=bindings``, the hash key of the
  sparse index ``bindings`` that lists them (the project map, status's count, the six-hourly
  pass). A binding being made by ``POST /knowledge/bases`` is first a *reservation*
  (``state=pending`` with a lease): the lock the specification asks for. Readers never
  see a reservation.

The binding is read strongly consistently on every call (with the principal and the project,
in one request), so the next request sees a bind at once; the listing reads the index, which
DynamoDB keeps within a moment of the table. The settings are read at most once per
:data:`~knowledge_service.environment.SETTINGS_CACHE_SECONDS` per container (``settings_ttl``): a request in another
container sees a change within that bound, the container that saved it at once.
Bindings kept under the old keys (``pk=binding, sk=project#<id>``) are moved by
``storage/migrations.py``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import BotoCoreError, ClientError

from knowledge_service.errors import Conflict
from knowledge_service.models import DEFAULT_PROJECT, Binding, KnowledgeSettings, ProjectRecord, SubscriptionRecord
from knowledge_service.storage.event_log import EventLog, LoggedEvent, event_item
from knowledge_service.storage.principals import PrincipalRecord
from knowledge_service.storage.toolkit import WriteFailed, batch_get_all, conditionally, query_all

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource

SETTINGS_KEY = {"pk": "settings", "sk": "knowledge"}
SUBSCRIPTION_KEY = {"pk": "subscription", "sk": "installation"}
BINDING_PREFIX = "binding#"
BINDING_SK = "binding"
BINDINGS_INDEX = "bindings"
LISTED = {"listed": "bindings"}
"""What puts an item in the sparse index ``bindings`` (its hash key; template.yaml)."""
OWNER_PREFIX = "base#"
OWNER_SK = "owner"
LISTED_OWNERS = {"listed": "owners"}
"""What puts an owner item in the same sparse index, under its own hash key."""
LEGACY_BINDING_PK = "binding"
"""The one partition every binding shared before issue 30 (``sk=project#<id>`` / ``default``)."""
_SETTINGS_FIELDS = (
    "knowledge_enabled",
    "knowledge_auto_study",
    "knowledge_revision_study",
    "knowledge_forager_endpoint",
    "knowledge_forager_input_roots",
)


def binding_key(project: str) -> dict[str, str]:
    return {"pk": f"{BINDING_PREFIX}{project}", "sk": BINDING_SK}


def legacy_binding_project(item: dict[str, Any]) -> str | None:
    """The project an item under the old binding keys is for (None: not one of those)."""
    if item.get("pk") != LEGACY_BINDING_PK:
        return None
    sk = str(item.get("sk", ""))
    return DEFAULT_PROJECT if sk == "default" else sk.removeprefix("project#") if sk.startswith("project#") else None


class ScopeRecords:
    """What one consistent read returns for a call that names (or omits) a project."""

    def __init__(
        self,
        settings: KnowledgeSettings,
        binding: Binding | None,
        project: ProjectRecord | None,
        principal: PrincipalRecord | None = None,
    ):
        self.settings = settings
        self.binding = binding
        self.project = project
        self.principal = principal  # the caller's record, when the read was asked for it


class ConfigStore:
    def __init__(
        self,
        resource: DynamoDBServiceResource,
        table_name: str,
        projects_table_name: str,
        principals_table_name: str = "",
        *,
        settings_ttl: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._resource = resource
        self._table = resource.Table(table_name)
        self._table_name = table_name
        self._projects_table_name = projects_table_name
        self._principals_table_name = principals_table_name
        self._settings_ttl = settings_ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._settings: KnowledgeSettings | None = None
        self._settings_read_at = 0.0

    # ------------------------------------------------------------------ settings
    def settings(self) -> KnowledgeSettings:
        """The settings: this container's copy while under ``settings_ttl`` seconds old, else read
        (one consistent GetItem)."""
        cached = self._cached_settings()
        if cached is not None:
            return cached
        item = self._table.get_item(Key=SETTINGS_KEY, ConsistentRead=True).get("Item")
        return self._keep(_settings_from(item))

    def _cached_settings(self) -> KnowledgeSettings | None:
        with self._lock:
            age = self._clock() - self._settings_read_at
            if self._settings is not None and 0 <= age < self._settings_ttl:  # a clock moved back is stale
                return self._settings
            return None

    def _keep(self, settings: KnowledgeSettings) -> KnowledgeSettings:
        with self._lock:
            self._settings, self._settings_read_at = settings, self._clock()
        return settings

    def save_settings(self, settings: KnowledgeSettings) -> None:
        item: dict[str, Any] = {**SETTINGS_KEY}
        for field in _SETTINGS_FIELDS:
            value = getattr(settings, field)
            if isinstance(value, tuple):
                item[field] = list(value)
            elif value is not None:
                item[field] = value.value if hasattr(value, "value") else value
        item["updated_at"] = (settings.updated_at or datetime.now(UTC)).isoformat()
        if settings.updated_by:
            item["updated_by"] = settings.updated_by
        self._table.put_item(Item=item)
        self._keep(_settings_from(item))  # the writer's own container sees its write at once

    # ------------------------------------------------------------------ the subscription
    def subscription(self) -> SubscriptionRecord:
        """The colony's Forager subscription (``pk=subscription, sk=installation``); unenrolled
        when no operator has set one."""
        item = self._table.get_item(Key=SUBSCRIPTION_KEY, ConsistentRead=True).get("Item")
        if not item:
            return SubscriptionRecord()
        capabilities = item.get("capabilities")
        return SubscriptionRecord.model_validate(
            {
                "state": item.get("state", "unenrolled"),
                "capabilities": sorted(str(c) for c in capabilities) if isinstance(capabilities, list | set) else [],
                "updated_at": item.get("updated_at"),
                "updated_by": item.get("updated_by"),
            }
        )

    def save_subscription(self, record: SubscriptionRecord, actor: str) -> SubscriptionRecord:
        saved = record.model_copy(update={"updated_at": datetime.now(UTC).isoformat(), "updated_by": actor})
        self._table.put_item(
            Item={
                **SUBSCRIPTION_KEY,
                "state": saved.state.value,
                "capabilities": list(saved.capabilities),
                "updated_at": saved.updated_at,
                "updated_by": actor,
            }
        )
        return saved

    # ------------------------------------------------------------------ scope (one request)
    def scope(self, project: str, token_hash: str | None = None) -> ScopeRecords:
        """The project's binding and its ANTHILL record, in one consistent BatchGetItem, with the
        settings when this container's copy is stale (else its copy); with ``token_hash``, the
        caller's principal record in the same request."""
        cached = self._cached_settings()
        config_keys = [binding_key(project)] if cached is not None else [SETTINGS_KEY, binding_key(project)]
        keys: dict[str, list[dict[str, Any]]] = {self._table_name: config_keys}
        if project != DEFAULT_PROJECT:
            keys[self._projects_table_name] = [{"project_id": project}]
        if token_hash is not None:
            if not self._principals_table_name:
                raise ValueError("This store was built without the principals table.")
            keys[self._principals_table_name] = [{"token_hash": token_hash}]
        responses = batch_get_all(self._resource, keys, consistent=True)
        settings_item = None
        binding = None
        for item in responses.get(self._table_name, []):
            if item["pk"] == SETTINGS_KEY["pk"]:
                settings_item = item
            else:
                binding = _binding_from(item)
        projects = responses.get(self._projects_table_name, [])
        principals = responses.get(self._principals_table_name, []) if token_hash is not None else []
        return ScopeRecords(
            cached if cached is not None else self._keep(_settings_from(settings_item)),
            binding,
            _project_from(projects[0]) if projects else None,
            PrincipalRecord.model_validate(principals[0]) if principals else None,
        )

    # ------------------------------------------------------------------ the project map
    def bindings(self) -> list[Binding]:
        """Every binding, from the sparse index ``bindings`` (one partition, read by the listing
        alone: the project map, status's count, the six-hourly pass; never by a request's scope)."""
        items = query_all(self._table, IndexName=BINDINGS_INDEX, KeyConditionExpression=Key("listed").eq("bindings"))
        return sorted((b for b in (_binding_from(i) for i in items) if b is not None), key=lambda b: b.project)

    def bind(self, project: str, knowledge_base: str, actor: str) -> None:
        self._table.put_item(Item=_binding_item(project, knowledge_base, actor))

    def unbind(self, project: str) -> None:
        self._table.delete_item(Key=binding_key(project))

    def bind_logged(self, project: str, knowledge_base: str, actor: str, event: LoggedEvent, log: EventLog) -> None:
        """Bind and record ``event`` in ``log``, in one transaction (both or neither)."""
        self._resource.meta.client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": self._table_name, "Item": _binding_item(project, knowledge_base, actor)}},
                {"Put": {"TableName": log.table_name, "Item": event_item(event)}},
            ]
        )

    def unbind_logged(self, project: str, event: LoggedEvent, log: EventLog) -> None:
        """Unbind and record ``event`` in ``log``, in one transaction (both or neither)."""
        self._resource.meta.client.transact_write_items(
            TransactItems=[
                {"Delete": {"TableName": self._table_name, "Key": binding_key(project)}},
                {"Put": {"TableName": log.table_name, "Item": event_item(event)}},
            ]
        )

    # ------------------------------------------------------------------ who a knowledge base belongs to
    def owners(self) -> dict[str, str]:
        """Every knowledge base's organization, by its ref (the sparse index, ``listed=owners``)."""
        items = query_all(self._table, IndexName=BINDINGS_INDEX, KeyConditionExpression=Key("listed").eq("owners"))
        return {str(i["knowledge_base"]): str(i["organization"]) for i in items}

    def claim(self, knowledge_base: str, organization: str, actor: str) -> str:
        """Record ``organization`` as the knowledge base's owner unless one is recorded already;
        answers the owner that stands (ours, or the one that was there first)."""
        claimed = conditionally(
            lambda: self._table.put_item(
                Item={
                    "pk": f"{OWNER_PREFIX}{knowledge_base}",
                    "sk": OWNER_SK,
                    **LISTED_OWNERS,
                    "knowledge_base": knowledge_base,
                    "organization": organization,
                    "claimed_by": actor,
                    "claimed_at": datetime.now(UTC).isoformat(),
                },
                ConditionExpression=Attr("sk").not_exists(),
            )
        )
        if claimed:
            return organization
        item = self._table.get_item(
            Key={"pk": f"{OWNER_PREFIX}{knowledge_base}", "sk": OWNER_SK}, ConsistentRead=True
        ).get("Item")
        return str(item["organization"]) if item else organization

    # ------------------------------------------------------------------ the lock for POST /knowledge/bases
    def reserve(self, project: str, owner: str, lease_seconds: int = 60) -> None:
        """Take the project's binding slot, or raise ``Conflict(already_bound)``.

        The slot is free when no binding exists, or when an earlier reservation's lease has
        run out (its request died between reserving and saving).
        """
        now = int(time.time())
        reserved = conditionally(
            lambda: self._table.put_item(
                Item={
                    **binding_key(project),
                    **LISTED,
                    "project": project,
                    "state": "pending",
                    "lease_owner": owner,
                    "lease_expires": now + lease_seconds,
                },
                ConditionExpression=Attr("sk").not_exists()
                | (Attr("state").eq("pending") & Attr("lease_expires").lt(now)),
            )
        )
        if not reserved:
            label = f"Project '{project}'" if project else "The console default"
            raise Conflict(
                f"{label} already reads a knowledge base; rebind it with POST /knowledge/project-map.",
                code="already_bound",
            )

    def complete_reservation(
        self, project: str, owner: str, knowledge_base: str, actor: str, event: LoggedEvent, log: EventLog
    ) -> None:
        """Turn our reservation into the binding and record ``event`` in ``log``, in one transaction.

        Raises ``WriteFailed`` when the slot is no longer ours (someone bound the project
        meanwhile, or the lease ran out and was taken) or the write itself failed; then
        neither the binding nor the log row is written.
        """
        # The resource's client speaks plain Python values (boto3 serializes them), as Table does.
        try:
            self._resource.meta.client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self._table_name,
                            "Item": _binding_item(project, knowledge_base, actor),
                            "ConditionExpression": "#state = :pending AND lease_owner = :owner",
                            "ExpressionAttributeNames": {"#state": "state"},
                            "ExpressionAttributeValues": {":pending": "pending", ":owner": owner},
                        }
                    },
                    {"Put": {"TableName": log.table_name, "Item": event_item(event)}},
                ]
            )
        except (ClientError, BotoCoreError) as error:
            raise WriteFailed(str(error)) from error

    def release(self, project: str, owner: str) -> None:
        """Give the slot back after FORAGER refused; a slot someone else took is left alone."""
        conditionally(
            lambda: self._table.delete_item(
                Key=binding_key(project),
                ConditionExpression=Attr("state").eq("pending") & Attr("lease_owner").eq(owner),
            )
        )


def _binding_item(project: str, knowledge_base: str, actor: str) -> dict[str, Any]:
    return {
        **binding_key(project),
        **LISTED,
        "project": project,
        "knowledge_base": knowledge_base,
        "state": "bound",
        "bound_at": datetime.now(UTC).isoformat(),
        "bound_by": actor,
    }


def _settings_from(item: dict[str, Any] | None) -> KnowledgeSettings:
    if not item:
        return KnowledgeSettings()
    return KnowledgeSettings.model_validate({k: v for k, v in item.items() if k not in ("pk", "sk")})


def _binding_from(item: dict[str, Any]) -> Binding | None:
    if item.get("state") != "bound":
        return None
    return Binding(
        project=str(item.get("project", "")),
        knowledge_base=str(item["knowledge_base"]),
        bound_at=item.get("bound_at"),
        bound_by=item.get("bound_by"),
    )


def _project_from(item: dict[str, Any]) -> ProjectRecord:
    return ProjectRecord.model_validate(item)
