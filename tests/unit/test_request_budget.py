"""One total deadline per FORAGER call, one budget per request (knowledge_service/budget.py).

httpx's timeouts bound each read; these tests hold the whole call, and the whole request,
to a wall clock: a FORAGER trickling its body, stalling after its headers, or answering
each call a little slowly, is ``504 upstream_timeout`` by the budget, never later.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from knowledge_service import budget
from knowledge_service.budget import MARGIN_SECONDS, REQUEST_CAP_SECONDS, Budget, request_budget
from knowledge_service.errors import UpstreamTimeout
from knowledge_service.runtime import Runtime
from knowledge_service.upstream.client import ForagerClient
from local_engine.double import Double
from tests.conftest import Api

SLACK = 1.5
"""What a deadline may be overrun by on a shared, busy machine (scheduling, not waiting)."""


@dataclass
class Remaining:
    millis: int

    def get_remaining_time_in_millis(self) -> int:
        return self.millis


@pytest.fixture
def client(forager: Double) -> ForagerClient:
    return ForagerClient(forager.url, forager.token, timeout_seconds=8.0)


def timed(call: Callable[[], object]) -> tuple[object, float]:
    started = time.monotonic()
    try:
        result = call()
    except UpstreamTimeout as error:
        result = error
    return result, time.monotonic() - started


# ------------------------------------------------------------------ the budget, as a rule


def test_a_request_budget_is_the_remaining_time_less_the_margin() -> None:
    assert request_budget(Remaining(10_000)).seconds == pytest.approx(10 - MARGIN_SECONDS)


def test_a_request_budget_never_reaches_the_gateway_timeout() -> None:
    assert request_budget(Remaining(900_000)).seconds == REQUEST_CAP_SECONDS
    assert request_budget(None).seconds == REQUEST_CAP_SECONDS
    assert REQUEST_CAP_SECONDS + MARGIN_SECONDS < budget.GATEWAY_TIMEOUT_SECONDS


def test_a_function_nearly_out_of_time_has_no_budget_left() -> None:
    assert request_budget(Remaining(500)).seconds == 0


# ------------------------------------------------------------------ one deadline per call


@pytest.mark.parametrize(("mode", "delay"), [("trickle", 0.1), ("stall", 30.0), ("slow", 30.0)])
def test_a_call_ends_by_its_deadline_however_forager_paces_its_bytes(forager: Double, mode: str, delay: float) -> None:
    client = ForagerClient(forager.url, forager.token, timeout_seconds=0.5)
    forager.set_fault(mode, delay_seconds=delay)
    result, elapsed = timed(client.projects)
    assert isinstance(result, UpstreamTimeout)
    assert 0.5 <= elapsed < 0.5 + SLACK


def test_a_trickle_within_the_deadline_is_read_whole(forager: Double) -> None:
    client = ForagerClient(forager.url, forager.token, timeout_seconds=8.0)
    forager.set_fault("trickle", delay_seconds=0.001)
    assert client.status().version


def test_calls_under_one_budget_share_its_deadline(forager: Double, client: ForagerClient) -> None:
    # Each call answers in 1.2 s (well inside its own 8 s); the budget of 2 s leaves the second
    # call ~0.8 s: enough to be sent on a loaded machine, not enough to be answered.
    forager.set_fault("slow", delay_seconds=1.2)
    with budget.spending(Budget.of(2.0)):
        first, _ = timed(client.status)
        second, elapsed = timed(client.status)
        third, at_once = timed(client.status)
    assert not isinstance(first, UpstreamTimeout)
    assert isinstance(second, UpstreamTimeout) and elapsed < 0.8 + SLACK  # only what was left
    assert isinstance(third, UpstreamTimeout) and "ran out before" in third.message and at_once < SLACK
    assert len([r for r in forager.requests if r["path"] == "/api/status"]) == 2  # nothing sent once spent


def test_a_call_started_on_another_thread_keeps_the_budget(forager: Double, client: ForagerClient) -> None:
    forager.set_fault("slow", delay_seconds=5.0)
    with budget.spending(Budget.of(0.4)):
        asked = budget.started(client.status)
        started = time.monotonic()
        budget.finished(asked)
    assert isinstance(asked.exception(), UpstreamTimeout)
    assert time.monotonic() - started < 0.4 + SLACK


# ------------------------------------------------------------------ through the routes


def test_a_route_answers_504_by_the_budget_the_lambda_context_leaves(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    forager.set_fault("trickle", delay_seconds=0.1)  # the client's own deadline is 8 s
    started = time.monotonic()
    answer = api.call("GET", "/knowledge/projects", lambda_timeout=MARGIN_SECONDS + 0.5)
    elapsed = time.monotonic() - started
    assert (answer.status, answer.body["code"]) == (504, "upstream_timeout"), answer.raw
    assert elapsed < 0.5 + SLACK


def test_status_asks_its_three_questions_at_once_under_the_budget(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    """Status, capabilities and projects, 1 s each: 3 s one after another, 1 s at once."""
    forager.set_fault("slow", delay_seconds=1.0)
    status = api.call("GET", "/knowledge/status", lambda_timeout=MARGIN_SECONDS + 2.2).body["data"]
    assert status["usable"] is True and status["projects"] == ["falcon", "harbour"], status
    modules = api.call("GET", "/modules", lambda_timeout=MARGIN_SECONDS + 2.2).body["data"]
    assert modules["modules"][0]["axes"]["healthy"]["ok"] is True, modules


def test_status_under_a_trickle_answers_not_usable_within_the_budget(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    forager.set_fault("trickle", delay_seconds=0.1)
    started = time.monotonic()
    answer = api.call("GET", "/knowledge/status", lambda_timeout=MARGIN_SECONDS + 0.5)
    elapsed = time.monotonic() - started
    assert answer.status == 200
    assert (answer.body["data"]["reachable"], answer.body["data"]["usable"]) == (False, False)
    assert elapsed < 0.5 + SLACK
