"""Secrets never leak: every log line and every response body the suite produces is
scanned for the FORAGER credential and for bearer tokens.

- Response bodies: the unit tier's ``Api.call`` and the e2e tier's HTTP clients record
  what they were answered (``record``).
- Log lines: what pytest captured for each test (stdout, stderr, logging), and each local
  stack's own log (``scan_stack_log``, at the stack's teardown).
- What counts: any registered FORAGER credential (``register``), and anything shaped like
  a bearer token (``ks_`` and 43 characters). A test marked ``prints_tokens`` (the admin
  command prints a new token once, on stdout, by design) is exempt for its stdout only.

A leak fails the test that produced it.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

BEARER = re.compile(r"ks_[A-Za-z0-9_-]{43}")
_LOG_LINE = re.compile(r"^(\{|\d{4}-\d{2}-\d{2} )")  # structured function logs and the stack's own logger

_lock = threading.Lock()
_credentials: set[str] = set()
_recorded: list[str] = []


def register(credential: str) -> None:
    with _lock:
        _credentials.add(credential)


def record(text: str) -> None:
    with _lock:
        _recorded.append(text)


def drain() -> list[str]:
    with _lock:
        texts = list(_recorded)
        _recorded.clear()
    return texts


def leaks(text: str) -> list[str]:
    """What in ``text`` is a secret (shown shortened, so the report does not leak it again)."""
    with _lock:
        credentials = set(_credentials)
    found = [f"FORAGER credential {c[:4]}…" for c in credentials if c and c in text]
    found += [f"bearer token {m[:6]}…" for m in BEARER.findall(text)]
    return found


def scan_stack_log(path: Path) -> list[str]:
    """The local stack's log, less its start-up banner (which shows the admin token by design)."""
    if not path.exists():
        return []
    found: list[str] = []
    for line in path.read_text(errors="replace").splitlines():
        if _LOG_LINE.match(line):
            found += leaks(line)
    return found
