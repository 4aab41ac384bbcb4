"""The two laws the verbs hold, as pure functions (property-tested on their own).

**INV-EPI, the evidence gate.** An assertion is stored only when its evidence quote is an
exact substring of its capture's body. Normalisation: *none*. The quote and the body are
compared code point for code point, as stored: NFC on both sides would accept a quote that
is not, byte for byte, in the document a reader opens, and the specification asks for an
EXACT substring. An empty quote is refused by the input model (it is a substring of
everything, so it is evidence of nothing).

**The supersede walk.** ``knowledgeId`` may point at ``supersededById`` only if following
the successor's forward pointers never reaches ``knowledgeId`` (a cycle), and the
successor differs from the target. Pointers are only ever set, never changed (forward
only), so the chain the walk saw can grow only at its end: the write checks that end is
still unpointed in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

MAX_CHAIN = 1_000
"""Hops the walk follows before it gives up (and the supersede is refused)."""


def quote_is_evidence(body: str, quote: str) -> bool:
    """INV-EPI: the quote is a non-empty, exact substring of the body."""
    return bool(quote) and quote in body


@dataclass(frozen=True)
class Walk:
    """What the supersede walk found from the successor forward."""

    closes_cycle: bool
    end: str | None  # the chain's last node (no forward pointer), or None when cut short
    too_long: bool = False


def walk_forward(target: str, successor: str, next_of: Callable[[str], str | None]) -> Walk:
    """Follow ``successor``'s forward pointers; a cycle if they reach ``target``.

    ``next_of(id)`` is the id's ``supersededById`` (None at the chain's end). A chain that
    already loops without reaching ``target`` cannot exist (every write ran this walk) but is
    still reported as a cycle rather than followed forever.
    """
    if successor == target:
        return Walk(closes_cycle=True, end=None)
    seen = {successor}
    node = successor
    for _ in range(MAX_CHAIN):
        forward = next_of(node)
        if forward is None:
            return Walk(closes_cycle=False, end=node)
        if forward == target or forward in seen:
            return Walk(closes_cycle=True, end=None)
        seen.add(forward)
        node = forward
    return Walk(closes_cycle=False, end=None, too_long=True)
