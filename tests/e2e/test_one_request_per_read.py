"""End to end through the local stack: a read is one Lambda invocation and one DynamoDB
request (the caller's principal read in the same BatchGetItem as its scope), and a revoked
token is refused on its very next request.

Counted by the stack itself (``GET /_local/metrics``: every invocation the gateway makes
and every botocore call of the process), around one request at a time.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from devstack.metering import difference
from devstack.samples import request_for
from knowledge_service.edge.catalog import knowledge_routes
from tests.localstack import LocalStack, bearer

pytestmark = pytest.mark.e2e

OWN_TABLES = ("/knowledge/feed", "/knowledge/changes")
"""Reads that answer from the service's own tables too (the feed's, findings, dead letters):
their scope and principal are the one BatchGetItem; their own records are read after it."""
NAMED_AFTER = ("/knowledge/jobs",)
"""Reads that name what FORAGER answered from the service's own records (a job's kind and files,
``storage/job_inputs.py``): their scope and principal are one BatchGetItem; the names of the jobs
FORAGER listed are one more, since which jobs those are is known only from FORAGER's answer."""
READS = [r for r in knowledge_routes() if r.method == "GET" and r.project_access == "read"] + [
    r for r in knowledge_routes() if (r.method, r.path) == ("POST", "/knowledge/retrieve")
]


def metered(
    http: httpx.Client, stack: LocalStack, method: str, target: str, **kwargs: Any
) -> tuple[int, dict[str, int]]:
    before = http.get("/_local/metrics").json()
    answer = http.request(method, target, **kwargs)
    after = http.get("/_local/metrics").json()
    return answer.status_code, difference(before, after)


def test_there_are_reads_to_hold() -> None:
    assert len(READS) >= 12


@pytest.mark.parametrize("route", READS, ids=lambda r: f"{r.method} {r.path}")
def test_every_read_is_one_invocation_and_one_dynamodb_request(
    http: httpx.Client, stack: LocalStack, route: Any
) -> None:
    target, body = request_for(route)
    headers = {**bearer(stack.admin_token), "Content-Type": "application/json"}
    http.request(route.method, target, content=body, headers=headers)  # warm: the container and its credential
    # The stack's counts are the whole process's: work another test left running (a feed
    # pass, a schedule) can only add to them, so the quietest of three requests is the one.
    attempts = [metered(http, stack, route.method, target, content=body, headers=headers) for _ in range(3)]
    status, counts = min(attempts, key=lambda attempt: sum(attempt[1].values()))
    assert status < 500, (status, counts)
    invocations = {k: v for k, v in counts.items() if k.startswith("invocations:")}
    dynamodb = {k: v for k, v in counts.items() if k.startswith("dynamodb:")}
    assert sum(invocations.values()) == 1, counts
    if route.path.startswith(OWN_TABLES):
        assert dynamodb["dynamodb:BatchGetItem"] == 1, counts
    elif route.path.startswith(NAMED_AFTER):  # one more when FORAGER answered jobs to name
        assert set(dynamodb) == {"dynamodb:BatchGetItem"} and dynamodb["dynamodb:BatchGetItem"] <= 2, counts
    else:
        assert dynamodb == {"dynamodb:BatchGetItem": 1}, counts


@pytest.mark.parametrize("path", ["/knowledge/engine", "/modules"])
def test_an_installation_read_reads_its_principal_with_the_settings(
    http: httpx.Client, stack: LocalStack, path: str
) -> None:
    headers = bearer(stack.admin_token)
    http.get(path, headers=headers)  # warm
    attempts = [metered(http, stack, "GET", path, headers=headers) for _ in range(3)]
    status, counts = min(attempts, key=lambda attempt: sum(attempt[1].values()))
    assert status == 200, counts
    assert {k: v for k, v in counts.items() if k.startswith("dynamodb:")} == {"dynamodb:BatchGetItem": 1}, counts
    assert counts["invocations:StatusFunction"] == 1, counts


def test_a_revoked_token_is_refused_on_its_next_request(http: httpx.Client, stack: LocalStack) -> None:
    token = stack.principal("revokee", "--permission", "read_knowledge", "--role", "falcon=viewer")
    params = {"project": "falcon", "q": "launch"}
    assert http.get("/knowledge/search", params=params, headers=bearer(token)).status_code == 200
    stack.admin("principal", "revoke", "revokee")
    refused = http.get("/knowledge/search", params=params, headers=bearer(token))
    assert refused.status_code == 401
    assert refused.json()["code"] == "unauthenticated"
