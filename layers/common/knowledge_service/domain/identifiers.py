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
