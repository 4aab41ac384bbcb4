"""DynamoDB's refusals, turned into the domain's."""

from __future__ import annotations

from botocore.exceptions import ClientError


def is_condition_failure(error: ClientError) -> bool:
    code = error.response.get("Error", {}).get("Code", "")
    return code in {"ConditionalCheckFailedException", "TransactionCanceledException"}


class WriteFailed(Exception):
    """A write the domain depends on did not happen (condition refused or AWS failed)."""
