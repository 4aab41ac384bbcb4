"""Counting AWS calls exactly: every botocore API call, by service and operation.

Benchmarks report these counts and tests hold the code to them (one DynamoDB call per
bound read); they are deterministic, unlike timings.
"""

from __future__ import annotations

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


class Meter:
    """What the local stack's functions did since it started: each invocation (the
    gateway's, a schedule's, a bus rule's) and each botocore API call and
    FORAGER request made inside one, counted in its execution environment (``CallCounter``)
    and added here with its answer (the stack's own calls, a snapshot of the tables, are
    not counted). ``GET /_local/metrics`` answers a snapshot; a caller diffs two around its
    requests, one request at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._invocations: Counter[str] = Counter()
        self._aws: Counter[str] = Counter()
        self._upstream: Counter[str] = Counter()

    def invoked(self, function: str) -> None:
        with self._lock:
            self._invocations[function] += 1

    def metered(self, invoke: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
        """``invoke``, counting each call by its function."""

        def counted(function: str, event: Any) -> Any:
            self.invoked(function)
            return invoke(function, event)

        return counted

    def add_calls(self, calls: Mapping[str, Mapping[str, int]]) -> None:
        """Add what one invocation called (``CallCounter.take``'s answer)."""
        with self._lock:
            self._aws.update(calls.get("aws", {}))
            self._upstream.update(calls.get("forager", {}))

    def snapshot(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {"invocations": dict(self._invocations), "aws": dict(self._aws), "forager": dict(self._upstream)}


class CallCounter:
    """Every botocore API call and every httpx request (FORAGER's: httpx is only the upstream
    client's) this process makes, by ``service:Operation`` and by method. An execution
    environment runs one invocation at a time, so what it counted between two answers is one
    invocation's (a thread of a pool it started included)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._aws: Counter[str] = Counter()
        self._upstream: Counter[str] = Counter()
        self._installed = False

    def install(self) -> None:
        """Count from now on (idempotent)."""
        if self._installed:
            return
        self._installed = True
        original = botocore.client.BaseClient._make_api_call  # type: ignore[attr-defined]
        counter = self

        def counted(client: Any, operation: str, params: Any) -> Any:
            with counter._lock:
                counter._aws[f"{client.meta.service_model.service_name}:{operation}"] += 1
            return original(client, operation, params)

        botocore.client.BaseClient._make_api_call = counted  # type: ignore[attr-defined]
        sent = httpx.Client.send

        def counted_send(client: httpx.Client, request: httpx.Request, **kwargs: Any) -> httpx.Response:
            with counter._lock:
                counter._upstream[request.method] += 1
            return sent(client, request, **kwargs)

        httpx.Client.send = counted_send  # type: ignore[method-assign,assignment]

    def take(self) -> dict[str, dict[str, int]]:
        """What was counted since the last ``take``, and start again from zero."""
        with self._lock:
            taken = {"aws": dict(self._aws), "forager": dict(self._upstream)}
            self._aws.clear()
            self._upstream.clear()
            return taken


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
