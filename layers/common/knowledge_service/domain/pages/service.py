"""The one write path and the reads of a project's knowledge base.

REST calls these, and so do the brain tools (``store: "project"``) and ``kb import`` (over
REST): every write goes through ``_write`` (a delete through ``delete``), so a page gets the
same path rules, the same limits, the same log row, the same search row
(``domain/pages/search.py``, landed in the write's own transaction) and the same feed signal
whoever wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from knowledge_service.domain.pages import frontmatter, paths
from knowledge_service.domain.pages.describe import describe
from knowledge_service.domain.pages.search import search_row
from knowledge_service.domain.pages.tree import VERIFICATION_WINDOW_SECONDS, broken_link, walk
from knowledge_service.errors import BadRequest, Conflict, InternalError, NotFound, PayloadTooLarge
from knowledge_service.storage.event_log import EventLog
from knowledge_service.storage.page_store import ABSENT, AlreadyKept, Head, LogRow, PageStore, Preread, Write, iso

if TYPE_CHECKING:
    from knowledge_service.domain.pages.page_search import PageSearch

MIB = 1024 * 1024
MAX_PAGE_BYTES = 1 * MIB
MAX_BODY_BYTES = 4 * MIB
MAX_BRAIN_VALUE_BYTES = 4 * MIB
MAX_BASE_BYTES = 1024 * MIB
WARN_BASE_BYTES = 256 * MIB
MAX_HISTORY_ROWS = 200
MAX_LISTING = 500
HUMAN = "human"
_UNGUARDED_ATTEMPTS = 5
_LOOKED_UP_DIRECTORIES = 25


def invalid(field: str, problem: str) -> BadRequest:
    return BadRequest(field, problem, code="invalid_argument")


def _today() -> date:
    return datetime.now(UTC).date()


@dataclass
class Written:
    path: str
    version: str
    size_bytes: int
    lint: list[dict[str, Any]]
    warnings: list[str]
    changed: bool = True


@dataclass(frozen=True)
class _Forgetting:
    """What ``forget_history`` does: the log rows it marks forgotten, and the kept versions it
    removes (version → bytes): those only the forgotten rows named, and those nothing names."""

    to_mark: list[LogRow]
    removed: dict[str, int]
    unreferenced: dict[str, int]


class Pages:
    """One project's knowledge base."""

    def __init__(
        self,
        store: PageStore,
        project: str,
        events: EventLog | None = None,
        search: PageSearch | None = None,
        preread: Preread | None = None,
    ):
        self.store = store
        self.project = project
        self.events = events
        self.search = search
        self.preread = preread  # what the door read with the caller: used once, then read afresh

    def _head(self, path: str) -> Head | None:
        """The page's head: as the door read it (once), else read now."""
        if self.preread is not None and path in self.preread.heads:
            return self.preread.heads.pop(path)
        return self.store.head(self.project, path)

    def _generation(self) -> tuple[int, int]:
        """(write generation, kept bytes): as the door read them (once), else read now."""
        if self.preread is not None and self.preread.generation is not None:
            found, self.preread.generation = self.preread.generation, None
            return found
        return self.store.generation(self.project)

    # ================================================================== reads
    def _current(self, path: str) -> Head:
        head = self._head(path)
        if head is None or not head.exists:
            raise NotFound(f"There is no page {path}.")
        return head

    def _bytes(self, version: str) -> bytes:
        content = self.store.read_bytes(self.project, version)
        if content is None:
            raise InternalError("A page's kept bytes are missing from the version store.")
        return content

    def get(self, raw_path: str) -> dict[str, Any]:
        path = paths.page_path(raw_path)
        head = self._current(path)
        assert head.version is not None
        return {
            "path": path,
            "content": self._bytes(head.version).decode("utf-8"),
            "version": head.version,
            "size_bytes": head.size_bytes,
            "last_write": {
                "actor": head.last_write_by,
                "at": head.last_write_at,
                "principal": head.last_write_principal,
            },
        }

    def get_version(self, raw_path: str, version: str) -> dict[str, Any]:
        path = paths.page_path(raw_path)
        row = self._named(path, version)
        content = self.store.read_bytes(self.project, version) if self.store.is_kept(self.project, version) else None
        if content is None:
            raise NotFound(f"The bytes of {version} of {path} were not kept or were forgotten.")
        head = self.store.head(self.project, path)
        return {
            "path": path,
            "content": content.decode("utf-8"),
            "version": version,
            "size_bytes": len(content),
            "current": head is not None and head.version == version,
            "at": row.at,
            "actor": row.actor,
            "principal": row.principal,
        }

    def _named(self, path: str, version: str) -> LogRow:
        """The newest write of ``version`` in the page's own history, still kept."""
        rows = [r for r in self.store.log(self.project, path) if r.version == version]
        if not rows:
            raise NotFound(f"The history of {path} names no version {version}.")
        if all(r.forgotten for r in rows):
            raise NotFound(f"The bytes of {version} of {path} were forgotten.")
        return rows[0]

    def listing(self, raw_prefix: str | None, limit: int, meta: bool, after: str | None = None) -> dict[str, Any]:
        prefix = paths.canonical(raw_prefix or "")
        rows = walk(self.store, self.project).listing(prefix, meta, _today())
        if after is not None:  # the client's cursor: rows in path order strictly after it
            rows = [r for r in rows if str(r["path"]) > after]
        return {"entries": rows[:limit], "truncated": len(rows) > limit}

    def backlinks(self, raw_path: str) -> list[dict[str, Any]]:
        path = paths.page_path(raw_path)
        tree = walk(self.store, self.project)
        if path not in tree.heads:
            raise NotFound(f"There is no page {path}.")
        return tree.backlinks(path)

    def lint(self, fresh: bool) -> dict[str, Any]:
        tree = walk(self.store, self.project, fresh=fresh)
        return {"checked_at": iso(tree.walked_at), "findings": tree.lint(_today())}

    def stats(self) -> dict[str, Any]:
        return walk(self.store, self.project).stats(_today())

    def history(
        self,
        raw_path: str | None,
        raw_prefix: str | None,
        actor: str | None,
        op: str | None,
        before: str | None,
        limit: int,
    ) -> dict[str, Any]:
        path = paths.page_path(raw_path) if raw_path else None
        prefix = paths.canonical(raw_prefix) if raw_prefix else None
        rows = [
            r
            for r in self.store.log(self.project)
            if (path is None or r.path == path)
            and (prefix is None or paths.is_under(r.path, prefix))
            and (actor is None or r.actor == actor)
            and (op is None or r.op == op)
        ]
        page, next_before = _page(rows, before, limit)
        return {
            "rows": [
                {
                    "op": r.op,
                    "path": r.path,
                    "actor": r.actor,
                    "principal": r.principal,
                    "at": r.at,
                    "version": r.version,
                }
                for r in page
            ],
            "total": len(rows),
            "next_before": next_before,
            "truncated": len(page) < len(rows),
        }

    def versions(self, raw_path: str, before: str | None, limit: int) -> dict[str, Any]:
        path = paths.page_path(raw_path)
        rows = self.store.log(self.project, path)
        head = self.store.head(self.project, path)
        if not rows and (head is None or not head.exists):
            raise NotFound(f"There is no page {path} and its history names nothing.")
        current_version = head.version if head is not None else None
        kept = self.store.kept_versions(self.project)
        current_row = next((r.id for r in rows if current_version and r.version == current_version), None)
        page, next_before = _page(rows, before, limit)
        return {
            "path": path,
            "current_version": current_version,
            "versions": [
                {
                    "id": r.id,
                    "op": r.op,
                    "actor": r.actor,
                    "principal": r.principal,
                    "at": r.at,
                    "version": r.version,
                    "size_bytes": r.size_bytes,
                    "summary": _summary(r, rows),
                    "kept": bool(r.version) and not r.forgotten and r.version in kept,
                    "current": r.id == current_row,
                }
                for r in page
            ],
            "total": len(rows),
            "next_before": next_before,
            "truncated": len(page) < len(rows),
        }

    # ================================================================== writes
    def put(
        self, raw_path: str, content: str, if_version: str | None, actor: str = HUMAN, principal: str | None = None
    ) -> Written:
        path = paths.page_path(raw_path)
        return self._write(path, content, if_version, op="kb.put", signal="kb_put", actor=actor, principal=principal)

    def delete(self, raw_path: str, if_version: str | None, actor: str = HUMAN, principal: str | None = None) -> str:
        """Delete the page. Guarded (``if_version``), a page changed since is 409; unguarded, the
        delete lands on what it read, and reads again if a write landed in between (as a write
        does): the last writer wins."""
        path = paths.canonical(raw_path)
        for attempt in range(_UNGUARDED_ATTEMPTS):
            head = self._head(path)
            if head is None or not head.exists:
                if path == paths.ROOT or any(
                    paths.is_under(p, path) for p in walk(self.store, self.project, fresh=True).heads
                ):
                    raise invalid("path", f"{path} is a directory that still holds pages; delete them first.")
                raise NotFound(f"There is no page {path}.")
            _check_guard(head, if_version)
            row = self.store.write(
                Write(
                    self.project,
                    path,
                    "kb.delete",
                    actor,
                    "kb_deleted",
                    guard=head.version,
                    version=None,
                    size_bytes=0,
                    replaced=head.version,
                    keep_verified_version=head.verified_version,
                    principal=principal,
                )
            )
            if row is not None:
                return path
            if if_version is not None or attempt == _UNGUARDED_ATTEMPTS - 1:
                break
        raise self._conflict_now(path)

    def review(
        self, raw_path: str, if_version: str | None, verified_by: str | None, principal: str | None = None
    ) -> Written:
        path = paths.page_path(raw_path)
        if verified_by is not None and verified_by != HUMAN:
            raise invalid("verified_by", "may only be 'human': the hub sets the reviewer.")
        head = self._current(path)
        _check_guard(head, if_version)
        assert head.version is not None
        text = self._bytes(head.version).decode("utf-8")
        try:
            reviewed = frontmatter.append_entry(text, "verified", {"by": HUMAN, "at": iso(datetime.now(UTC))})
        except frontmatter.Unpatchable as error:
            raise invalid("path", f"the page cannot be reviewed: {error}.") from error
        return self._write(
            path,
            reviewed,
            head.version,
            op="kb.review",
            signal="kb_reviewed",
            actor=HUMAN,
            force_brought=True,
            principal=principal,
        )

    def revert(
        self, raw_path: str, version: str, if_version: str | None, actor: str = HUMAN, principal: str | None = None
    ) -> Written:
        path = paths.page_path(raw_path)
        self._named(path, version)
        if not self.store.is_kept(self.project, version):
            raise NotFound(f"The bytes of {version} of {path} were not kept or were forgotten.")
        head = self.store.head(self.project, path)
        if head is not None and head.version == version:
            if if_version is not None:
                _check_guard(head, if_version)
            return Written(path, version, head.size_bytes, head.meta.get("lint", []), [], changed=False)
        content = self._bytes(version).decode("utf-8")
        return self._write(
            path,
            content,
            if_version,
            op="kb.revert",
            signal="kb_reverted",
            actor=actor,
            restored=version,
            principal=principal,
        )

    def promote(
        self,
        session_id: str,
        from_path: str,
        raw_to_path: str,
        fields: dict[str, str | list[str]],
        if_version: str | None,
        actor: str = HUMAN,
        principal: str | None = None,
    ) -> Written:
        to_path = paths.page_path(raw_to_path)
        session = self.store.session(session_id)
        if session is None or session["project"] != self.project:
            raise NotFound(f"There is no session {session_id}.")
        value = self.store.brain_get(session_id, from_path)
        if value is None:
            raise NotFound(f"Session {session_id}'s brain has no entry {from_path}.")
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError as error:
            raise invalid("from_path", "the brain entry is not UTF-8 text.") from error
        source = {
            "title": f"{session['name']} brain {from_path}",
            "resource": f"agenthub://session/{session_id}/brain{from_path}",
        }
        for key, value_ in fields.items():
            if any(frontmatter._has_control(v) for v in ([value_] if isinstance(value_, str) else value_)):
                raise invalid(key, "contains a control character.")
        try:
            patched = frontmatter.set_fields(text, fields) if fields else text
            patched = frontmatter.append_entry(patched, "sources", source)
        except frontmatter.Unpatchable as error:
            raise invalid("from_path", f"the entry cannot be promoted: {error}.") from error
        return self._write(
            to_path, patched, if_version, op="kb.promote", signal="kb_promoted", actor=actor, principal=principal
        )

    def forget_history(self, raw_path: str, actor: str = HUMAN) -> dict[str, Any]:
        """``DELETE kb/versions``: audit first, then the mark and the removals."""
        path = paths.page_path(raw_path)
        rows = self.store.log(self.project, path)
        if not rows:
            raise NotFound(f"The write log has never named {path}.")
        forgetting = self._forgetting(path, rows)
        removed, unreferenced = forgetting.removed, forgetting.unreferenced
        counts = {
            "path": path,
            "versions": len(removed),
            "bytes": sum(removed.values()),
            "unreferenced_versions": len(unreferenced),
            "unreferenced_bytes": sum(unreferenced.values()),
        }
        if self.events is None:
            raise InternalError("The event log is not configured; a purge that cannot be recorded removes nothing.")
        self.events.record("system", actor, {"action": "kb_history_forgotten", "project": self.project, **counts})
        try:
            self.store.mark_forgotten(self.project, forgetting.to_mark)
            for version, size in (removed | unreferenced).items():
                self.store.forget_version(self.project, version, size)
        except Exception:
            self.events.record(
                "system", actor, {"action": "kb_history_forget_rolled_back", "project": self.project, **counts}
            )
            raise
        if self.search is not None:
            # The search rows only ever hold current text; a compaction now rewrites the snapshot
            # from them, so no snapshot object keeps the text of a page changed since the last one.
            self.search.compact(force=True)
        return {
            "ok": True,
            "path": path,
            "versions_forgotten": len(removed),
            "bytes_forgotten": sum(removed.values()),
            "unreferenced_forgotten": len(unreferenced),
        }

    def _forgetting(self, path: str, rows: list[LogRow]) -> _Forgetting:
        """What forgetting ``path``'s history (its log ``rows``) marks and removes, read from the
        store: its rows of versions other than the current one, the kept bytes only those rows
        name, and the kept bytes nothing names at all."""
        head = self.store.head(self.project, path)
        current = head.version if head is not None else None
        kept = self.store.kept_versions(self.project)
        everything = self.store.log(self.project)
        to_mark = [r for r in rows if r.version and r.version != current and not r.forgotten]
        named_elsewhere = _named_elsewhere(everything, path, current)
        heads_versions = {h.version for h in self.store.heads(self.project) if h.version}
        candidates = {r.version for r in to_mark if r.version} - named_elsewhere - heads_versions
        removed = {v: kept[v] for v in candidates if v in kept}
        return _Forgetting(to_mark, removed, _unreferenced(kept, everything, heads_versions))

    # ================================================================== the write path
    def _write(
        self,
        path: str,
        content: str,
        if_version: str | None,
        *,
        op: str,
        signal: str,
        actor: str,
        restored: str | None = None,
        force_brought: bool = False,
        principal: str | None = None,
    ) -> Written:
        data, meta = _checked_page(path, content)
        version = _version(data)
        warnings: list[str] = []
        kept: bool | None = None  # unknown: the write's own transaction tells (its version item's condition)
        stored = False
        for attempt in range(_UNGUARDED_ATTEMPTS):
            head = self._head(path)
            _check_guard(head, if_version)
            replaced = head.version if head is not None else None
            kept, new_bytes, over_warning = self._room(data, version, kept)
            if over_warning:
                warnings = ["The knowledge base holds over 256 MiB (kept versions included); its limit is 1 GiB."]
            brought = force_brought or _brings_verification(head, meta)
            if not kept and not stored:
                self.store.put_bytes(self.project, data)  # the bytes first: a crash leaves only an unnamed version
                stored = True
            try:
                row = self.store.write(
                    Write(
                        self.project,
                        path,
                        op,
                        actor,
                        signal,
                        guard=if_version,
                        version=version,
                        size_bytes=len(data),
                        replaced=replaced,
                        meta=meta,
                        brought=brought,
                        restored=restored,
                        keep_verified_version=head.verified_version if head is not None else None,
                        search=search_row(path, content, meta, version).item(),
                        new_bytes=new_bytes,
                        principal=principal,
                    )
                )
            except AlreadyKept:
                kept = True  # another write kept these bytes: write again, counting them once
                continue
            if row is not None:
                break
            if if_version is not None or attempt == _UNGUARDED_ATTEMPTS - 1:
                raise self._conflict_now(path)
        else:
            raise _conflict(head.version if head is not None else None)
        lint = list(meta["lint"]) + self._broken_links(path, meta["links"])
        return Written(path, version, len(data), lint, warnings)

    def _room(self, data: bytes, version: str, kept: bool | None) -> tuple[bool | None, int, bool]:
        """Whether the base has room for the page's bytes: whether they are kept already (None:
        not known), the bytes the write adds, and whether the base then holds over 256 MiB. A base
        it would take past its 1 GiB limit is refused."""
        _gen, used = self._generation()
        if kept is None and used + len(data) > WARN_BASE_BYTES:
            kept = self.store.is_kept(self.project, version)  # near a limit: what counts is read, not assumed
        new_bytes = 0 if kept else len(data)
        if used + new_bytes > MAX_BASE_BYTES:
            raise PayloadTooLarge("The knowledge base is at its 1 GiB limit (kept versions included).")
        return kept, new_bytes, used + new_bytes > WARN_BASE_BYTES

    def _conflict_now(self, path: str) -> Conflict:
        """The conflict a write or delete that lost answers, naming the page's version as read now."""
        fresh = self.store.head(self.project, path)
        return _conflict(fresh.version if fresh else None)

    def _broken_links(self, path: str, links: list[list[Any]]) -> list[dict[str, Any]]:
        """The write's ``broken_link`` findings, read from its own link targets only: which
        of them are pages (batched reads), then, for each that is not, whether it is a
        directory that holds a page. A write costs its links, never the base's size; a page
        naming more than ``_LOOKED_UP_DIRECTORIES`` non-pages reads the (kept) walk instead,
        so no write costs more than one walk."""
        targets = {str(target) for target, _href, _line in links if target != path}
        pages = self.store.existing(self.project, targets)
        others = targets - pages - {paths.ROOT}
        if len(others) > _LOOKED_UP_DIRECTORIES:
            return walk(self.store, self.project).broken_links(path, links)
        missing = {t for t in others if not self.store.holds_pages_under(self.project, t)}
        return [broken_link(path, target, href, line) for target, href, line in links if target in missing]


