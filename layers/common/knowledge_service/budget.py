"""One request, one budget of time for FORAGER.

httpx's timeouts bound each read, not a call: a FORAGER that sends its headers and then a
byte every few seconds would hold a request until Lambda killed it. So every FORAGER call
has one total deadline (connect, headers and body; ``upstream/transport.py`` holds it at every
socket operation), and every API request one :class:`Budget` that all its calls share:
the Lambda context's remaining time less a margin for the work after the last call, and
never more than :data:`REQUEST_CAP_SECONDS`, so no request reaches API Gateway's 29 s
integration timeout or the function's own. A call the budget cannot cover is
``504 upstream_timeout``, like a call FORAGER did not answer in time.

The edge opens the budget (``spending``) around the route; the FORAGER client reads it
(``current``). Nothing here reads the environment or touches HTTP.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from threading import Lock
from typing import Any, Protocol, TypeVar

GATEWAY_TIMEOUT_SECONDS = 29.0
"""API Gateway's integration timeout: the caller is answered 504 by the gateway after it."""
REQUEST_CAP_SECONDS = 25.0
"""The most one request spends on FORAGER: inside the gateway's 29 s, with room for the
authorizer, the tables and the answer."""
MARGIN_SECONDS = 2.0
"""Kept back from the function's remaining time for the work after the last FORAGER call."""
CONCURRENT_CALLS = 8
"""Threads a container keeps for a route's independent FORAGER calls."""

T = TypeVar("T")


class RemainingTime(Protocol):
    """What a budget reads from Lambda's context object."""

    def get_remaining_time_in_millis(self) -> int: ...


@dataclass(frozen=True)
class Budget:
    """A request's time for FORAGER: ``seconds`` in all, up to ``deadline`` (``time.monotonic``)."""

    seconds: float
    deadline: float

    @classmethod
    def of(cls, seconds: float) -> Budget:
        seconds = max(0.0, seconds)
        return cls(seconds, time.monotonic() + seconds)

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())


def request_budget(context: RemainingTime | None) -> Budget:
    """The budget of a request that Lambda gave ``context``: its remaining time less the
    margin, capped at :data:`REQUEST_CAP_SECONDS` (the cap alone without a context)."""
    seconds = REQUEST_CAP_SECONDS
    if context is not None:
        seconds = min(seconds, context.get_remaining_time_in_millis() / 1000 - MARGIN_SECONDS)
    return Budget.of(seconds)


_current: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("forager_budget", default=None)


def current() -> Budget | None:
    """The budget of the request this code runs for, or None (a scheduled pass, a script)."""
    return _current.get()


@contextmanager
def spending(budget: Budget) -> Iterator[Budget]:
    """Run the block under ``budget``: every FORAGER call inside it shares that deadline."""
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)


_pool: ThreadPoolExecutor | None = None
_pool_lock = Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool  # noqa: PLW0603 - one small pool per container, made on first use
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=CONCURRENT_CALLS, thread_name_prefix="forager-call")
        return _pool


def started(call: Callable[[], T]) -> Future[T]:
    """Start one of a route's independent FORAGER calls on the container's small pool, in a
    copy of the caller's context (so under its budget); :func:`finished` waits for them."""
    return _executor().submit(contextvars.copy_context().run, call)


def finished(*futures: Future[Any]) -> None:
    """Wait until every call has answered or failed: each call's own deadline bounds it, so
    the wait ends by the budget's deadline. ``result()`` then answers or raises."""
    wait(futures)
