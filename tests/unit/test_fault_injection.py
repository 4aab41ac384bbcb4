"""Every route under every upstream fault: a documented code in the envelope, never a stack
trace, and no partial write (every table read back and compared).

Generated from the route table, with the shared ``inject_fault`` fixture (tests/conftest.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import dynamodb_backends

from knowledge_service.edge.catalog import RouteInfo, knowledge_routes
from knowledge_service.edge.openapi import openapi_document
from knowledge_service.runtime import Runtime
from tests.authorization_matrix import request_for
from tests.conftest import ADMIN, FAULT_ANSWERS, PACED_CALL_SECONDS, TEMPLATE, Api

ROUTES = knowledge_routes()
DOCUMENT = openapi_document()
# Powertools' idempotency records come and go with a request by design.
UNCOMPARED = {TEMPLATE.physical_name("IdempotencyTable")}
# A route makes a few FORAGER calls at most; each ends by its deadline, plus the tables' work.
ANSWERED_WITHIN_SECONDS = 4 * PACED_CALL_SECONDS + 4.0


def every_table() -> dict[str, list[str]]:
    """Every compared table's items, each as sorted JSON, read from moto's own tables.

    Read in process rather than scanned through botocore: two scans of thirteen tables a test
    were two thirds of this file's time (459 tests), and the items are the same either way."""
    held = dynamodb_backends[DEFAULT_ACCOUNT_ID][TEMPLATE.region].tables
    tables: dict[str, list[str]] = {}
    for logical_id in TEMPLATE.of_type("AWS::DynamoDB::Table"):
        name = TEMPLATE.physical_name(logical_id)
        if name in UNCOMPARED:
            continue
        items = held[name].all_items()
        tables[name] = sorted(json.dumps(item.to_json()["Attributes"], sort_keys=True) for item in items)
    return tables


@pytest.mark.parametrize("fault", sorted(FAULT_ANSWERS))
@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_a_route_under_an_upstream_fault_answers_a_documented_code_and_writes_nothing_half(
    api: Api, knowledge_on: Runtime, inject_fault: Callable[[str], None], route: RouteInfo, fault: str
) -> None:
    target, body = request_for(route)
    path, _, query = target.partition("?")
    params = dict(pair.split("=", 1) for pair in query.split("&"))
    api.token(ADMIN)  # the caller enrolled before the tables are read: its record is no write of the route's
    before = every_table()
    inject_fault(fault)
    started = time.monotonic()
    answer = api.call(
        route.method, path, body=body, query=params, resource=route.path, headers={"Content-Type": "application/json"}
    )
    elapsed = time.monotonic() - started

    documented = {int(code) for code in DOCUMENT["paths"][route.path][route.method.lower()]["responses"]}
    assert answer.status in documented, f"{answer.status} is not documented: {answer.raw}"
    assert "Traceback" not in answer.raw
    if answer.status >= 500:
        assert answer.status in FAULT_ANSWERS[fault], answer.raw
        assert answer.body["code"] in {"knowledge_unreachable", "upstream_timeout", "upstream_error"}
    if answer.status >= 400:
        assert answer.body["success"] is False and answer.body["data"] is None
        assert every_table() == before, "a refused request changed a table"
    if fault in ("trickle", "stall"):
        # Each FORAGER call ends by its deadline however FORAGER paces its bytes: a read
        # timeout alone would let a trickle hold the request for as long as the body lasts.
        assert elapsed < ANSWERED_WITHIN_SECONDS, f"answered after {elapsed:.1f}s: {answer.raw}"
