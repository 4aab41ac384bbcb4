"""The retry lane (the event contract's retry rules): which failures are retried, when, and the log they leave.

A revision's action that fails for a reason the contract retries — the knowledge base unreachable, too
slow, answering with an error of its own (a 429 is one), or the pass interrupted — reads
``retrying``; later passes for the project that claimed it try again under the contract's
backoff (1 s doubling, full jitter, capped at 5 minutes). One still failing 24 hours after its
first attempt becomes a dead letter (``retries_exhausted``). Anything else is ``failed``.
"""

from __future__ import annotations

import hashlib
import random
from datetime import datetime, timedelta

from knowledge_service.errors import KnowledgeUnreachable, UpstreamError, UpstreamTimeout
from knowledge_service.storage.dead_letter_store import Attempt

BASE_SECONDS = 1.0
CAP_SECONDS = 300.0
RETRY_HORIZON = timedelta(hours=24)
BUILD = "knowledge-service/0.4.0"

UNREACHABLE = "unreachable"
TIMEOUT = "timeout"
UPSTREAM_ERROR = "upstream_error"
INTERRUPTED = "interrupted"
RETRIES_EXHAUSTED = "retries_exhausted"


def ceiling(attempt: int) -> float:
    """The largest wait before retry ``attempt`` (1-based): min(cap, 2^(attempt-1) s)."""
    exponent = max(0, attempt - 1)
    if exponent >= 32:  # 2^32 s is far past the cap; never build the huge float
        return CAP_SECONDS
    return min(CAP_SECONDS, BASE_SECONDS * float(2**exponent))


def backoff(attempt: int, rng: random.Random | None = None) -> float:
    """Full jitter: uniformly anywhere in [0, ceiling(attempt)]."""
    return (rng or random.Random()).uniform(0.0, ceiling(attempt))  # noqa: S311 - jitter, not a secret


def classify(error: BaseException) -> str | None:
    """The retryable class of a failure, or None when retrying cannot mend it."""
    if isinstance(error, KnowledgeUnreachable):
        return UNREACHABLE
    if isinstance(error, UpstreamTimeout):
        return TIMEOUT
    if isinstance(error, UpstreamError):  # the engine's own error, a 429 and a 5xx among them
        return UPSTREAM_ERROR
    return None


def fingerprint(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def attempt(at: datetime, error_class: str, text: str) -> Attempt:
    return Attempt(at=at.isoformat(), error_class=error_class, text=text, fingerprint=fingerprint(text), build=BUILD)


def fold(attempts: list[Attempt], new: Attempt) -> list[Attempt]:
    """Append ``new``; an attempt identical to the last (class, text, build) only counts once more."""
    if attempts:
        last = attempts[-1]
        if (last.error_class, last.fingerprint, last.build) == (new.error_class, new.fingerprint, new.build):
            return [*attempts[:-1], last.model_copy(update={"count": last.count + 1, "at": new.at})]
    return [*attempts, new]


def exhausted(first_attempt_at: str, now: datetime) -> bool:
    """Has a retry been failing for 24 hours since its first attempt (exactly at t, not before)?"""
    return datetime.fromisoformat(first_attempt_at) + RETRY_HORIZON <= now
