"""The composition root: this container's environment, stores and FORAGER connection.

Built on first use, never at import time, and once per container after that. Each store
(and the boto3 client or resource, the HTTP pool under it) is built the first time a
route asks for it, and its module is imported then too: a function imports only what
its routes use, and a read never pays for a client it does not call. Tests clear this
one with ``reset_runtime``.
"""

from __future__ import annotations

from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

from knowledge_service.clock import Clock, clock_for
from knowledge_service.environment import Environment, current_environment

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource

    from knowledge_service.domain.commerce import CachedSubscription, SubscriptionRecord
    from knowledge_service.domain.connection import ForagerConnection
    from knowledge_service.domain.feed.ports import FeedStores
    from knowledge_service.storage.admission import DoorReads
    from knowledge_service.storage.agent_missions import AgentMissionStore
    from knowledge_service.storage.archives import ArchiveStore
    from knowledge_service.storage.config_store import ConfigStore
    from knowledge_service.storage.credential import CredentialStore
    from knowledge_service.storage.dead_letter_store import DeadLetterStore
    from knowledge_service.storage.event_log import EventLog
    from knowledge_service.storage.feed_store import ActionStore, InboxStore, WatermarkStore
    from knowledge_service.storage.findings_store import FindingsStore
    from knowledge_service.storage.idempotency import IdempotencyStore
    from knowledge_service.storage.job_inputs import JobInputStore
    from knowledge_service.storage.kb_archives import KbArchiveStore
    from knowledge_service.storage.missions import MissionBus
    from knowledge_service.storage.page_store import PageStore
    from knowledge_service.storage.principals import PrincipalStore
    from knowledge_service.storage.projects import ProjectStore
    from knowledge_service.storage.search_store import SearchStore
    from knowledge_service.storage.sessions import SessionStore
    from knowledge_service.storage.staging import StagingStore
    from knowledge_service.storage.verbs import VerbAudit, VerbStore


def _dynamodb() -> DynamoDBServiceResource:
    from knowledge_service.storage import aws

    return aws.dynamodb()


def _client(service: str) -> Any:
    from knowledge_service.storage import aws

    return aws.client(service)


