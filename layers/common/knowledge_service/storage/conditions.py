"""DynamoDB's refusals, turned into the domain's."""

from __future__ import annotations

from collections.abc import Callable

from botocore.exceptions import ClientError


def is_condition_failure(error: ClientError) -> bool:
    code = error.response.get("Error", {}).get("Code", "")
    return code in {"ConditionalCheckFailedException", "TransactionCanceledException"}


def conditionally(write: Callable[[], object]) -> bool:
    """Run a conditional write: True when it was made, False when its condition refused it."""
    try:
        write()
    except ClientError as error:
        if is_condition_failure(error):
            return False
        raise
    return True


class WriteFailed(Exception):
    """A write the domain depends on did not happen (condition refused or AWS failed)."""
