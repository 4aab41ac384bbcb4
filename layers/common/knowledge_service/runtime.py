"""The composition root: this container's environment, stores and FORAGER connection.

Built on first use, never at import time, and once per container after that. Tests
build their own ``Runtime`` from moto's clients, or clear this one with ``reset_runtime``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from knowledge_service.domain.commerce import CachedSubscription, SubscriptionRecord
from knowledge_service.domain.connection import Upstream
from knowledge_service.domain.feed.consumer import FeedStores
from knowledge_service.environment import Environment, current_environment
from knowledge_service.identity.authorizer import principal_store
from knowledge_service.storage import aws
from knowledge_service.storage.agent_missions import AgentMissionStore
from knowledge_service.storage.archives import ArchiveStore
from knowledge_service.storage.config_store import ConfigStore
from knowledge_service.storage.credential import CredentialStore
from knowledge_service.storage.dead_letter_store import DeadLetterStore
from knowledge_service.storage.event_log import EventLog
from knowledge_service.storage.feed_store import ActionStore, InboxStore, WatermarkStore
from knowledge_service.storage.findings_store import FindingsStore
from knowledge_service.storage.idempotency import IdempotencyStore
from knowledge_service.storage.missions import MissionBus
from knowledge_service.storage.page_store import PageStore
from knowledge_service.storage.principals import PrincipalStore
from knowledge_service.storage.projects import ProjectStore
from knowledge_service.storage.staging import StagingStore
from knowledge_service.storage.verbs import VerbAudit, VerbStore
from knowledge_service.upstream.client import connection_pool


@dataclass(frozen=True)
class Runtime:
    env: Environment
    config: ConfigStore
    projects: ProjectStore
    principals: PrincipalStore
    events: EventLog
    credentials: CredentialStore
    idempotency: IdempotencyStore
    upstream: Upstream
    inbox: InboxStore
    watermarks: WatermarkStore
    actions: ActionStore
    findings: FindingsStore
    missions: MissionBus
    staging: StagingStore
    verbs: VerbStore
    verb_audit: VerbAudit
    pages: PageStore
    archives: ArchiveStore
    subscriptions: CachedSubscription

    def subscription(self) -> SubscriptionRecord:
        """The colony's Forager subscription, read once per container and kept briefly."""
        return self.subscriptions.current()

    dead_letters: DeadLetterStore
    agent_missions: AgentMissionStore

    @classmethod
    def build(cls, env: Environment) -> Runtime:
        dynamodb = aws.dynamodb()
        credentials = CredentialStore(aws.client("ssm"), env.forager_credential_parameter)
        http = connection_pool(env.forager_timeout_seconds)
        config = ConfigStore(dynamodb, env.config_table, env.projects_table)
        return cls(
            env=env,
            config=config,
            projects=ProjectStore(dynamodb, env.projects_table),
            principals=PrincipalStore(dynamodb, env.principals_table),
            events=EventLog(dynamodb, env.event_log_table),
            credentials=credentials,
            idempotency=IdempotencyStore(env.idempotency_table, aws.client("dynamodb")),
            upstream=Upstream(env, credentials, http),
            inbox=InboxStore(dynamodb, env.inbox_table),
            watermarks=WatermarkStore(dynamodb, env.watermarks_table),
            actions=ActionStore(dynamodb, env.actions_table),
            findings=FindingsStore(dynamodb, env.findings_table),
            missions=MissionBus(aws.client("events"), env.event_bus_name),
            staging=StagingStore(aws.client("s3"), env.archive_bucket),
            verbs=VerbStore(dynamodb, env.verbs_table, aws.client("s3"), env.archive_bucket),
            verb_audit=VerbAudit(dynamodb, env.verb_audit_table),
            pages=PageStore(
                dynamodb,
                env.pages_table,
                aws.client("s3"),
                env.archive_bucket,
                aws.client("events"),
                env.event_bus_name,
            ),
            archives=ArchiveStore(aws.client("s3"), env.archive_bucket, dynamodb, env.config_table),
            subscriptions=CachedSubscription(config.subscription),
            dead_letters=DeadLetterStore(dynamodb, env.dead_letters_table, env.event_log_table),
            agent_missions=AgentMissionStore(dynamodb, env.config_table),
        )

    def feed_stores(self) -> FeedStores:
        return FeedStores(
            self.inbox, self.watermarks, self.actions, self.findings, self.missions, self.dead_letters, self.events
        )


@lru_cache(maxsize=1)
def runtime() -> Runtime:
    return Runtime.build(current_environment())


def reset_runtime() -> None:
    """Forget this container's runtime and environment (tests, and the local stack's restarts)."""
    runtime.cache_clear()
    principal_store.cache_clear()
    current_environment.cache_clear()
    aws.reset_clients()
