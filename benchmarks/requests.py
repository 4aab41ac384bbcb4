"""Per route: p50/p99 handler latency, and the DynamoDB, S3, other AWS and FORAGER calls
one request makes, counted exactly.

AWS is moto in-process (tables from template.yaml) and FORAGER is the simulator on
loopback; every botocore API call is counted at ``BaseClient._make_api_call`` and every
FORAGER call by the simulator's request log. The counts are deterministic: they are what
a reviewer can hold the code to.
"""

from __future__ import annotations

import os
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import boto3
import botocore.client
from moto import mock_aws

from devstack.events import rest_event
from devstack.lambdas import FakeLambdaContext, load_handler
from devstack.samples import request_for
from devstack.template import Template, create_resources
from forager_simulator import start_simulator
from knowledge_service.edge.catalog import knowledge_routes
from knowledge_service.identity.principal import Permission, Principal, ProjectRole
from knowledge_service.models import KnowledgeSettings
from knowledge_service.runtime import reset_runtime, runtime

ADMIN = Principal(
    name="bench",
    permissions=frozenset(Permission),
    project_roles={"falcon": ProjectRole.ADMIN},
    organizations=frozenset({"colony"}),
)

ITERATIONS = 50
"""Timed calls per route, after one warm-up call (latency is a distribution: p50 and p99)."""


@contextmanager
def counting() -> Iterator[Counter[str]]:
    counts: Counter[str] = Counter()
    original = botocore.client.BaseClient._make_api_call  # type: ignore[attr-defined]

    def counted(self: Any, operation: str, params: Any) -> Any:
        counts[f"{self.meta.service_model.service_name}:{operation}"] += 1
        return original(self, operation, params)

    with mock.patch.object(botocore.client.BaseClient, "_make_api_call", counted):
        yield counts


def measure() -> list[dict[str, object]]:
    template = Template()
    environment = {
        **template.function_environment("StatusFunction"),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }
    rows = []
    with mock.patch.dict(os.environ, environment), mock_aws(), start_simulator(port=0, control_port=0) as sim:
        os.environ.pop("AWS_ENDPOINT_URL", None)
        reset_runtime()
        create_resources(template, boto3.client("dynamodb"), boto3.client("s3"), boto3.client("events"))
        rt = runtime()
        rt.config.save_settings(KnowledgeSettings(knowledge_enabled=True, knowledge_forager_endpoint=sim.url))
        rt.credentials.write(sim.token)
        rt.projects.create("falcon", "colony")
        rt.config.bind("falcon", "falcon", "bench")
        functions = {(r.method, r.path): r for r in template.routes()}
        for info in knowledge_routes():  # every route of every group, from the route table
            route = functions[(info.method, info.path)]
            handler = load_handler(route.handler_dir, route.handler, f"lambda_{route.function}")
            target, body = request_for(info)
            path, _, query = target.partition("?")
            event = rest_event(
                info.method,
                path,
                resource=info.path,
                query=dict(pair.split("=", 1) for pair in query.split("&")),
                headers={"Content-Type": "application/json"},
                body=body,
                authorizer={"principalId": ADMIN.name, "principal": ADMIN.model_dump_json()},
            )
            handler(event, FakeLambdaContext(route.function))  # warm: credential cache, clients
            seen = len(sim.requests)
            with counting() as counts:
                response = handler(event, FakeLambdaContext(route.function))
            row = _row(f"{info.method} {info.path}", response["statusCode"], counts, len(sim.requests) - seen)
            timings = []
            for _ in range(ITERATIONS):
                started = time.perf_counter()
                handler(event, FakeLambdaContext(route.function))
                timings.append((time.perf_counter() - started) * 1000)
            row["p50_ms"] = round(statistics.median(timings), 2)
            row["p99_ms"] = round(statistics.quantiles(timings, n=100)[98], 2)
            rows.append(row)
        with counting() as counts:
            rt.config.scope("falcon")
        rows.append(_row("binding resolution (every bound read)", 200, counts, 0))
        reset_runtime()
    return rows


def _row(name: str, status: int, counts: Counter[str], forager: int) -> dict[str, object]:
    def of(service: str) -> int:
        return sum(v for k, v in counts.items() if k.startswith(f"{service}:"))

    return {
        "route": name,
        "status": status,
        "dynamodb_requests": of("dynamodb"),
        "s3_requests": of("s3"),
        "other_aws_requests": sum(counts.values()) - of("dynamodb") - of("s3"),
        "forager_requests": forager,
        "calls": dict(sorted(counts.items())),
    }
