"""The commercial gate: which catalog capabilities a subscription state refuses.

Base capabilities (``platform.project.manage``, ``knowledge.read``, ``knowledge.export``) are
written down, not paywalls: no subscription state refuses them. Paid ones (Forager's
``forager.knowledge.curate``) are refused with 402 when the colony is enrolled and its
subscription does not carry them; an unenrolled colony is refused nothing.
"""

from __future__ import annotations

from enum import StrEnum

from knowledge_service.errors import PaymentRequired

BASE_CAPABILITIES = frozenset({"platform.project.manage", "knowledge.read", "knowledge.export"})
PAID_CAPABILITIES = frozenset({"forager.knowledge.curate"})


class Subscription(StrEnum):
    UNENROLLED = "unenrolled"
    ACTIVE = "active"
    LAPSED = "lapsed"


def require_capability(capability: str, subscription: Subscription) -> None:
    if capability in BASE_CAPABILITIES or subscription is not Subscription.LAPSED:
        return
    if capability not in PAID_CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r}")
    raise PaymentRequired(f"This colony's Forager subscription does not carry {capability}.")