def _named_elsewhere(everything: list[LogRow], path: str, current: str | None) -> set[str]:
    """The versions a row not forgotten names at another path, or that are ``path``'s current one."""
    return {r.version for r in everything if r.version and not r.forgotten and (r.path != path or r.version == current)}


def _unreferenced(kept: dict[str, int], everything: list[LogRow], heads_versions: set[str]) -> dict[str, int]:
    """The kept versions (version → bytes) that no log row, forgotten or not, and no head names."""
    referenced = {r.version for r in everything if r.version} | heads_versions
    return {v: size for v, size in kept.items() if v not in referenced}


def _checked_page(path: str, content: str) -> tuple[bytes, dict[str, Any]]:
    """The page's bytes and what it says of itself (``describe``), once the page is within its
    1 MiB limit and no frontmatter value holds a control character."""
    data = content.encode("utf-8")
    if len(data) > MAX_PAGE_BYTES:
        raise PayloadTooLarge(f"The page is {len(data)} bytes; a page holds at most {MAX_PAGE_BYTES} (1 MiB).")
    meta = describe(path, content)
    block = frontmatter.read(content)
    bad_key = block.control_character_key()
    if bad_key:
        raise invalid(f"frontmatter.{bad_key}", "contains a control character.")
    return data, meta


def _version(data: bytes) -> str:
    from knowledge_service.storage.page_store import version_of

    return version_of(data)


