"""The product clock (``knowledge_service/clock.py``): the system's everywhere, movable only where the
local stack names a clock file through the Environment model; and the local stack's ``/_local/clock``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from devstack.gateway import local_routes
from knowledge_service.clock import MAX_OFFSET_SECONDS, OffsetClock, clock_for, system_clock
from knowledge_service.environment import Environment

BASE = {
    "CONFIG_TABLE": "c",
    "PRINCIPALS_TABLE": "p",
    "PROJECTS_TABLE": "pr",
    "EVENT_LOG_TABLE": "e",
    "IDEMPOTENCY_TABLE": "i",
    "FORAGER_CREDENTIAL_PARAMETER": "/f",
}


def test_a_deployment_runs_on_the_system_clock() -> None:
    assert clock_for(Environment.from_environ(BASE)) is system_clock


def test_only_the_devstack_clock_file_makes_the_clock_movable(tmp_path: Path) -> None:
    clock_file = tmp_path / "clock"
    env = Environment.from_environ({**BASE, "DEVSTACK_CLOCK_FILE": str(clock_file)})
    clock = clock_for(env)
    assert clock == OffsetClock(clock_file)

    clock_file.write_text("90000\n")  # 25 hours

    moved = clock() - datetime.now(UTC)
    assert timedelta(hours=25) - timedelta(seconds=5) < moved <= timedelta(hours=25)


def test_an_absent_empty_or_unreadable_clock_file_moves_nothing(tmp_path: Path) -> None:
    clock = OffsetClock(tmp_path / "clock")
    assert clock.offset() == timedelta(0)
    for text in ("", "soon", "1.5"):
        (tmp_path / "clock").write_text(text)
        assert clock.offset() == timedelta(0), text


def test_the_offset_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "clock").write_text(str(10**12))
    assert OffsetClock(tmp_path / "clock").offset() == timedelta(seconds=MAX_OFFSET_SECONDS)


JSON = [("Host", "127.0.0.1:3000"), ("Content-Type", "application/json")]


def _call(
    route_file: Path,
    method: str,
    body: bytes = b"",
    ip: str = "127.0.0.1",
    headers: list[tuple[str, str]] | None = None,
) -> tuple[int, dict[str, object]]:
    route = local_routes(lambda name: {}, route_file)
    answer = route(method, "/_local/clock", JSON if headers is None else headers, body, "req-1", ip)
    assert answer is not None
    return answer.status, json.loads(answer.body)


def test_the_local_stack_moves_its_clock_through_put_local_clock(tmp_path: Path) -> None:
    clock_file = tmp_path / "clock"

    status, moved = _call(clock_file, "PUT", b'{"offset_seconds": 86400}')

    assert (status, moved["offset_seconds"]) == (200, 86400)
    assert OffsetClock(clock_file).offset() == timedelta(days=1)
    assert _call(clock_file, "GET")[1]["offset_seconds"] == 86400
    assert _call(clock_file, "PUT", b'{"offset_seconds": 0}')[1]["offset_seconds"] == 0


def test_put_local_clock_refuses_what_is_not_a_bounded_whole_number_and_callers_off_loopback(tmp_path: Path) -> None:
    clock_file = tmp_path / "clock"
    for body in (b'{"offset_seconds": 1.5}', b'{"offset_seconds": true}', b"[]", b"{", b'{"offset_seconds": 1e20}'):
        assert _call(clock_file, "PUT", body)[0] == 400, body
    assert _call(clock_file, "PUT", b'{"offset_seconds": 5}', ip="10.0.0.8")[0] == 403
    assert _call(clock_file, "DELETE")[0] == 405
    assert not clock_file.exists()


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ([("Host", "127.0.0.1:3000"), ("Content-Type", "text/plain")], 415),  # a cross-site form's simple POST
        ([("Host", "127.0.0.1:3000")], 415),  # a body with no type
        ([*JSON, ("Origin", "http://evil.example")], 403),
        (
            [
                ("Host", "rebound.evil.example:3000"),
                ("Content-Type", "application/json"),
                ("Origin", "http://evil.example"),
            ],
            403,
        ),
    ],
    ids=["text-plain", "no-type", "foreign-origin", "dns-rebinding"],
)
def test_put_local_clock_refuses_what_a_web_page_of_another_origin_can_send(
    tmp_path: Path, headers: list[tuple[str, str]], status: int
) -> None:
    clock_file = tmp_path / "clock"
    assert _call(clock_file, "PUT", b'{"offset_seconds": 86400}', headers=headers)[0] == status
    assert not clock_file.exists()
    same_origin = [*JSON, ("Origin", "http://127.0.0.1:3000")]
    assert _call(clock_file, "PUT", b'{"offset_seconds": 60}', headers=same_origin)[0] == 200
