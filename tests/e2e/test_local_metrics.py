"""The local stack shows the metrics the functions publish (embedded metric format on their
stdout), beside its own counts in ``GET /_local/metrics``: what the alarms would see."""

from __future__ import annotations

import httpx
import pytest

from tests.localstack import LocalStack, bearer

pytestmark = pytest.mark.e2e


def figures(http: httpx.Client) -> dict[str, float]:
    answer: dict[str, float] = http.get("/_local/metrics").json()["cloudwatch"]
    return answer


def grew(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: round(v - before.get(k, 0), 3) for k, v in after.items() if v != before.get(k, 0)}


def test_a_short_run_shows_forager_calls_by_outcome_and_their_latency(http: httpx.Client, stack: LocalStack) -> None:
    before = figures(http)
    assert http.get("/knowledge/status", headers=bearer(stack.admin_token)).status_code == 200
    stack.fault("5xx")
    assert http.get("/modules", headers=bearer(stack.admin_token)).status_code == 200  # it says so, and counts it
    stack.fault(None)

    changed = grew(before, figures(http))
    assert changed.get("KnowledgeService/ForagerCalls{outcome=ok,service=status}", 0) >= 1, changed
    assert changed.get("KnowledgeService/ForagerCalls{outcome=upstream_error,service=status}", 0) >= 1, changed
    assert changed.get("KnowledgeService/ForagerCallLatency{service=status}", 0) > 0, changed
