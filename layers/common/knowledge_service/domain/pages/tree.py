"""The derived numbers: one walk of a project's tree, kept per project.

The ``meta=1`` listing, backlinks, lint and stats all read one ``Tree`` built from the
page heads. A walk is kept per project and container, and used only while the project's
write generation is the one it was built at (every write adds one, from either surface,
in any container) and for at most ten seconds.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from knowledge_service.domain.pages import paths
from knowledge_service.domain.pages.describe import INDEX, LOG, finding
from knowledge_service.storage.page_store import Head, PageStore, iso

CACHE_SECONDS = 10.0
VERIFICATION_WINDOW_SECONDS = 300


def broken_link(path: str, target: str, href: str, line: int) -> dict[str, Any]:
    return finding("broken_link", path, f"The link '{href}' names {target}, which is not a page in the tree.", line)


def trust_of(head: Head) -> str:
    """Derived, never stored: the write log's note (``verified_version``) decides, not a clock."""
    verified = ((head.meta.get("fm") or {}).get("verified")) or []
    if not verified:
        return "unverified"
    if head.verified_version != head.version:
        return "edited_since_review"
    return "human_reviewed" if verified[-1].get("by") == "human" else "machine_confirmed"


def is_stale(stale_after: str | None, today: date) -> bool:
    if not stale_after:
        return False
    try:
        return today > date.fromisoformat(stale_after)
    except ValueError:
        return False


def title_of(head: Head) -> str | None:
    """A page's title: its frontmatter ``title``, else its first ``#`` heading (kept at write time;
    a page written before the heading was kept has none until its next write), else none (the
    reader names it by its file)."""
    fm = head.meta.get("fm") or {}
    return fm.get("title") or head.meta.get("heading")


