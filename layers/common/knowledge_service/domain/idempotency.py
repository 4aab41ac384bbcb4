"""The key a caller's ``Idempotency-Key`` stands for: scoped to the caller and the route.

A caller chooses its own keys, and two callers may choose the same one. The key is
therefore never used as it came: the record that answers a replay and the key FORAGER
sees are both derived from who sent it, to which route, and the key itself. Two callers
sending one key are two intents; one caller sending it again is a replay of one.
"""

from __future__ import annotations

import hashlib
import json

SCOPED_KEY_PREFIX = "ks1-"


def scoped_key(principal_name: str, route: str, key: str) -> str:
    """SHA-256 over (principal, route, key), unambiguously encoded: ``ks1-`` + 64 hex digits.

    The parts are encoded as a JSON array, so no choice of names and keys can make two
    different triples meet (``"a:b" + "c"`` is not ``"a" + "b:c"``). The result is 68
    visible ASCII characters, inside any ``Idempotency-Key`` limit FORAGER keeps.
    """
    encoded = json.dumps([principal_name, route, key], ensure_ascii=True, separators=(",", ":"))
    return SCOPED_KEY_PREFIX + hashlib.sha256(encoded.encode("ascii")).hexdigest()
