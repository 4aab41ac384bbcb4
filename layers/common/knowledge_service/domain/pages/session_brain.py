"""A mission's session brain: the agent's own scratch space, the brain tools' default store.

The session is the mission: its id is the mission id, so an entry written in one mission is
never read from another (another mission of the same project has a brain of its own), and it
is reached only through a live mission's credential, so the brain dies with the mission (its
end or its expiry refuses every call before a tool runs). What is worth keeping is promoted
into the project's knowledge base (``brain_promote``); the knowledge base is reached only with
``store: "project"``.

Paths are canonical page paths (``/fs/...``), read and written the way pages are; a value is
text of at most 4 MiB (the brain's own limit: the page limit applies only to the knowledge
base), with no frontmatter rules, lint, history or signal.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from knowledge_service.domain.pages import paths
from knowledge_service.errors import BadRequest, NotFound
from knowledge_service.storage.page_store import PageStore

STORE = "session"


@dataclass(frozen=True)
class SessionBrain:
    store: PageStore
    session_id: str
    expires_at: datetime | None = None
    """The mission's expiry, which every entry carries as its TTL."""

    def get(self, raw_path: str) -> dict[str, Any]:
        path = paths.page_path(raw_path)
        value = self.store.brain_get(self.session_id, path)
        if value is None:
            raise NotFound(f"This mission's session brain has no entry {path}.")
        return {"path": path, "store": STORE, "content": value.decode("utf-8", "replace"), "size_bytes": len(value)}

    def put(self, raw_path: str, content: str) -> dict[str, Any]:
        path = paths.page_path(raw_path)
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:
            raise BadRequest("content", "is not text: it holds a lone UTF-16 surrogate.") from None
        self.store.brain_put(self.session_id, path, data, self.expires_at)
        return {"ok": True, "path": path, "store": STORE, "size_bytes": len(data)}

    def listing(self, raw_prefix: str | None, limit: int, after: str | None) -> dict[str, Any]:
        """The entries under a folder, in path order, at most ``limit``; ``truncated`` when
        more follow (the last path given is the next call's ``after``)."""
        directory = paths.canonical(raw_prefix or "")
        entries, truncated = self.store.brain_list(self.session_id, directory, after, limit)
        return {
            "store": STORE,
            "entries": [{"path": e.path, "size_bytes": e.size_bytes, "written_at": e.written_at} for e in entries],
            "truncated": truncated,
        }

    def delete(self, raw_path: str) -> dict[str, Any]:
        path = paths.page_path(raw_path)
        if not self.store.brain_delete(self.session_id, path):
            raise NotFound(f"This mission's session brain has no entry {path}.")
        return {"ok": True, "path": path, "store": STORE}
