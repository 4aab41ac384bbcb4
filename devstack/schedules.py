"""The template's schedules, ticking in daemon threads like EventBridge rules.

``rate(N minute|minutes|hour|hours|day|days)`` ticks every N units (the first tick one
interval after start, as a new rule does). ``cron(...)`` is not evaluated locally: it is
logged and left to ``POST /_local/schedules/<FunctionLogicalId>/run``, unless an override
interval (``DEVSTACK_SCHEDULE_SECONDS``) makes every schedule tick at that pace.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import Any

from devstack.events import rule_arn, scheduled_event
from devstack.template import Schedule, Template

log = logging.getLogger("devstack.schedules")

_RATE = re.compile(r"^rate\(\s*(\d+)\s+(minute|minutes|hour|hours|day|days)\s*\)$")
_UNIT_SECONDS = {"minute": 60, "hour": 3600, "day": 86400}


class UnsupportedSchedule(ValueError):
    pass


def rate_seconds(expression: str) -> int:
    """Seconds between ticks of a ``rate(...)`` expression; ``UnsupportedSchedule`` otherwise."""
    match = _RATE.match(expression.strip())
    if not match:
        raise UnsupportedSchedule(f"{expression!r} is not rate(N minute(s)|hour(s)|day(s))")
    value = int(match.group(1))
    if value <= 0:
        raise UnsupportedSchedule(f"{expression!r}: the rate must be positive")
    return value * _UNIT_SECONDS[match.group(2).rstrip("s")]


Invoke = Callable[[str, dict[str, Any]], Any]


class Scheduler:
    """One daemon thread per schedule; ``run_now`` runs a function's schedule at once."""

    def __init__(self, template: Template, invoke: Invoke, *, override_seconds: float | None = None):
        self._template = template
        self._invoke = invoke
        self._override = override_seconds
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.schedules = template.schedules()

    def rule_arn(self, schedule: Schedule) -> str:
        # SAM names the rule <stack>-<Function><Event>-<suffix>; the local stack drops the suffix
        name = f"{self._template.stack_name}-{schedule.function}{schedule.event}"
        return rule_arn(name, region=self._template.region, account_id=self._template.account_id)

    def functions(self) -> list[str]:
        return sorted({s.function for s in self.schedules})

    def run_now(self, function: str) -> Any:
        """Invoke ``function``'s (first) schedule now; its handler's answer. ``KeyError`` if it has none."""
        schedule = next((s for s in self.schedules if s.function == function), None)
        if schedule is None:
            raise KeyError(function)
        return self._tick(schedule)

    def _tick(self, schedule: Schedule) -> Any:
        event = scheduled_event(
            self.rule_arn(schedule), region=self._template.region, account_id=self._template.account_id
        )
        return self._invoke(schedule.function, event)

    def interval(self, schedule: Schedule) -> float | None:
        if self._override is not None:
            return self._override
        try:
            return float(rate_seconds(schedule.expression))
        except UnsupportedSchedule:
            return None

    def start(self) -> None:
        for schedule in self.schedules:
            interval = self.interval(schedule)
            if interval is None:
                log.warning(
                    "%s: %s is not run on a timer locally (only rate(...) is); run it with "
                    "POST /_local/schedules/%s/run",
                    schedule.function,
                    schedule.expression,
                    schedule.function,
                )
                continue
            log.info("%s: %s ticks every %gs", schedule.function, schedule.expression, interval)
            thread = threading.Thread(
                target=self._loop, args=(schedule, interval), name=f"devstack-schedule-{schedule.function}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def _loop(self, schedule: Schedule, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                result = self._tick(schedule)
                log.info("%s: scheduled run answered %s", schedule.function, _short(result))
            except Exception:
                log.exception("%s: scheduled run failed", schedule.function)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)
        self._threads.clear()


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