def _conflict(current: str | None) -> Conflict:
    return Conflict(f"if_version does not match the page; current_version={current or ABSENT}")


def _check_guard(head: Head | None, if_version: str | None) -> None:
    if if_version is None:
        return
    current = head.version if head is not None else None
    if if_version == ABSENT:
        if current is not None:
            raise _conflict(current)
        return
    if current != if_version:
        raise _conflict(current)


def _brings_verification(head: Head | None, meta: dict[str, Any]) -> bool:
    """The stored page ends its ``verified`` block with an entry the replaced page did not
    hold, stamped within five minutes of the write landing."""
    verified = ((meta.get("fm") or {}).get("verified")) or []
    if not verified:
        return False
    newest = verified[-1]
    before = ((head.meta.get("fm") or {}).get("verified") or []) if head is not None and head.exists else []
    if newest in before:
        return False
    try:
        at = datetime.fromisoformat(str(newest.get("at", "")).replace("Z", "+00:00"))
    except ValueError:
        return False
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return abs((datetime.now(UTC) - at).total_seconds()) <= VERIFICATION_WINDOW_SECONDS


def _page(rows: list[LogRow], before: str | None, limit: int) -> tuple[list[LogRow], str | None]:
    after_cursor = [r for r in rows if before is None or r.id < before]
    page = after_cursor[:limit]
    next_before = page[-1].id if page and len(after_cursor) > len(page) else None
    return page, next_before


def _summary(row: LogRow, rows: list[LogRow]) -> str:
    if row.op == "kb.delete":
        return "deleted"
    if row.op == "kb.review":
        return "reviewed"
    if row.op == "kb.promote":
        return "promoted from a session brain"
    if row.op == "kb.revert":
        earlier = next((r for r in rows if r.id < row.id and r.version == row.restored), None)
        return f"restored the version of {earlier.at}" if earlier else "restored an earlier version"
    return "edited" if row.replaced else "created"
