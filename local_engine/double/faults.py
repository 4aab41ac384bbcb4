"""Faults the test double can inject on the API port (never on the control port).

A :class:`Fault` is a value; :func:`make_fault` validates one and :func:`fault_response`
says what a faulted request answers. Four modes are not answers of their own: ``down``
is carried out by the server (the listening socket is closed), ``slow`` only delays the
real answer, and ``trickle`` and ``stall`` pace it (:func:`paced`): the headers at once,
then the body one byte every ``delay_seconds`` (``trickle``), or nothing at all for
``delay_seconds`` before the connection is reset (``stall``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any, TypedDict

from local_engine.serving.routing import JSON_CONTENT_TYPE, Response, error_response

FAULT_MODES: tuple[str, ...] = (
    "down",
    "slow",
    "429",
    "5xx",
    "malformed",
    "reset",
    "redirect",
    "trickle",
    "stall",
)
PACED_MODES = frozenset({"trickle", "stall"})

DEFAULT_DELAY_SECONDS = 1.0
DEFAULT_RETRY_AFTER = 1
MAX_DELAY_SECONDS = 600.0
REDIRECT_LOCATION = "http://169.254.169.254/latest/meta-data/"

# What ``malformed`` answers: a 200 whose body is the start of a project list, not JSON.
MALFORMED_BODY = b'{"projects": ['
# What ``reset`` writes before it closes the connection; the headers promise far more.
RESET_PARTIAL_BODY = b'{"projects": [{"project_ref": "falcon", "name": "Proj'
RESET_DECLARED_LENGTH = 4096

_FIELDS = ("mode", "delay_seconds", "retry_after", "path_prefix", "times")


class FaultError(ValueError):
    """A fault that cannot be set as asked."""


@dataclass(frozen=True)
class Fault:
    """One active fault.

    ``path_prefix`` limits it to API paths starting with that prefix; ``times`` makes
    it answer that many matching requests and then clear itself (``None``: until
    cleared).
    """

    mode: str
    delay_seconds: float = DEFAULT_DELAY_SECONDS
    retry_after: int = DEFAULT_RETRY_AFTER
    path_prefix: str | None = None
    times: int | None = None

    def applies_to(self, path: str) -> bool:
        if not (path == "/api" or path.startswith("/api/")):
            return False
        return self.path_prefix is None or path.startswith(self.path_prefix)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _delay(value: float) -> float:
    """``delay_seconds`` as given (the control port's JSON may hold anything: checked, not trusted)."""
    if not _is_number(value) or not math.isfinite(value):
        raise FaultError("delay_seconds must be a number.")
    if not 0 <= value <= MAX_DELAY_SECONDS:
        raise FaultError(f"delay_seconds must be 0 to {MAX_DELAY_SECONDS:g}.")
    return float(value)


def _retry_after(value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise FaultError("retry_after must be a whole number of seconds.")
    if value < 0:
        raise FaultError("retry_after must not be negative.")
    return value


class FaultOptions(TypedDict, total=False):
    """What a fault takes beside its mode (:func:`make_fault`), as ``Double.set_fault`` passes it on."""

    delay_seconds: float | None
    retry_after: int | None
    path_prefix: str | None
    times: int | None


def make_fault(
    mode: str | int | None,
    delay_seconds: float | None = None,
    retry_after: int | None = None,
    path_prefix: str | None = None,
    times: int | None = None,
) -> Fault | None:
    """Validate and build a fault; ``mode=None`` means no fault."""
    if mode is None:
        return None
    if isinstance(mode, int) and not isinstance(mode, bool):
        mode = str(mode)
    if not isinstance(mode, str) or mode not in FAULT_MODES:
        raise FaultError(f"mode must be one of {', '.join(FAULT_MODES)} or null.")

    delay = DEFAULT_DELAY_SECONDS if delay_seconds is None else _delay(delay_seconds)
    retry = DEFAULT_RETRY_AFTER if retry_after is None else _retry_after(retry_after)

    if path_prefix is not None and (not isinstance(path_prefix, str) or not path_prefix.startswith("/api")):
        raise FaultError("path_prefix must be a path starting with /api.")

    if times is not None and (not isinstance(times, int) or isinstance(times, bool) or times < 1):
        raise FaultError("times must be a whole number of at least 1.")

    if mode == "down" and (path_prefix is not None or times is not None):
        raise FaultError("down closes the whole API port: no path_prefix or times.")

    return Fault(
        mode=mode,
        delay_seconds=delay,
        retry_after=retry,
        path_prefix=path_prefix,
        times=times,
    )


def fault_from_json(payload: Any) -> Fault | None:
    """Build a fault from the control port's ``POST /faults`` body."""
    if not isinstance(payload, dict):
        raise FaultError("The body must be a JSON object.")
    unknown = sorted(set(payload) - set(_FIELDS))
    if unknown:
        raise FaultError(f"Unknown field(s): {', '.join(unknown)}.")
    if "mode" not in payload:
        raise FaultError("mode is required (null clears the fault).")
    return make_fault(
        payload["mode"],
        delay_seconds=payload.get("delay_seconds"),
        retry_after=payload.get("retry_after"),
        path_prefix=payload.get("path_prefix"),
        times=payload.get("times"),
    )


def paced(fault: Fault, response: Response) -> Response:
    """The real answer, paced as a ``trickle`` or ``stall`` fault says."""
    if fault.mode == "trickle":
        return replace(response, trickle_seconds=fault.delay_seconds)
    return replace(response, stall_seconds=fault.delay_seconds)


def fault_response(fault: Fault) -> Response | None:
    """The answer a faulted request gets, or ``None`` for ``slow`` / ``down`` and the paced modes."""
    if fault.mode == "429":
        return error_response(
            429,
            "rate_limited",
            "Too many requests. Try again after the time in Retry-After.",
            [("Retry-After", str(fault.retry_after))],
        )
    if fault.mode == "5xx":
        return error_response(500, "internal_error", "The engine failed to answer.")
    if fault.mode == "malformed":
        return Response(200, body=MALFORMED_BODY, content_type=JSON_CONTENT_TYPE)
    if fault.mode == "reset":
        return Response(
            200,
            body=RESET_PARTIAL_BODY,
            content_type=JSON_CONTENT_TYPE,
            declared_length=RESET_DECLARED_LENGTH,
            abort=True,
        )
    if fault.mode == "redirect":
        return Response(302, headers=[("Location", REDIRECT_LOCATION)], content_type=None)
    return None
