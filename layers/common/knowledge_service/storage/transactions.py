"""Writes to several tables that must happen together or not at all."""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.types import TypeSerializer

_serializer = TypeSerializer()


def wire(item: dict[str, Any]) -> dict[str, Any]:
    """An item in DynamoDB's typed wire form, for the low-level transaction API."""
    return {key: _serializer.serialize(value) for key, value in item.items()}
