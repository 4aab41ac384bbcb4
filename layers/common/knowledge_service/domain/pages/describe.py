"""What the hub reads from a page's bytes at write time: frontmatter, links, per-write lint.

Kept on the page's head, so the tree walk that serves ``meta=1``, backlinks, lint and
stats reads heads only, never the bytes.
"""

from __future__ import annotations

import re
from typing import Any

from knowledge_service.domain.pages import frontmatter, links, paths
from knowledge_service.domain.pages.frontmatter import BlockState

INDEX = f"{paths.ROOT}/index.md"
LOG = f"{paths.ROOT}/log.md"
MAX_LINKS_KEPT = 2000  # a head stays well inside DynamoDB's item size


def finding(code: str, path: str, message: str, line: int | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"code": code, "path": path, "message": message}
    if line is not None:
        found["line"] = line
    return found


HEADING = re.compile(r"^#[ \t]+(.+?)[ \t]*#*[ \t]*$")
FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
HEADING_MAX = 200


def first_heading(text: str) -> str | None:
    """The page's first ``#`` heading (outside code fences, after the frontmatter): the title a page
    without a frontmatter ``title`` is known by, as Outline and Wiki.js show it."""
    lines = text.splitlines()
    start = 0
    if lines and lines[0].rstrip() == "---":
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), 0)
    fenced = False
    for line in lines[start:]:
        if FENCE.match(line):
            fenced = not fenced
            continue
        found = None if fenced else HEADING.match(line)
        if found:
            heading = " ".join(found.group(1).replace("`", "").replace("**", "").split())
            return heading[:HEADING_MAX] or None
    return None


def describe(path: str, text: str) -> dict[str, Any]:
    """The head's ``meta``: the frontmatter the reader read, the links, the per-write lint."""
    block = frontmatter.read(text)
    lint: list[dict[str, Any]] = []
    fm: dict[str, Any] | None = None
    if block.state is BlockState.NONE:
        minimum = "okf_version" if path == INDEX else "type"
        lint.append(
            finding(
                "missing_frontmatter",
                path,
                f"The page has no frontmatter: add a block opening with '---' on the first line that sets "
                f"{minimum} (for example '---\\n{minimum}: {'1' if path == INDEX else 'Concept'}\\n---').",
            )
        )
    elif block.state is BlockState.UNPARSED:
        lint.append(
            finding(
                "unparsed_frontmatter",
                path,
                f"The frontmatter cannot be read safely: {block.problem}. A review or a promote of this page is "
                f"refused until you {block.remedy}.",
                1,
            )
        )
    else:
        fm = {
            "type": block.text("type"),
            "title": block.text("title"),
            "description": block.text("description"),
            "status": block.text("status"),
            "tags": block.tags(),
            "stale_after": block.text("stale_after"),
            "okf_version": block.text("okf_version"),
            "verified": [{"by": e.get("by", ""), "at": e.get("at", "")} for e in block.entries("verified")],
        }
        if not fm["type"] and path != INDEX:
            lint.append(finding("missing_type", path, "The frontmatter sets no type (Concept, Guide, Runbook, ...)."))
        if fm["okf_version"] is not None and path != INDEX:
            lint.append(finding("okf_version_misplaced", path, "Only /fs/index.md may carry okf_version."))
    found = links.links(path, text)
    for link in found:
        if link.escapes:
            lint.append(finding("link_escapes_bundle", path, f"The link '{link.href}' climbs above /fs.", link.line))
    kept = [[link.target, link.href, link.line] for link in found if not link.escapes][:MAX_LINKS_KEPT]
    return {"fm_state": block.state.value, "fm": fm, "links": kept, "lint": lint, "heading": first_heading(text)}
