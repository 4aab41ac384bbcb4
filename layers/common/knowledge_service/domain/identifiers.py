"""The shapes of identifiers, held before anything is sent anywhere."""

from __future__ import annotations

import re

from knowledge_service.errors import BadRequest

PROJECT_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
"""An ANTHILL project id: lower case, digits, '-' and '_', at most 63 characters."""

KNOWLEDGE_BASE = re.compile(r"^[a-z0-9_]{1,64}$")
"""A FORAGER project ref, as FORAGER mints them (docs/upstream-contract.md)."""


def project_id(value: str, field: str = "project") -> str:
    if not PROJECT_ID.match(value):
        raise BadRequest(field, "is not a project id (lower-case letters, digits, '-' and '_', at most 63).")
    return value


def knowledge_base(value: str, field: str = "knowledge_base") -> str:
    if not KNOWLEDGE_BASE.match(value):
        raise BadRequest(field, "is not a FORAGER project ref (lower-case letters, digits and '_', at most 64).")
    return value


RECORD_KINDS = {
    "ki": "statement",
    "ent": "entity",
    "src": "source",
    "cf": "disagreement",
    "mc": "possible duplicate",
    "exp": "export",
}
"""The record ids FORAGER mints: ``<prefix>_`` and 16 lower-case hex digits."""

FORAGER_WORD = re.compile(r"^[a-z0-9_]+$")
"""A FORAGER filter word: lower case, digits and underscores."""


def record_id(value: str, prefix: str, field: str = "id") -> str:
    """``value`` held to the shape of a FORAGER ``prefix`` id before anything is sent."""
    if not re.fullmatch(rf"{prefix}_[0-9a-f]{{16}}", value):
        raise BadRequest(field, f"is not a FORAGER {RECORD_KINDS[prefix]} id ({prefix}_ and 16 hex digits).")
    return value


def forager_words(value: str | None, field: str) -> list[str]:
    """A filter of FORAGER's own words, one or several comma-separated; [] when absent."""
    if value is None or value == "":
        return []
    words = [word.strip() for word in value.split(",")]
    if any(not FORAGER_WORD.match(word) for word in words):
        raise BadRequest(field, "takes FORAGER's words: lower-case letters, digits and '_', comma-separated.")
    return list(dict.fromkeys(words))
