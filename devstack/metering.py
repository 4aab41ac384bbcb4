"""Counting AWS calls exactly: every botocore API call, by service and operation.

Benchmarks report these counts and tests hold the code to them (one DynamoDB call per
bound read); they are deterministic, unlike timings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import botocore.client


@contextmanager
def aws_calls() -> Iterator[Counter[str]]:
    """Counts ``service:Operation`` for every botocore call made inside the block."""
    counts: Counter[str] = Counter()
    original = botocore.client.BaseClient._make_api_call  # type: ignore[attr-defined]

    def counted(self: Any, operation: str, params: Any) -> Any:
        counts[f"{self.meta.service_model.service_name}:{operation}"] += 1
        return original(self, operation, params)

    with mock.patch.object(botocore.client.BaseClient, "_make_api_call", counted):
        yield counts
