"""The product clock: a plain injectable ``Callable[[], datetime]`` (UTC), ``system_clock`` in
every deployment.

The local stack (``devstack``) alone sets ``DEVSTACK_CLOCK_FILE`` in the functions' environment;
it is read through :class:`~knowledge_service.environment.Environment` like every other setting,
and ``template.yaml`` never declares it. When it is set, the clock is :class:`OffsetClock`: the
wall clock plus the whole number of seconds the file holds (absent, empty or unreadable: 0), read
on every call — so an end-to-end test moves time (24 hours of retries, 90 days of retention) by
writing the file, instead of waiting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from knowledge_service.environment import Environment

Clock = Callable[[], datetime]

MAX_OFFSET_SECONDS = 10 * 366 * 24 * 3600  # ten years either way is more than any rule needs


def system_clock() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class OffsetClock:
    """The wall clock moved by the seconds in ``path`` (the local stack's movable clock)."""

    path: Path

    def offset(self) -> timedelta:
        try:
            seconds = int(self.path.read_text(encoding="utf-8").strip() or "0")
        except (OSError, ValueError):
            return timedelta(0)
        return timedelta(seconds=max(-MAX_OFFSET_SECONDS, min(MAX_OFFSET_SECONDS, seconds)))

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset()


def clock_for(env: Environment) -> Clock:
    """The clock this container runs on: the system's, or — only under the local stack — the
    movable one its ``DEVSTACK_CLOCK_FILE`` names."""
    return OffsetClock(Path(env.devstack_clock_file)) if env.devstack_clock_file else system_clock
