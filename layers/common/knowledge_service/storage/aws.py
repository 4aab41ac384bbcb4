"""boto3 clients, built once per container. AWS_ENDPOINT_URL points them elsewhere."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config
from botocore.exceptions import EndpointConnectionError, NoCredentialsError, NoRegionError

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


def why_unreachable(error: BaseException) -> str | None:
    """The sentence an operator needs when ``error`` says AWS itself could not be reached or
    asked (no endpoint answering, no region, no credentials); None for any other error."""
    if isinstance(error, EndpointConnectionError):
        return (
            f"nothing answers at {error.kwargs.get('endpoint_url', 'the AWS endpoint')}: is `make run` running "
            "(then pass --local), or is AWS_ENDPOINT_URL pointing at the right place?"
        )
    if isinstance(error, NoRegionError):
        return "no AWS region is set: set AWS_REGION (the local stack's is us-east-1), or pass --local or --stack NAME."
    if isinstance(error, NoCredentialsError):
        return "no AWS credentials were found: pass --local for the local stack, or sign in (AWS_PROFILE, SSO)."
    return None
