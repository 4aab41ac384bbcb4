"""End to end: the local stack started as a user starts it (``python -m devstack`` in its
own process), called over HTTP, with principals made by ``knowledge-admin --local`` from
"a second terminal". The stack itself is ``tests/localstack.py``'s; the session's shared one
(``stack``) is the root conftest's, so the browser files on a worker use the same one."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from tests import secrets
from tests.localstack import TLS, LocalStack


def _record(response: httpx.Response) -> None:
    response.read()
    secrets.record(response.text)


@pytest.fixture
def http(stack: LocalStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=30.0, verify=TLS, event_hooks={"response": [_record]}) as client:
        yield client


@pytest.fixture(autouse=True)
def _no_fault_left_behind(request: pytest.FixtureRequest) -> Iterator[None]:
    """The shared stack's FORAGER healthy again after each test that used it. Asked for by name,
    not as an argument: a test on a stack of its own (the fuzz run) or on none (a parser's test)
    must not start the shared one for nothing."""
    yield
    if "stack" in request.fixturenames:
        request.getfixturevalue("stack").fault(None)


@pytest.fixture
def move_clock(stack: LocalStack) -> Iterator[Callable[[int], None]]:
    """Moves the functions' clock (``PUT /_local/clock``); put back to the wall clock after the test,
    with the engine's faults cleared."""

    def move(seconds: int) -> None:
        answer = httpx.put(f"{stack.url}/_local/clock", json={"offset_seconds": seconds}, verify=TLS, timeout=30.0)
        assert answer.status_code == 200, answer.text
        assert answer.json()["offset_seconds"] == seconds

    yield move
    move(0)
    stack.fault(None)
