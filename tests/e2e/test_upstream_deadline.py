"""The request path's deadline over the local stack: FORAGER trickling, stalling after its
headers, or answering each call slowly is ``504 upstream_timeout`` within the budget.

The stack runs the template's defaults: 8 s per FORAGER call (``FORAGER_TIMEOUT_SECONDS``),
the request's budget taken from the function's 30 s (25 s at most). Before the total
deadline, a trickle of one byte a second held ``GET /knowledge/projects`` for as long as
the body lasted (minutes), and the caller got no envelope at all.
"""

from __future__ import annotations

import time

import httpx
import pytest

from tests.localstack import LocalStack, bearer

pytestmark = pytest.mark.e2e

CALL_SECONDS = 8.0
"""The template's per-call deadline (Environment.forager_timeout_seconds' default)."""
SLACK = 6.0
"""The gateway, the authorizer, the tables and a busy shared machine (a trickle of one byte
a second would otherwise hold the request for minutes)."""


def timed_get(http: httpx.Client, stack: LocalStack, path: str, **params: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    answer = http.get(path, params=params, headers=bearer(stack.admin_token))
    return answer, time.monotonic() - started


@pytest.mark.parametrize(
    ("mode", "delay", "path", "params"),
    [
        ("trickle", 1.0, "/knowledge/projects", {}),
        ("stall", 120.0, "/knowledge/search", {"project": "falcon", "q": "launch"}),
    ],
)
def test_a_route_answers_504_within_its_deadline_while_forager_paces_its_body(
    http: httpx.Client, stack: LocalStack, mode: str, delay: float, path: str, params: dict[str, str]
) -> None:
    assert timed_get(http, stack, path, **params)[0].status_code == 200  # the function is loaded: time FORAGER only
    stack.fault(mode, delay_seconds=delay)
    answer, elapsed = timed_get(http, stack, path, **params)
    assert (answer.status_code, answer.json()["code"]) == (504, "upstream_timeout"), answer.text
    assert answer.json()["success"] is False and answer.json()["data"] is None
    assert CALL_SECONDS - 0.5 <= elapsed < CALL_SECONDS + SLACK, elapsed


def test_status_asks_forager_its_three_questions_at_once(http: httpx.Client, stack: LocalStack) -> None:
    """Three calls of 3 s each: 9 s one after another, 3 s at once."""
    assert timed_get(http, stack, "/knowledge/status")[0].status_code == 200
    stack.fault("slow", delay_seconds=3.0)
    answer, elapsed = timed_get(http, stack, "/knowledge/status")
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["usable"] is True
    assert elapsed < 9.0 - 1.0, elapsed
