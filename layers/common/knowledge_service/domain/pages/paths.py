"""Canonical page paths: one spelling per page, never above ``/fs``.

A page path is ``/fs/<directories>/<name>``. In a URL the leading slash is dropped and
the namespace may be left out. ``.``, ``..``, empty components and a trailing slash
resolve as a filesystem resolves them (relative to the URL root, so ``..`` can never
climb above ``/fs``); a first component of ``kv`` (after resolution) is the key-value
namespace, which a knowledge base does not have. Refused with ``invalid_argument``:
``/kv``, a control character (NUL, a line break, a tab), a backslash, a lone surrogate,
and a canonical path over 512 bytes.
"""

from __future__ import annotations

import unicodedata

from knowledge_service.errors import BadRequest

ROOT = "/fs"
MAX_PATH_BYTES = 512
MAX_RAW_PATH_CHARS = 8192  # bounded before it is parsed: no spelling of a 512-byte path is longer


def refuse(problem: str) -> BadRequest:
    return BadRequest("path", problem, code="invalid_argument")


def canonical(raw: str) -> str:
    """The canonical path ``raw`` names (a page or a directory), or ``invalid_argument``."""
    if len(raw) > MAX_RAW_PATH_CHARS:
        raise refuse(f"is longer than {MAX_PATH_BYTES} bytes.")
    for char in raw:
        category = unicodedata.category(char)
        if category == "Cc":
            raise refuse("contains a control character.")
        if category == "Cs":
            raise refuse("is not valid text.")
    if "\\" in raw:
        raise refuse("contains a backslash.")
    stack: list[str] = []
    for part in raw.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if stack:
                stack.pop()
            continue
        stack.append(part)
    if stack and stack[0] == "kv":
        raise refuse("names the key-value namespace (/kv), which a knowledge base does not have.")
    if stack and stack[0] == "fs":
        stack = stack[1:]
    path = "/".join([ROOT, *stack])
    if len(path.encode("utf-8")) > MAX_PATH_BYTES:
        raise refuse(f"is longer than {MAX_PATH_BYTES} bytes.")
    return path


def page_path(raw: str) -> str:
    """The canonical path of a page: ``/fs`` itself is the root directory, not a page."""
    path = canonical(raw)
    if path == ROOT:
        raise refuse("names the root directory, not a page.")
    return path


def parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or ROOT


def is_under(path: str, directory: str) -> bool:
    """True when ``path`` is inside ``directory`` (at any depth), not the directory itself."""
    return path.startswith(directory.rstrip("/") + "/")
