"""Markdown links between pages, read with a CommonMark parser (markdown-it-py).

A link inside code is not a link: a fenced block, an indented code block and a code span
produce no link tokens in CommonMark, so only ``link_open`` tokens of inline text count.
Only markdown links are followed (``[[wiki]]`` links are not links to the hub); a link
with a scheme (``https:``, ``mailto:``), a protocol-relative one or a bare fragment points
outside the base. A relative target resolves from the page's directory; an absolute one
from the URL root, as the page paths do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

from knowledge_service.domain.pages import paths
from knowledge_service.errors import BadRequest

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class Link:
    target: str  # the canonical path it names, or "" when it escapes the bundle
    href: str
    line: int  # 1-based
    escapes: bool = False


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


def _hrefs(text: str) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []

    def walk(tokens: list[Token], line: int) -> None:
        for token in tokens:
            at = token.map[0] + 1 if token.map else line
            if token.type == "link_open":
                href = token.attrGet("href")
                if isinstance(href, str):
                    found.append((href, at))
            if token.children:
                walk(token.children, at)

    walk(_parser().parse(text), 1)
    return found


def links(source_path: str, text: str) -> list[Link]:
    """Every markdown link of the page at ``source_path`` that names a path in the base."""
    out: list[Link] = []
    for href, line in _hrefs(text):
        if not href or href.startswith(("#", "//")) or _SCHEME.match(href):
            continue
        target = unquote(href.split("#", 1)[0].split("?", 1)[0])
        if not target:
            continue
        resolved = resolve(source_path, target)
        if resolved is None:
            out.append(Link("", href, line, escapes=True))
        elif resolved:
            out.append(Link(resolved, href, line))
    return out


def resolve(source_path: str, target: str) -> str | None:
    """The canonical path a link names; None when it climbs above ``/fs``; "" when refused."""
    if target.startswith("/"):
        joined = target
    else:
        stack = paths.parent(source_path).split("/")[1:]  # ["fs", ...]
        for part in target.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if len(stack) <= 1:
                    return None
                stack.pop()
                continue
            stack.append(part)
        joined = "/" + "/".join(stack)
    try:
        return paths.canonical(joined)
    except BadRequest:
        return ""