@dataclass
class Tree:
    project: str
    generation: int
    used_bytes: int
    walked_at: datetime
    heads: dict[str, Head]  # the pages there now, by path
    last_change: Head | None
    _backlinks: dict[str, list[str]] = field(default_factory=dict)
    _dirs: set[str] | None = None
    _files_in: dict[str, list[Head]] = field(default_factory=dict)
    _subdirs_in: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for path in sorted(self.heads):
            for target, _href, _line in self.heads[path].meta.get("links", []):
                if target != path:
                    sources = self._backlinks.setdefault(target, [])
                    if not sources or sources[-1] != path:
                        sources.append(path)

    # -------------------------------------------------------------- shape
    def directories(self) -> set[str]:
        if self._dirs is None:
            dirs = {paths.ROOT}
            for path in self.heads:
                parent = paths.parent(path)
                while parent not in dirs:
                    dirs.add(parent)
                    parent = paths.parent(parent)
            self._dirs = dirs
        return self._dirs

    def is_target(self, target: str) -> bool:
        return target in self.heads or target in self.directories()

    def meta_row(self, head: Head, today: date) -> dict[str, Any]:
        fm = head.meta.get("fm") or {}
        verified = fm.get("verified") or []
        return {
            "path": head.path,
            "type": "file",
            "size_bytes": head.size_bytes,
            "children": None,
            "title": title_of(head),
            "description": fm.get("description"),
            "page_type": fm.get("type"),
            "status": fm.get("status"),
            "tags": fm.get("tags"),
            "trust": trust_of(head),
            "verified_by": verified[-1].get("by") if verified else None,
            "verified_at": verified[-1].get("at") if verified else None,
            "stale": is_stale(fm.get("stale_after"), today),
            "stale_after": fm.get("stale_after"),
            "last_write_by": head.last_write_by,
            "last_write_at": head.last_write_at,
            "last_write_principal": head.last_write_principal,
            "version": head.version,
        }

    def dir_row(self, directory: str, dirs: set[str]) -> dict[str, Any]:
        if not self._files_in and self.heads:
            for path, head in self.heads.items():
                self._files_in.setdefault(paths.parent(path), []).append(head)
            for d in dirs:
                if d != paths.ROOT:
                    self._subdirs_in[paths.parent(d)] = self._subdirs_in.get(paths.parent(d), 0) + 1
        files = self._files_in.get(directory, [])
        return {
            "path": directory,
            "type": "dir",
            "size_bytes": sum(h.size_bytes for h in files),
            "children": len(files) + self._subdirs_in.get(directory, 0),
        }

    def listing(self, prefix: str, meta: bool, today: date) -> list[dict[str, Any]]:
        dirs = self.directories()
        rows: list[dict[str, Any]] = []
        if meta:
            for d in sorted(d for d in dirs if paths.is_under(d, prefix)):
                rows.append(self.dir_row(d, dirs))
            for path in sorted(p for p in self.heads if paths.is_under(p, prefix)):
                rows.append(self.meta_row(self.heads[path], today))
            return sorted(rows, key=lambda r: str(r["path"]))
        for d in dirs:
            if d != paths.ROOT and paths.parent(d) == prefix and d != prefix:
                rows.append(self.dir_row(d, dirs))
        for path, head in self.heads.items():
            if paths.parent(path) == prefix:
                rows.append({"path": path, "type": "file", "size_bytes": head.size_bytes, "children": None})
        return sorted(rows, key=lambda r: str(r["path"]))

    def backlinks(self, path: str) -> list[dict[str, Any]]:
        return [{"path": source, "title": title_of(self.heads[source])} for source in self._backlinks.get(path, [])]

    # -------------------------------------------------------------- lint and stats
    def broken_links(self, path: str, links: list[list[Any]]) -> list[dict[str, Any]]:
        return [
            broken_link(path, target, href, line)
            for target, href, line in links
            if not self.is_target(target) and target != path
        ]

    def lint(self, today: date) -> list[dict[str, Any]]:
        findings: list[dict[str, Any]] = []
        if INDEX not in self.heads:
            findings.append(finding("missing_index", INDEX, "The base has no /fs/index.md."))
        if LOG not in self.heads:
            findings.append(finding("missing_log", LOG, "The base has no /fs/log.md."))
        indexed = self._index_targets()
        for path in sorted(self.heads):
            head = self.heads[path]
            page_findings = [dict(f) for f in head.meta.get("lint", [])]
            page_findings += self.broken_links(path, head.meta.get("links", []))
            if path not in (INDEX, LOG) and not self._backlinks.get(path):
                page_findings.append(finding("orphan_page", path, "No other page links to this page."))
            if indexed is not None and path not in (INDEX, LOG) and not self._covered(path, indexed):
                page_findings.append(
                    finding(
                        "missing_index_entry", path, "/fs/index.md links neither to this page nor to its directory."
                    )
                )
            row = self.meta_row(head, today)
            findings += [f | {"meta": row} for f in page_findings]
        return findings

    def _index_targets(self) -> set[str] | None:
        index = self.heads.get(INDEX)
        if index is None:
            return None
        return {str(target) for target, _href, _line in index.meta.get("links", [])}

    @staticmethod
    def _covered(path: str, targets: set[str]) -> bool:
        """Linked from the index itself, or through a directory above it (``d.md``,
        ``d/index.md`` or ``d/README.md`` covers ``d/``): a set lookup per ancestor."""
        if path in targets:
            return True
        directory = paths.parent(path)
        while directory != paths.ROOT:
            if any(f"{directory}{suffix}" in targets for suffix in ("", ".md", "/index.md", "/README.md")):
                return True
            directory = paths.parent(directory)
        return False

    def stats(self, today: date) -> dict[str, Any]:
        counts = {"unverified": 0, "machine_confirmed": 0, "edited_since_review": 0, "human_reviewed": 0}
        stale = 0
        for head in self.heads.values():
            counts[trust_of(head)] += 1
            stale += is_stale((head.meta.get("fm") or {}).get("stale_after"), today)
        needs = {k: counts[k] for k in ("unverified", "machine_confirmed", "edited_since_review")}
        return {
            "pages": len(self.heads),
            "bytes": sum(h.size_bytes for h in self.heads.values()),
            "unverified": counts["unverified"],
            "stale": stale,
            "last_change_at": self.last_change.last_write_at if self.last_change else None,
            "last_change_by": self.last_change.last_write_by if self.last_change else None,
            "last_change_principal": self.last_change.last_write_principal if self.last_change else None,
            "needs_review": needs | {"total": sum(needs.values())},
        }


_lock = threading.Lock()
_walks: dict[str, tuple[float, Tree]] = {}


def walk(store: PageStore, project: str, *, fresh: bool = False) -> Tree:
    """The project's tree: the kept walk while it is current and under ten seconds old."""
    generation, used = store.generation(project)
    now = time.monotonic()
    with _lock:
        kept = _walks.get(project)
    if not fresh and kept and kept[1].generation == generation and now - kept[0] < CACHE_SECONDS:
        return kept[1]
    heads = store.heads(project)
    now = time.monotonic()  # the walk's age counts from when its heads were read
    latest = max(heads, key=lambda h: h.last_write_at, default=None)
    tree = Tree(
        project,
        generation,
        used,
        datetime.now(UTC).replace(microsecond=0),
        {h.path: h for h in heads if h.exists},
        latest,
    )
    with _lock:
        _walks[project] = (now, tree)
    return tree


def forget_walks() -> None:
    with _lock:
        _walks.clear()


__all__ = ["VERIFICATION_WINDOW_SECONDS", "Tree", "forget_walks", "iso", "trust_of", "walk"]
