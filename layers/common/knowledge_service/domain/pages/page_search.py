"""A project's page search: the snapshot, the overlay of rows written since, the compactor.

The index of a project is an FTS5 snapshot in S3 (``storage/search_store.py``) whose watermark
is the newest change marker folded into it, plus every change marker written since, whose
paths' search rows a query reads (consistent reads, the same items the write transaction
landed) and applies over the snapshot inside a transaction it rolls back. So a page is findable
as soon as its write answers, a deleted page is gone as soon as its delete answers, and a write
costs two more items in its own transaction whatever the size of the base.

The compactor folds the overlay into a new snapshot off the request path (the bus rule on the
pages signals, ``edge/bus/search_compaction.py``) once it holds :data:`COMPACT_AFTER` settled
markers,
under a lease (one writer per project) and a conditional swap of the pointer. It folds only
markers older than :data:`SETTLE_SECONDS`: a row id is taken from the writer's clock before its
transaction commits, so a marker newer than that could still appear below the new watermark.
Every path it reads it writes as it is now, so no snapshot holds text older than the last
compaction's read of a changed page (``DELETE kb/versions`` compacts at once, for that reason).
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from knowledge_service.domain.pages.search import Index, Query, SearchRow
from knowledge_service.storage.search_store import SearchStore, Snapshot

COMPACT_AFTER = 256
"""Markers in the overlay at which the compactor writes a new snapshot: a query reads at most
about this many rows (plus whatever was written since the compactor last ran)."""
SETTLE_SECONDS = 60
LEASE_SECONDS = 300

_OPEN: dict[str, tuple[str | None, Index]] = {}
"""Per project, the index this container has open: (snapshot key, index), least recently used
first. A container answers one request at a time (Lambda's model), so one open index a project
is enough, and at most ``_OPEN_LIMIT`` projects' are kept open."""
_OPEN_LIMIT = 8


def _row_id_at(epoch_seconds: float) -> str:
    return f"{int(epoch_seconds * 1_000_000):017d}"


class PageSearch:
    def __init__(self, store: SearchStore, project: str) -> None:
        self.store = store
        self.project = project

    # ------------------------------------------------------------------ the query
    def _index(self, snapshot: Snapshot | None) -> Index | None:
        key = snapshot.key if snapshot else None
        cached = _OPEN.pop(self.project, None)
        if cached is not None and cached[0] == key:
            _OPEN[self.project] = cached  # now the most recently used
            return cached[1]
        if key is None:
            index = Index.memory()
        else:
            file = self.store.local_copy(key)
            if file is None:  # replaced meanwhile: the caller reads the pointer again
                if cached is not None:
                    cached[1].close()
                return None
            index = Index.open(file)
        if cached is not None:
            cached[1].close()
        _OPEN[self.project] = (key, index)
        while len(_OPEN) > _OPEN_LIMIT:
            _OPEN.pop(next(iter(_OPEN)))[1].close()
        return index

    def overlay(self, watermark: str) -> tuple[list[tuple[str, SearchRow | None]], int]:
        changes = self.store.changes_after(self.project, watermark)
        paths = {path for _, path in changes}
        rows = self.store.rows(self.project, paths)
        return [(p, SearchRow.of(rows[p]) if p in rows else None) for p in sorted(paths)], len(changes)

    def search(self, query: Query) -> dict[str, Any]:
        for _attempt in range(3):  # a compaction may replace the snapshot between pointer and object
            snapshot = self.store.pointer(self.project)
            index = self._index(snapshot)
            if index is not None:
                break
        else:
            from knowledge_service.errors import InternalError

            raise InternalError("The search index's snapshot kept moving; try again.")
        overlay, _markers = self.overlay(snapshot.watermark if snapshot else "")
        found = index.search(query, overlay)
        end = query.offset + len(found.hits)
        return {
            "query": query.text,
            "hits": found.hits,
            "total": found.total,
            "offset": query.offset,
            "limit": query.limit,
            "next_offset": end if end < found.total and found.hits else None,
        }

    # ------------------------------------------------------------------ the compactor
    def pending(self) -> int:
        """How many change markers wait in the overlay (counted up to ``COMPACT_AFTER``)."""
        snapshot = self.store.pointer(self.project)
        return len(self.store.changes_after(self.project, snapshot.watermark if snapshot else "", COMPACT_AFTER))

    def compact(self, *, force: bool = False, now: float | None = None) -> dict[str, Any]:
        """Fold the overlay into a new snapshot (when it holds ``COMPACT_AFTER`` markers, or
        ``force``); what it did."""
        at = now if now is not None else time.time()
        holder = secrets.token_hex(8)
        if not self.store.lease(self.project, holder, LEASE_SECONDS, at):
            return {"compacted": False, "reason": "another compactor holds the lease"}
        try:
            return self._compact(force, at)
        finally:
            self.store.release(self.project, holder)

    def _compact(self, force: bool, at: float) -> dict[str, Any]:
        old = self.store.pointer(self.project)
        watermark = old.watermark if old else ""
        changes = self.store.changes_after(self.project, watermark)
        cutoff = _row_id_at(at - SETTLE_SECONDS)
        folded = [row_id for row_id, _ in changes if row_id <= cutoff]
        if not force and len(folded) < COMPACT_AFTER:  # a burst's unsettled markers wait for a later signal
            return {"compacted": False, "reason": "the overlay is small", "overlay": len(changes)}
        new_watermark = max(folded) if folded else watermark
        paths = {path for _, path in changes}
        rows = self.store.rows(self.project, paths)
        work = Path(tempfile.mkdtemp(prefix="search-compact-"))
        try:
            file = work / "index.sqlite"
            if old is not None:
                source = self.store.local_copy(old.key)
                if source is None:
                    return {"compacted": False, "reason": "the snapshot moved"}
                shutil.copyfile(source, file)
            index = Index.open(file)
            try:
                index.commit((p, SearchRow.of(rows[p]) if p in rows else None) for p in sorted(paths))
                count = len(index)
            finally:
                index.close()
            key = self.store.upload(self.project, file, new_watermark)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        new = Snapshot(key, new_watermark, count)
        if not self.store.swap(self.project, old, new):
            self.store.drop_object(key)
            return {"compacted": False, "reason": "another compactor swapped first"}
        if old is not None:
            self.store.drop_object(old.key)
        self.store.drop_changes(self.project, folded)
        return {"compacted": True, "rows": count, "folded": len(folded), "watermark": new_watermark}


__all__ = ["COMPACT_AFTER", "SETTLE_SECONDS", "PageSearch"]
