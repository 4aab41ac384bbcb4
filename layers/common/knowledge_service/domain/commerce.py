"""The commercial gate: which catalog capabilities a subscription refuses.

Base capabilities (``platform.project.manage``, ``knowledge.read``, ``knowledge.export``) are
written down, not paywalls: no subscription state refuses them. Paid ones (Forager's
``forager.knowledge.curate``) are refused with 402 when the colony is enrolled (``active`` or
``lapsed``) and its subscription does not carry them; an unenrolled colony is refused nothing.

The subscription is a record in the config table (``pk=subscription, sk=installation``:
``state`` and ``capabilities``) that an operator sets with ``knowledge-admin subscription
set``; a container reads it once and keeps it for :data:`SUBSCRIPTION_CACHE_SECONDS`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from knowledge_service.errors import PaymentRequired
from knowledge_service.models import Subscription, SubscriptionRecord

__all__ = ["CachedSubscription", "Subscription", "SubscriptionRecord", "require_capability"]

BASE_CAPABILITIES = frozenset({"platform.project.manage", "knowledge.read", "knowledge.export"})
PAID_CAPABILITIES = frozenset({"forager.knowledge.curate"})
SUBSCRIPTION_CACHE_SECONDS = 30.0


def require_capability(capability: str, subscription: SubscriptionRecord) -> None:
    """402 when an enrolled colony's subscription does not carry a paid ``capability``."""
    if capability in BASE_CAPABILITIES:
        return
    if capability not in PAID_CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r}")
    if subscription.state is Subscription.UNENROLLED or subscription.carries(capability):
        return
    raise PaymentRequired(f"This colony's Forager subscription does not carry {capability}.")


class CachedSubscription:
    """The subscription record, read at most once per ``ttl`` seconds in this container."""

    def __init__(
        self,
        read: Callable[[], SubscriptionRecord],
        ttl: float = SUBSCRIPTION_CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read = read
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._value: SubscriptionRecord | None = None
        self._read_at = 0.0

    def current(self) -> SubscriptionRecord:
        with self._lock:
            now = self._clock()
            if self._value is None or not 0 <= now - self._read_at < self._ttl:  # stale, or the clock moved back
                self._value = self._read()
                self._read_at = now
            return self._value

    def forget(self) -> None:
        with self._lock:
            self._value = None