class Runtime:
    """This container's stores, each built (and its module imported) on first use."""

    def __init__(self, env: Environment) -> None:
        self.env = env

    @classmethod
    def build(cls, env: Environment) -> Runtime:
        return cls(env)

    @cached_property
    def config(self) -> ConfigStore:
        from knowledge_service.storage.config_store import ConfigStore

        clock = self.clock  # the product clock: moving it (local stack only) ages the settings too
        return ConfigStore(
            _dynamodb(),
            self.env.config_table,
            self.env.projects_table,
            self.env.principals_table,
            settings_ttl=self.env.settings_cache_seconds,
            clock=lambda: clock().timestamp(),
        )

    @cached_property
    def projects(self) -> ProjectStore:
        from knowledge_service.storage.projects import ProjectStore

        return ProjectStore(_dynamodb(), self.env.projects_table)

    @cached_property
    def door(self) -> DoorReads:
        from knowledge_service.storage.admission import DoorReads

        return DoorReads(_dynamodb(), self.env.principals_table, self.env.projects_table)

    @cached_property
    def principals(self) -> PrincipalStore:
        from knowledge_service.storage.principals import PrincipalStore

        return PrincipalStore(_dynamodb(), self.env.principals_table)

    @cached_property
    def sessions(self) -> SessionStore:
        from knowledge_service.storage.sessions import SessionStore

        return SessionStore(_dynamodb(), self.env.sessions_table)

    @cached_property
    def events(self) -> EventLog:
        from knowledge_service.storage.event_log import EventLog

        return EventLog(_dynamodb(), self.env.event_log_table)

    @cached_property
    def credentials(self) -> CredentialStore:
        from knowledge_service.storage.credential import CredentialStore

        return CredentialStore(_client("ssm"), self.env.forager_credential_parameter)

    @cached_property
    def idempotency(self) -> IdempotencyStore:
        from knowledge_service.storage.idempotency import IdempotencyStore

        return IdempotencyStore(self.env.idempotency_table, _client("dynamodb"))

    @cached_property
    def upstream(self) -> ForagerConnection:
        from knowledge_service.domain.connection import ForagerConnection
        from knowledge_service.upstream.client import ForagerClients, connection_pool

        timeout = self.env.forager_timeout_seconds
        return ForagerConnection(self.env, self.credentials, ForagerClients(timeout, connection_pool(timeout)))

    @cached_property
    def inbox(self) -> InboxStore:
        from knowledge_service.storage.feed_store import InboxStore

        return InboxStore(_dynamodb(), self.env.inbox_table)

    @cached_property
    def watermarks(self) -> WatermarkStore:
        from knowledge_service.storage.feed_store import WatermarkStore

        return WatermarkStore(_dynamodb(), self.env.watermarks_table)

    @cached_property
    def actions(self) -> ActionStore:
        from knowledge_service.storage.feed_store import ActionStore

        return ActionStore(_dynamodb(), self.env.actions_table)

    @cached_property
    def findings(self) -> FindingsStore:
        from knowledge_service.storage.findings_store import FindingsStore

        return FindingsStore(_dynamodb(), self.env.findings_table)

    @cached_property
    def missions(self) -> MissionBus:
        from knowledge_service.storage.missions import MissionBus

        return MissionBus(_client("events"), self.env.event_bus_name)

    @cached_property
    def staging(self) -> StagingStore:
        from knowledge_service.storage.staging import StagingStore

        return StagingStore(_client("s3"), self.env.archive_bucket)

    @cached_property
    def verbs(self) -> VerbStore:
        from knowledge_service.storage.verbs import VerbStore

        return VerbStore(_dynamodb(), self.env.verbs_table, _client("s3"), self.env.archive_bucket)

    @cached_property
    def verb_audit(self) -> VerbAudit:
        from knowledge_service.storage.verbs import VerbAudit

        return VerbAudit(_dynamodb(), self.env.verb_audit_table)

    @cached_property
    def pages(self) -> PageStore:
        from knowledge_service.storage.page_store import PageStore

        return PageStore(
            _dynamodb(),
            self.env.pages_table,
            _client("s3"),
            self.env.archive_bucket,
            _client("events"),
            self.env.event_bus_name,
        )

    @cached_property
    def search(self) -> SearchStore:
        from knowledge_service.storage.search_store import SearchStore

        return SearchStore(_dynamodb(), self.env.pages_table, _client("s3"), self.env.archive_bucket)

    @cached_property
    def archives(self) -> ArchiveStore:
        from knowledge_service.storage.archives import ArchiveStore

        return ArchiveStore(
            _client("s3"),
            self.env.archive_bucket,
            _dynamodb(),
            self.env.config_table,
            _client("events"),
            self.env.event_bus_name,
        )

    @cached_property
    def kb_archives(self) -> KbArchiveStore:
        from knowledge_service.storage.kb_archives import KbArchiveStore

        return KbArchiveStore(_client("s3"), self.env.archive_bucket, _client("events"), self.env.event_bus_name)

    @cached_property
    def subscriptions(self) -> CachedSubscription:
        from knowledge_service.domain.commerce import CachedSubscription

        clock = self.clock  # the product clock: moving it (local stack only) ages the cache too
        return CachedSubscription(self.config.subscription, clock=lambda: clock().timestamp())

    @cached_property
    def dead_letters(self) -> DeadLetterStore:
        from knowledge_service.storage.dead_letter_store import DeadLetterStore

        return DeadLetterStore(_dynamodb(), self.env.dead_letters_table, self.env.event_log_table)

    @cached_property
    def agent_missions(self) -> AgentMissionStore:
        from knowledge_service.storage.agent_missions import AgentMissionStore

        return AgentMissionStore(_dynamodb(), self.env.config_table)

    @cached_property
    def job_inputs(self) -> JobInputStore:
        from knowledge_service.storage.job_inputs import JobInputStore

        return JobInputStore(_dynamodb(), self.env.config_table)

    @cached_property
    def clock(self) -> Clock:
        """The product clock: the system's, movable only under the local stack."""
        return clock_for(self.env)

    def subscription(self) -> SubscriptionRecord:
        """The colony's Forager subscription, read once per container and kept briefly."""
        return self.subscriptions.current()

    def feed_stores(self) -> FeedStores:
        from knowledge_service.domain.feed.ports import FeedStores

        return FeedStores(
            self.inbox, self.watermarks, self.actions, self.findings, self.missions, self.dead_letters, self.events
        )


@lru_cache(maxsize=1)
def runtime() -> Runtime:
    return Runtime.build(current_environment())


def reset_runtime() -> None:
    """Forget this container's runtime and environment (tests, and the local stack's restarts)."""
    from knowledge_service.storage import aws

    runtime.cache_clear()
    current_environment.cache_clear()
    aws.reset_clients()
