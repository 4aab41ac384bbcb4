"""What every format renders: an archive's members, and the JSON its records are written as."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Member:
    """One entry of an archive: its name inside it and its bytes."""

    name: str
    data: bytes


_LINE = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode
_VALUE = json.JSONEncoder(ensure_ascii=False).encode
"""Encoders made once (``json.dumps`` with arguments makes one a call)."""


def line(record: dict[str, Any]) -> bytes:
    """A record as one JSON line: keys sorted, no spaces, UTF-8."""
    return (_LINE(record) + "\n").encode("utf-8")
