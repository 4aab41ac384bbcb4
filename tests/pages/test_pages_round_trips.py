"""Pages and verbs at the floor (issue 30): each route held to the round trips
``benchmarks.requests`` reports for it (``measure_doors``: the route's own function, its
handler, tables from template.yaml, every botocore call counted).

The caller's principal, the project and, for a page's GET, PUT or DELETE, the page's head (and
for a PUT the project's generation) are read in the door's one BatchGetItem: a page GET is that
read and its bytes from S3; a PUT that read, its bytes, its transaction and its signal.
"""

from __future__ import annotations

import pytest

from benchmarks.requests import measure_doors


@pytest.fixture(scope="module")
def counted() -> dict[str, dict[str, int]]:
    rows = measure_doors(iterations=2)
    return {str(row["route"]): dict(row["calls"]) for row in rows if row["status"] == 200}  # type: ignore[call-overload]


def of(counted: dict[str, dict[str, int]], prefix: str) -> dict[str, int]:
    return next(calls for route, calls in counted.items() if route.startswith(prefix))


def test_every_measured_route_answered(counted: dict[str, dict[str, int]]) -> None:
    assert len(counted) == 6, counted


def test_a_page_get_is_one_dynamodb_request_and_its_bytes(counted: dict[str, dict[str, int]]) -> None:
    calls = of(counted, "GET /api/v1/projects/{id}/kb/pages/{path}")
    assert calls == {"dynamodb:BatchGetItem": 1, "s3:GetObject": 1}
    assert sum(calls.values()) <= 2


def test_a_page_put_is_four_round_trips(counted: dict[str, dict[str, int]]) -> None:
    calls = of(counted, "PUT /api/v1/projects/{id}/kb/pages/{path}")
    assert calls == {
        "dynamodb:BatchGetItem": 1,
        "s3:PutObject": 1,
        "dynamodb:TransactWriteItems": 1,
        "events:PutEvents": 1,
    }
    assert sum(calls.values()) <= 4


def test_a_page_delete_reads_its_head_with_the_caller(counted: dict[str, dict[str, int]]) -> None:
    calls = of(counted, "DELETE /api/v1/projects/{id}/kb/pages/{path}")
    assert calls == {"dynamodb:BatchGetItem": 1, "dynamodb:TransactWriteItems": 1, "events:PutEvents": 1}


def test_the_listing_reads_its_caller_in_one_request(counted: dict[str, dict[str, int]]) -> None:
    calls = of(counted, "GET /api/v1/projects/{id}/kb/pages (listing)")
    assert calls["dynamodb:BatchGetItem"] == 1
    assert sum(calls.values()) <= 2  # the caller and project, then the base's generation (its walk is kept)


@pytest.mark.parametrize("verb", ["knowledge.list", "capture.create"])
def test_a_verb_reads_its_caller_and_workspace_in_one_request(counted: dict[str, dict[str, int]], verb: str) -> None:
    calls = of(counted, f"POST /v/{verb}")
    assert calls["dynamodb:BatchGetItem"] == 1
    assert "dynamodb:GetItem" not in calls  # no principal read, no project read of its own
    assert sum(calls.values()) <= 4  # the door's read, the audit row and its conclusion, the verb's own request
