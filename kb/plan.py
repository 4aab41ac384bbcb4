"""The import's three-way plan, a pure function: folder, hub and manifest -> one line a page.

Each argument maps a canonical page path to its version (``sha256:<hex>`` of the bytes):
what the folder holds, what the hub holds now, and what the manifest says the export
wrote. The plan never writes a page unless the hub holds exactly the version the
write is guarded with (``absent`` for a create, the manifest's version for an update
or a delete), so no hub change is ever overwritten without its version.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

ABSENT = "absent"


class Kind(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    HUB_NEWER = "hub newer"
    DELETE = "delete"
    KEEP = "keep"
    CONFLICT = "conflict"
    ALREADY_GONE = "already gone"
    NOT_ATTEMPTED = "not attempted"


WRITES = (Kind.CREATE, Kind.UPDATE, Kind.DELETE)


@dataclass(frozen=True)
class Step:
    kind: Kind
    path: str
    reason: str = ""
    guard: str | None = None  # the if_version a write or delete carries

    def line(self, dry_run: bool = False) -> str:
        if self.kind is Kind.ALREADY_GONE:
            return f"delete {self.path}: already gone"
        if self.kind is Kind.NOT_ATTEMPTED:
            return f"not attempted {self.path}"
        if self.kind is Kind.HUB_NEWER:
            return f"hub newer {self.path}: left as is"
        word = f"would {self.kind.value}" if dry_run and self.kind in WRITES else self.kind.value
        return f"{word} {self.path}: {self.reason}" if self.reason else f"{word} {self.path}"


def plan(
    folder: Mapping[str, str],
    hub: Mapping[str, str],
    manifest: Mapping[str, str],
    prune: bool,
) -> list[Step]:
    """One step per page that gets a line, in path order (pages in step get none)."""
    steps: list[Step] = []
    for path in sorted(set(folder) | set(manifest)):
        step = _step(path, folder.get(path), hub.get(path), manifest.get(path), prune)
        if step is not None:
            steps.append(step)
    return steps


def _step(path: str, f: str | None, h: str | None, m: str | None, prune: bool) -> Step | None:
    if f is not None:
        if f == h:
            return None
        if m is None:
            if h is None:
                return Step(Kind.CREATE, path, guard=ABSENT)
            return Step(Kind.CONFLICT, path, "the hub has this page with other bytes and the export did not")
        if f == m:
            return Step(Kind.HUB_NEWER, path)
        if h == m:
            return Step(Kind.UPDATE, path, guard=m)
        if h is None:
            return Step(Kind.CONFLICT, path, "changed in the folder and deleted on the hub")
        return Step(Kind.CONFLICT, path, "changed in the folder and on the hub")
    if m is None or h is None:  # never exported, or gone from both: nothing to say
        return None
    if not prune:
        return Step(Kind.KEEP, path, "not in the folder; --prune deletes it from the hub")
    if h == m:
        return Step(Kind.DELETE, path, guard=m)
    return Step(Kind.CONFLICT, path, "removed from the folder and changed on the hub")


def summary(steps: list[Step], dry_run: bool = False) -> str:
    counts = Counter(s.kind for s in steps)
    parts = []
    for kind in Kind:
        label = f"would {kind.value}" if dry_run and kind in WRITES else kind.value
        parts.append(f"{counts.get(kind, 0)} {label}")
    return ", ".join(parts)


def next_manifest(
    folder: Mapping[str, str],
    hub: Mapping[str, str],
    manifest: Mapping[str, str],
    done: Mapping[str, Step],
) -> dict[str, str]:
    """The manifest after an import: the version of every page written or found in step;
    a ``hub newer``, ``keep``, conflict or unattempted page keeps its exported version;
    a page deleted, already gone, or gone from both sides is dropped."""
    out: dict[str, str] = {}
    for path in sorted(set(folder) | set(manifest)):
        f, h, m = folder.get(path), hub.get(path), manifest.get(path)
        step = done.get(path)
        if step is not None and step.kind in (Kind.CREATE, Kind.UPDATE) and f is not None:
            out[path] = f
        elif step is not None and step.kind in (Kind.DELETE, Kind.ALREADY_GONE):
            continue
        elif f is not None and f == h:
            out[path] = f
        elif m is not None and (f is not None or h is not None):
            out[path] = m
    return out
