"""Counting AWS calls exactly: every botocore API call, by service and operation.

Benchmarks report these counts and tests hold the code to them (one DynamoDB call per
bound read); they are deterministic, unlike timings.
"""

from __future__ import annotations

import contextvars
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from unittest import mock

import botocore.client
import httpx


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


_in_function: contextvars.ContextVar[bool] = contextvars.ContextVar("in_function", default=False)


class Meter:
    """What the local stack's functions did since it started: each invocation (the
    gateway's, the authorizer's, a schedule's) and each botocore API call made inside one
    (the stack's own calls, a snapshot of the tables, are not counted). ``GET /_local/metrics``
    answers a snapshot; a caller diffs two around its requests, one request at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._invocations: Counter[str] = Counter()
        self._aws: Counter[str] = Counter()
        self._upstream: Counter[str] = Counter()
        self._installed = False

    def invoked(self, function: str) -> None:
        with self._lock:
            self._invocations[function] += 1

    def metered(self, invoke: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
        """``invoke``, counting each call by its function."""

        def counted(function: str, event: Any) -> Any:
            self.invoked(function)
            token = _in_function.set(True)
            try:
                return invoke(function, event)
            finally:
                _in_function.reset(token)

        return counted

    def count_aws_calls(self) -> None:
        """Count every botocore API call and every httpx request (FORAGER's) a function of
        this process makes from now on (idempotent)."""
        if self._installed:
            return
        self._installed = True
        original = botocore.client.BaseClient._make_api_call  # type: ignore[attr-defined]
        meter = self

        def counted(client: Any, operation: str, params: Any) -> Any:
            if _in_function.get():  # a function's call (or its pool's, in a copy of its context)
                with meter._lock:
                    meter._aws[f"{client.meta.service_model.service_name}:{operation}"] += 1
            return original(client, operation, params)

        botocore.client.BaseClient._make_api_call = counted  # type: ignore[attr-defined]
        sent = httpx.Client.send

        def counted_send(client: httpx.Client, request: httpx.Request, **kwargs: Any) -> httpx.Response:
            if _in_function.get():  # a function's FORAGER call (httpx is only the upstream client's)
                with meter._lock:
                    meter._upstream[request.method] += 1
            return sent(client, request, **kwargs)

        httpx.Client.send = counted_send  # type: ignore[method-assign,assignment]

    def snapshot(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {"invocations": dict(self._invocations), "aws": dict(self._aws), "forager": dict(self._upstream)}


def difference(before: Mapping[str, Mapping[str, int]], after: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """``after - before`` of two :meth:`Meter.snapshot` answers, flat: ``invocations:<Function>``,
    ``<service>:<Operation>`` and ``forager:<METHOD>``, zeros left out."""
    flat: dict[str, int] = {}
    for kind, prefix in (("invocations", "invocations:"), ("aws", ""), ("forager", "forager:")):
        for name, count in after.get(kind, {}).items():
            changed = count - before.get(kind, {}).get(name, 0)
            if changed:
                flat[prefix + name] = changed
    return flat
