"""The emulated world every benchmark runs in: moto in-process with the tables template.yaml
declares, the function's environment, and (optionally) the FORAGER simulator on loopback
with knowledge on and the demo project bound."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from unittest import mock

import boto3
from moto import mock_aws

from devstack.template import Template, create_resources
from knowledge_service.identity.principal import Permission, Principal, ProjectRole, token_hash
from knowledge_service.models import KnowledgeSettings
from knowledge_service.runtime import Runtime, reset_runtime, runtime
from local_engine.double import Double, start_double

ADMIN = Principal(
    name="bench",
    permissions=frozenset(Permission),
    project_roles={"falcon": ProjectRole.ADMIN},
    organizations=frozenset({"colony"}),
)
"""The caller every benchmarked request is made as."""
ADMIN_TOKEN = "ks_bench-caller-of-every-benchmark000000000000"  # noqa: S105 - moto only
BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
"""The header every benchmarked request carries: each function authenticates it."""


@contextmanager
def emulated(function: str, *, with_forager: bool = True) -> Iterator[tuple[Runtime, Double | None]]:
    template = Template()
    environment = {
        **template.function_environment(function),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }
    with ExitStack() as stack:
        stack.enter_context(mock.patch.dict(os.environ, environment))
        stack.enter_context(mock_aws())
        simulator = stack.enter_context(start_double(port=0, control_port=0)) if with_forager else None
        os.environ.pop("AWS_ENDPOINT_URL", None)
        reset_runtime()
        create_resources(template, boto3.client("dynamodb"), boto3.client("s3"), boto3.client("events"))
        rt = runtime()
        rt.principals.create(ADMIN, token_hash(ADMIN_TOKEN))
        if simulator is not None:
            rt.config.save_settings(KnowledgeSettings(knowledge_enabled=True, knowledge_forager_endpoint=simulator.url))
            rt.credentials.write(simulator.token)
            rt.projects.create("falcon", "colony")
            rt.config.bind("falcon", "falcon", "bench")
        try:
            yield rt, simulator
        finally:
            reset_runtime()
