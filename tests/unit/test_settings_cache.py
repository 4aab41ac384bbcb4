"""Settings without one hot item (issue 30): a container keeps the knowledge settings for at
most ``settings_ttl`` seconds, so a bound read does not read the one settings item every time;
its own writes it sees at once, and the principal is read on every request all the same."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import botocore.client
import pytest

from knowledge_service.environment import SETTINGS_CACHE_SECONDS
from knowledge_service.identity.principal import Permission, Principal, ProjectRole, mint_token, token_hash
from knowledge_service.models import KnowledgeSettings
from knowledge_service.runtime import Runtime
from knowledge_service.storage.config_store import ConfigStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@contextmanager
def keys_read() -> Iterator[list[dict[str, Any]]]:
    """The keys of every BatchGetItem and GetItem made inside the block."""
    keys: list[dict[str, Any]] = []
    original = botocore.client.BaseClient._make_api_call  # type: ignore[attr-defined]

    def counted(self: Any, operation: str, params: Any) -> Any:
        if operation == "BatchGetItem":
            keys.extend(k for request in params["RequestItems"].values() for k in request["Keys"])
        elif operation == "GetItem":
            keys.append(params["Key"])
        return original(self, operation, params)

    with mock.patch.object(botocore.client.BaseClient, "_make_api_call", counted):
        yield keys


def store(rt: Runtime, clock: Clock) -> ConfigStore:
    env = rt.env
    return ConfigStore(
        rt.config._resource,
        env.config_table,
        env.projects_table,
        env.principals_table,
        settings_ttl=SETTINGS_CACHE_SECONDS,
        clock=clock,
    )


def reads_settings(keys: list[dict[str, Any]]) -> bool:
    return any(k.get("pk") in ("settings", {"S": "settings"}) for k in keys)


@pytest.fixture
def world(aws: Runtime) -> Runtime:
    aws.projects.create("falcon", "colony")
    aws.config.bind("falcon", "falcon", "ada")
    return aws


def test_the_deployed_bound_is_a_few_seconds() -> None:
    assert 0 < SETTINGS_CACHE_SECONDS <= 5


def test_a_container_reads_the_settings_item_once_per_bound(world: Runtime) -> None:
    clock = Clock()
    config = store(world, clock)
    with keys_read() as first:
        config.scope("falcon")
    with keys_read() as second:
        config.scope("falcon")
        config.settings()
    clock.now += SETTINGS_CACHE_SECONDS
    with keys_read() as after_the_bound:
        config.scope("falcon")
    assert reads_settings(first)
    assert not reads_settings(second)
    assert second  # the binding and project are read all the same
    assert reads_settings(after_the_bound)


def test_another_container_sees_a_change_within_the_bound_and_the_writer_at_once(world: Runtime) -> None:
    clock = Clock()
    reader, writer = store(world, clock), store(world, clock)
    assert not reader.scope("falcon").settings.knowledge_enabled
    assert not writer.settings().knowledge_enabled  # the writer holds a copy too, kept for the bound
    writer.save_settings(KnowledgeSettings(knowledge_enabled=True))
    assert writer.scope("falcon").settings.knowledge_enabled  # its own write, at once
    assert not reader.scope("falcon").settings.knowledge_enabled  # stale, within the bound
    clock.now += SETTINGS_CACHE_SECONDS - 0.5
    assert not reader.settings().knowledge_enabled
    clock.now += 0.5
    assert reader.settings().knowledge_enabled


def test_a_clock_moved_back_reads_again(world: Runtime) -> None:
    clock = Clock()
    config = store(world, clock)
    config.settings()
    clock.now -= 1
    with keys_read() as keys:
        config.settings()
    assert reads_settings(keys)


def test_a_revoked_token_is_refused_on_its_next_request_while_the_settings_are_kept(world: Runtime) -> None:
    clock = Clock()
    config = store(world, clock)
    token = mint_token()
    world.principals.create(
        Principal(
            name="rev", permissions=frozenset({Permission.READ_KNOWLEDGE}), project_roles={"falcon": ProjectRole.VIEWER}
        ),
        token_hash(token),
    )
    before = config.scope("falcon", token_hash(token))
    assert before.principal is not None and before.principal.active
    world.principals.revoke("rev")
    with keys_read() as keys:
        after = config.scope("falcon", token_hash(token))
    assert not reads_settings(keys)  # the settings come from the container's copy
    assert after.principal is not None and not after.principal.active  # the principal does not
