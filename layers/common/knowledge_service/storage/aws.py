"""boto3 clients, built once per container. AWS_ENDPOINT_URL points them elsewhere."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource

_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=3, read_timeout=10)


@lru_cache(maxsize=1)
def dynamodb() -> DynamoDBServiceResource:
    return boto3.resource("dynamodb", config=_CONFIG)


@cache
def client(service: str) -> Any:
    return boto3.client(service, config=_CONFIG)  # type: ignore[call-overload]


def reset_clients() -> None:
    """Forget the cached clients (tests that switch endpoints or fakes call this)."""
    dynamodb.cache_clear()
    client.cache_clear()
