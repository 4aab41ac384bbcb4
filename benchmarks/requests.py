"""Requests per route: DynamoDB, SSM and FORAGER calls one request makes, counted exactly.

AWS is moto in-process (tables from template.yaml) and FORAGER is the simulator on
loopback; every botocore API call is counted at ``BaseClient._make_api_call`` and every
FORAGER call by the simulator's request log. The counts are deterministic: they are what
a reviewer can hold the code to.
"""

from __future__ import annotations

import json
import os
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
from devstack.template import Template, create_resources
from forager_simulator import start_simulator
from knowledge_service.identity.principal import Permission, Principal, ProjectRole
from knowledge_service.models import KnowledgeSettings
from knowledge_service.runtime import reset_runtime, runtime

ADMIN = Principal(
    name="bench",
    permissions=frozenset(Permission),
    project_roles={"falcon": ProjectRole.ADMIN},
    organizations=frozenset({"colony"}),
)

ROUTES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/knowledge/status", None),
    ("GET", "/knowledge/engine", None),
    ("GET", "/modules", None),
    ("GET", "/knowledge/projects", None),
    ("POST", "/knowledge/project-map", {"project": "falcon", "knowledge_base": "falcon"}),
    ("POST", "/settings", {"knowledge_auto_study": "suggest"}),
]


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
        routes = {(r.method, r.path): r for r in template.routes()}
        for method, path, body in ROUTES:
            route = routes[(method, path)]
            handler = load_handler(route.handler_dir, route.handler, f"lambda_{route.function}")
            event = rest_event(
                method,
                path,
                resource=path,
                body=None if body is None else json.dumps(body),
                authorizer={"principalId": ADMIN.name, "principal": ADMIN.model_dump_json()},
            )
            handler(event, FakeLambdaContext(route.function))  # warm: credential cache, clients
            seen = len(sim.requests)
            with counting() as counts:
                response = handler(event, FakeLambdaContext(route.function))
            rows.append(_row(f"{method} {path}", response["statusCode"], counts, len(sim.requests) - seen))
        with counting() as counts:
            rt.config.scope("falcon")
        rows.append(_row("binding resolution (every bound read)", 200, counts, 0))
        reset_runtime()
    return rows


def _row(name: str, status: int, counts: Counter[str], forager: int) -> dict[str, object]:
    dynamodb = sum(v for k, v in counts.items() if k.startswith("dynamodb:"))
    return {
        "route": name,
        "status": status,
        "dynamodb_requests": dynamodb,
        "other_aws_requests": sum(counts.values()) - dynamodb,
        "forager_requests": forager,
        "calls": dict(sorted(counts.items())),
    }
