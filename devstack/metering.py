"""Counting AWS calls exactly: every botocore API call, by service and operation.

Benchmarks report these counts and tests hold the code to them (one DynamoDB call per
bound read); they are deterministic, unlike timings.
"""

from __future__ import annotations

import io
import json
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TextIO
from unittest import mock

import botocore.client
import httpx

from devstack import footprint


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
        self._cloudwatch: dict[str, float] = {}
        self._footprint: dict[str, float] = {}

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
            for name, value in calls.get("cloudwatch", {}).items():
                self._cloudwatch[name] = round(self._cloudwatch.get(name, 0) + value, 3)
            footprint.added(self._footprint, calls.get("footprint", {}).items())

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """The counts, and ``cloudwatch``: each metric the functions published (embedded metric
        format), ``<Namespace>/<Name>{dimension=value,...}`` -> the sum of its values, what a
        ``Sum`` alarm on it would see; and ``footprint``: the table, key and capacity units (or
        the S3 prefix and requests) of every call (``devstack.footprint``)."""
        with self._lock:
            return {
                "invocations": dict(self._invocations),
                "aws": dict(self._aws),
                "forager": dict(self._upstream),
                "cloudwatch": dict(self._cloudwatch),
                "footprint": dict(self._footprint),
            }


class CallCounter:
    """Every botocore API call and every httpx request (FORAGER's: httpx is only the upstream
    client's) this process makes, by ``service:Operation`` and by method. An execution
    environment runs one invocation at a time, so what it counted between two answers is one
    invocation's (a thread of a pool it started included)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._aws: Counter[str] = Counter()
        self._upstream: Counter[str] = Counter()
        self._footprint: dict[str, float] = {}
        self._installed = False
        self.metrics: EmfTap | None = None

    def install(self) -> None:
        """Count from now on (idempotent)."""
        if self._installed:
            return
        self._installed = True
        original = botocore.client.BaseClient._make_api_call  # type: ignore[attr-defined]
        counter = self

        def counted(client: Any, operation: str, params: Any) -> Any:
            service = client.meta.service_model.service_name
            with counter._lock:
                counter._aws[f"{service}:{operation}"] += 1
            answer: Any = {}
            try:
                answer = original(client, operation, params)
                return answer
            finally:  # a refused write (its condition failed) is billed all the same
                touched = footprint.touches(service, operation, params, answer)
                with counter._lock:
                    footprint.added(counter._footprint, touched)

        botocore.client.BaseClient._make_api_call = counted  # type: ignore[attr-defined]
        sent = httpx.Client.send

        def counted_send(client: httpx.Client, request: httpx.Request, **kwargs: Any) -> httpx.Response:
            with counter._lock:
                counter._upstream[request.method] += 1
            return sent(client, request, **kwargs)

        httpx.Client.send = counted_send  # type: ignore[method-assign,assignment]

    def take(self) -> dict[str, dict[str, Any]]:
        """What was counted since the last ``take``, and start again from zero."""
        with self._lock:
            taken: dict[str, dict[str, Any]] = {
                "aws": dict(self._aws),
                "forager": dict(self._upstream),
                "footprint": self._footprint,
            }
            self._aws.clear()
            self._upstream.clear()
            self._footprint = {}
        if self.metrics is not None:
            taken["cloudwatch"] = self.metrics.take()
        return taken

    def tap_stdout(self) -> None:
        """Read the metrics the function prints (:class:`EmfTap` on ``sys.stdout``) from now on."""
        if self.metrics is None:
            self.metrics = EmfTap(sys.stdout)
            sys.stdout = self.metrics


class EmfTap(io.TextIOBase):
    """``sys.stdout`` as Lambda's log sees it: everything written goes on to the stream, and each
    line in CloudWatch's embedded metric format (``{"_aws": ...}``, Powertools Metrics' output)
    is also read, as CloudWatch reads it, into sums by metric and dimensions."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._partial = ""
        self._lock = threading.Lock()
        self._sums: dict[str, float] = {}

    def write(self, text: str) -> int:
        self._stream.write(text)
        with self._lock:
            *lines, self._partial = (self._partial + text).split("\n")
            for line in lines:
                if line.startswith('{"_aws"'):
                    for name, value in emf_figures(line).items():
                        self._sums[name] = self._sums.get(name, 0) + value
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def take(self) -> dict[str, float]:
        with self._lock:
            taken, self._sums = self._sums, {}
        return taken


def emf_figures(line: str) -> dict[str, float]:
    """One embedded-metric-format line's metrics: ``<Namespace>/<Name>{dim=value,...}`` -> the sum
    of its values, one entry per dimension set the line declares (a malformed line: nothing)."""
    try:
        document = json.loads(line)
        figures: dict[str, float] = {}
        for directive in document["_aws"]["CloudWatchMetrics"]:
            for dimensions in directive.get("Dimensions") or [[]]:
                labels = ",".join(f"{d}={document[d]}" for d in sorted(dimensions))
                for metric in directive["Metrics"]:
                    values = document[metric["Name"]]
                    total = sum(values) if isinstance(values, list) else values
                    key = f"{directive['Namespace']}/{metric['Name']}{{{labels}}}"
                    figures[key] = figures.get(key, 0) + float(total)
        return figures
    except (ValueError, KeyError, TypeError):
        return {}


def difference(before: Mapping[str, Mapping[str, int]], after: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """``after - before`` of two :meth:`Meter.snapshot` answers, flat: ``invocations:<Function>``,
    ``<service>:<Operation>`` and ``forager:<METHOD>``, zeros left out (the footprint is
    :func:`footprint_difference`'s)."""
    flat: dict[str, int] = {}
    for kind, prefix in (("invocations", "invocations:"), ("aws", ""), ("forager", "forager:")):
        for name, count in after.get(kind, {}).items():
            changed = count - before.get(kind, {}).get(name, 0)
            if changed:
                flat[prefix + name] = changed
    return flat


def footprint_difference(
    before: Mapping[str, Mapping[str, float]], after: Mapping[str, Mapping[str, float]]
) -> dict[str, float]:
    """``after - before`` of two snapshots' ``footprint``: what the calls between them touched."""
    was = before.get("footprint", {})
    changed = {key: round(units - was.get(key, 0.0), 3) for key, units in after.get("footprint", {}).items()}
    return {key: units for key, units in changed.items() if units}
