"""``kb export`` and ``kb import``: a whole knowledge base to a folder and back.

An import runs in five steps, each a function below: read (the folder and its manifest),
plan (``kb.plan``, against the hub's listing), check (case twins against the hub, the
folder linted whole), write (one guarded write a changed page) and summary (the counting
line, the manifest, the exit code). Nothing is written unless read and check pass.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tarfile
import zlib
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO, cast

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeRemainingColumn

from kb import folder
from kb.folder import Bundle, Refused
from kb.hub import Hub, HubError, Stop
from kb.plan import WRITES, Kind, Step, next_manifest, plan, summary
from knowledge_service.domain.pages import paths
from knowledge_service.domain.pages.describe import describe
from knowledge_service.domain.pages.tree import Tree
from knowledge_service.errors import BadRequest
from knowledge_service.storage.page_store import Head

REFUSING_LINT = ("unparsed_frontmatter", "okf_version_misplaced", "link_escapes_bundle")
REFUSED = 1
QUIET_BELOW = 200  # off a terminal, a base smaller than this gets no progress lines
LINE_EVERY = 500
IN_FLIGHT = 8  # an import's writes at once (each its own request; httpx.Client is thread-safe)
ARCHIVE_MANIFEST = "manifest.json"  # the hub archive's first member (domain/pages/archive.py)
MANIFEST_LIMIT = 64 * 1024 * 1024


class Progress:
    """Progress on stderr: a ``rich`` bar on a terminal, a line every 500 items otherwise
    (large bases only). A context manager: leaving it ends the bar, also after a stop."""

    def __init__(self, what: str, total: int, stream: TextIO | None = None) -> None:
        self.what, self.total, self.done = what, total, 0
        self.stream = stream or sys.stderr
        self.bar: Bar | None = None
        if self.stream.isatty() and total > 0:
            self.bar = Bar(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(file=self.stream, force_terminal=True),
                auto_refresh=False,
            )
            self.task = self.bar.add_task(what, total=total)
        self.quiet = total < QUIET_BELOW and self.bar is None

    def __enter__(self) -> Progress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self.bar is not None:
            self.bar.stop()

    def step(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done, refresh=True)
        elif not self.quiet and (self.done % LINE_EVERY == 0 or self.done == self.total):
            self.stream.write(f"kb: {self.what} {self.done}/{self.total}\n")


def say(message: str) -> None:
    print(f"kb: {message}", file=sys.stderr)


# ------------------------------------------------------------------ export
def export(hub: Hub, directory: Path, force: bool, per_page: bool = False) -> int:
    """Every page to ``directory``, each written as it arrives, then the manifest. The whole base
    comes as one archive (``GET .../kb/archive``: its requests do not grow with the base, and
    memory holds one page at a time); ``per_page`` reads the listing and each page instead (the
    fallback for a hub without the archive route). The seed's bound on one folder export
    (10,000 pages, 256 MiB) is held before any page is written, and again against the bytes."""
    if per_page:
        return _export_per_page(hub, directory, force)
    project = hub.config.project
    exists, old = _export_target(directory, project, force)
    try:
        url = hub.archive_url()
    except HubError as error:
        if error.status == 413:  # the hub holds the same limits: refused before anything is read
            raise Refused(error.message.removeprefix("the hub refused (413 payload_too_large): ")) from error
        raise
    written: dict[str, str] = {}
    total = 0
    try:
        with hub.archive(url) as stream, tarfile.open(fileobj=stream, mode="r|gz") as tar:
            listed = _archive_manifest(tar, project)
            wanted, gone = _prepare(directory, exists, old, listed)
            directory.mkdir(parents=True, exist_ok=True)
            with Progress("export", len(wanted)) as progress:
                while (member := tar.next()) is not None:  # after the manifest, each page as it arrives
                    page = "/" + member.name
                    data = _member_bytes(tar, member, listed.get(page))
                    if page not in wanted:
                        continue  # dot-named: said when the manifest was read
                    total += len(data)
                    _within_the_folder_limits(len(wanted), total)
                    _write_one(directory, page, data)
                    written[page] = listed[page]["version"]
                    progress.step()
                    cast(Any, tar).members = []  # tarfile keeps each member seen: dropped, memory stays flat
    except (tarfile.TarError, EOFError, zlib.error) as error:
        say(f"stopped after writing {len(written)} pages; no manifest was written, so run kb export again")
        raise Refused(f"the hub's archive is cut short or damaged: {error}") from error
    except (HubError, Stop, Refused):
        if written:
            say(
                f"stopped after writing {len(written)} pages; no manifest was written, "
                "so run kb export again before importing from this folder"
            )
        raise
    missing = [page for page in wanted if page not in written]
    if missing:
        say(f"stopped after writing {len(written)} pages; no manifest was written, so run kb export again")
        raise Refused(f"the hub's archive ended before {missing[0]} ({len(missing)} pages missing)")
    return _finish_export(directory, project, gone, written, len(wanted))


def _archive_manifest(tar: tarfile.TarFile, project: str) -> dict[str, dict[str, Any]]:
    """The archive's first member, its manifest: each page's row by path, checked whole."""
    first = tar.next()
    handle = tar.extractfile(first) if first is not None and first.name == ARCHIVE_MANIFEST else None
    if first is None or handle is None:
        raise Refused(f"the hub's archive does not begin with its {ARCHIVE_MANIFEST}")
    if first.size > MANIFEST_LIMIT:
        raise Refused(f"the hub's archive manifest is over {MANIFEST_LIMIT // 2**20} MiB")
    try:
        body = json.loads(handle.read(first.size))  # its own size: read(limit) would allocate the limit
    except ValueError as error:
        raise Refused(f"the hub's archive manifest cannot be read: {error}") from error
    if not isinstance(body, dict) or body.get("format") != 1 or not isinstance(body.get("pages"), list):
        raise Refused("the hub's archive manifest is not format 1")
    if body.get("project") != project:
        raise Refused(f"the hub's archive is of project {body.get('project')!r}, not {project!r}")
    rows = {_manifest_row(row): row for row in body["pages"]}
    if len(rows) != len(body["pages"]):
        raise Refused("the hub's archive manifest names a page twice")
    return rows


def _manifest_row(row: Any) -> str:
    """A manifest row's page path, once the row is a canonical page with a sha256 version and a size."""
    if not isinstance(row, dict) or not isinstance(row.get("path"), str) or not isinstance(row.get("size_bytes"), int):
        raise Refused(f"the hub's archive manifest holds a row that is not a page: {str(row)[:200]}")
    page = row["path"]
    if not str(row.get("version", "")).startswith("sha256:"):
        raise Refused(f"the hub's archive manifest's version of {page} is not a sha256 version")
    try:
        canonical = paths.page_path(page)
    except BadRequest:
        canonical = ""
    if canonical != page:
        raise Refused(f"the hub's archive manifest names {page!r}, which is not a canonical page path")
    return str(page)


def _member_bytes(tar: tarfile.TarFile, member: tarfile.TarInfo, row: dict[str, Any] | None) -> bytes:
    """A page's bytes from the archive, held to the manifest's size and SHA-256."""
    page = "/" + member.name
    handle = tar.extractfile(member) if member.isfile() else None
    if row is None or handle is None:
        raise Refused(f"the hub's archive holds {member.name!r}, which its manifest does not name as a page")
    data = handle.read(folder.MAX_PAGE_BYTES + 1)
    if len(data) != int(row["size_bytes"]) or folder.version_of(data) != row["version"]:
        raise Refused(f"{page}: the archive's bytes do not match the manifest's SHA-256 and size")
    return data


def _prepare(
    directory: Path, exists: bool, old: dict[str, str] | None, rows: dict[str, Any]
) -> tuple[list[str], list[str]]:
    """The pages to write (held to the limits, every target checked) and the pages to remove."""
    wanted = _exported_pages(rows)
    _within_the_folder_limits(len(wanted), sum(int(rows[page].get("size_bytes") or 0) for page in wanted))
    for page in wanted:
        if exists:
            folder.check_target(directory, page)
        else:
            folder.target_parts(page)
    gone = sorted(p for p in (old or {}) if p not in rows and exists and folder.removable(directory, p))
    return wanted, gone


def _write_one(directory: Path, page: str, data: bytes) -> None:
    try:
        folder.write_page(directory, page, data)
    except OSError as error:
        raise Refused(f"{page}: cannot be written without following a link ({error.strerror})") from error


def _finish_export(directory: Path, project: str, gone: list[str], versions: dict[str, str], pages: int) -> int:
    for page in gone:
        folder.remove_page(directory, page)
        print(f"removed {page}")
    folder.write_manifest(directory, project, versions)
    say(f"exported {pages} pages to {directory}")
    return 0


def _export_per_page(hub: Hub, directory: Path, force: bool) -> int:
    """The export by the listing and one read a page (``--per-page``)."""
    project = hub.config.project
    exists, old = _export_target(directory, project, force)
    rows = hub.pages()
    wanted, gone = _prepare(directory, exists, old, rows)
    directory.mkdir(parents=True, exist_ok=True)
    versions: dict[str, str] = {}
    written = 0
    try:
        with Progress("export", len(wanted)) as progress:
            for page in wanted:
                got = hub.get(page)
                content = got["content"].encode("utf-8")
                written += len(content)
                _within_the_folder_limits(len(wanted), written)  # a page that grew since the listing
                _write_one(directory, page, content)
                versions[page] = got["version"]
                progress.step()
    except (HubError, Stop, Refused):
        say(
            f"stopped after writing {len(versions)} of {len(wanted)} pages; no manifest was written, "
            "so run kb export again before importing from this folder"
        )
        raise
    return _finish_export(directory, project, gone, versions, len(wanted))


def _within_the_folder_limits(pages: int, size: int) -> None:
    """Seed 001, Limits: "One folder export or import: 10,000 pages and 256 MiB"."""
    if pages > folder.MAX_BUNDLE_PAGES:
        raise Refused(f"the knowledge base holds {pages} pages, over one export's limit of {folder.MAX_BUNDLE_PAGES}")
    if size > folder.MAX_BUNDLE_BYTES:
        raise Refused(
            f"the knowledge base holds over {folder.MAX_BUNDLE_BYTES // (1024 * 1024)} MiB of pages, "
            "over one export's limit"
        )


def _export_target(directory: Path, project: str, force: bool) -> tuple[bool, dict[str, str] | None]:
    """Whether ``directory`` exists, and the manifest it already holds (``--force`` only)."""
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        return False, None
    if stat.S_ISLNK(info.st_mode):
        raise Refused(f"{directory} is a symbolic link")
    if not stat.S_ISDIR(info.st_mode):
        raise Refused(f"{directory} is not a directory")
    if not any(os.scandir(directory)):
        return True, None
    if not force:
        raise Refused(f"{directory} is not empty (--force writes into it)")
    return True, folder.read_manifest(directory, project)


def _exported_pages(rows: dict[str, Any]) -> list[str]:
    """The hub's pages an export writes: a dot-named one is left out (an import would not
    read it back); two that differ only in case or normalisation refuse the export."""
    wanted: list[str] = []
    for page in sorted(rows):
        if folder.is_dot_named(page):
            say(f"{page} left out: a dot-named path is not read back by an import")
        else:
            wanted.append(page)
    found = folder.twins(wanted)
    if found:
        a, b = found[0]
        raise Refused(f"{a} and {b} differ only in case or normalisation; rename one on the hub first")
    return wanted


# ------------------------------------------------------------------ import
def lint_bundle(pages: dict[str, str], project: str) -> list[dict[str, Any]]:
    """The hub's own lint over the folder as a whole tree."""
    heads = {
        path: Head(
            path, folder.version_of(text.encode("utf-8")), len(text.encode("utf-8")), "", "", describe(path, text)
        )
        for path, text in pages.items()
    }
    return Tree(project, 0, 0, datetime.now(UTC), heads, None).lint(date.today())


def lint_line(found: dict[str, Any]) -> str:
    where = f"{found['path']}:{found['line']}" if found.get("line") is not None else found["path"]
    return f"agent-hub: lint {found['code']} {where}: {found['message']}"


class _NothingWritten(Exception):
    """The import refuses before its first write: each line goes to stderr."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("; ".join(lines))
        self.lines = lines


@dataclass
class _Sides:
    """What the plan is made of: the folder, its manifest and the hub's versions."""

    bundle: Bundle
    manifest: dict[str, str]
    hub: dict[str, str] = field(default_factory=dict)


@dataclass
class _Outcome:
    """What the write step did: each page's final step, in order, and what stopped it."""

    final: list[Step] = field(default_factory=list)
    done: dict[str, Step] = field(default_factory=dict)
    stopped: Stop | None = None


def import_(hub: Hub, directory: Path, prune: bool, dry_run: bool) -> int:
    project = hub.config.project
    try:
        sides = _read(directory, project)
        sides.hub = {path: str(row["version"]) for path, row in hub.pages().items()}
        steps = plan(sides.bundle.versions, sides.hub, sides.manifest, prune)
        _check(sides, steps, project)
    except _NothingWritten as refused:
        for line in refused.lines:
            say(line)
        say("nothing was written")
        return REFUSED
    outcome = _write(hub, sides.bundle, steps, dry_run)
    return _summary(directory, project, sides, outcome, dry_run)


def _read(directory: Path, project: str) -> _Sides:
    """The folder and its manifest, every refusal of either collected."""
    bundle = folder.read_bundle(directory)
    refusals = [f"refused {refusal}" for refusal in bundle.refusals]
    try:
        manifest = folder.read_manifest(directory, project) or {}
    except Refused as error:
        manifest = {}
        refusals.append(f"refused: {error}")
    if refusals:
        raise _NothingWritten(refusals)
    return _Sides(bundle, manifest)


def _check(sides: _Sides, steps: list[Step], project: str) -> None:
    """Refuse a folder page that is a case twin of a hub page the import keeps, and a
    refusing lint finding on a page the import writes; every other finding is a warning."""
    deleting = {s.path for s in steps if s.kind is Kind.DELETE}
    kept = [p for p in sides.hub if p not in deleting and p not in sides.bundle.versions]
    twins = folder.twins(sides.bundle.versions, kept)
    if twins:
        raise _NothingWritten(
            [f"refused {a}: differs only in case or normalisation from {b} on the hub" for a, b in twins]
        )
    writing = {s.path for s in steps if s.kind in (Kind.CREATE, Kind.UPDATE)}
    refusing = []
    for finding in lint_bundle(sides.bundle.pages, project):
        if finding["code"] in REFUSING_LINT and finding["path"] in writing:
            refusing.append(finding)
        else:
            print(lint_line(finding), file=sys.stderr)
    if refusing:
        raise _NothingWritten([f"refused {lint_line(f).removeprefix('agent-hub: ')}" for f in refusing])


def _write(hub: Hub, bundle: Bundle, steps: list[Step], dry_run: bool) -> _Outcome:
    """The writes, ``IN_FLIGHT`` at once; each step's line on stdout in the plan's order as soon
    as it and every step before it are done. Two writes where one path is the other's or a
    directory on its way never run at once. After a stop no write is begun: the ones in flight
    end and say how, the rest are ``not attempted``."""
    outcome = _Outcome()
    if dry_run:
        for step in steps:
            _record(outcome, step, dry_run)
        return outcome
    results: list[Step | None] = [None] * len(steps)
    said = 0
    writes = sum(1 for s in steps if s.kind in WRITES)
    with Progress("write", writes) as progress, ThreadPoolExecutor(IN_FLIGHT, thread_name_prefix="kb-write") as pool:
        running: dict[Future[tuple[Step, Stop | None]], int] = {}

        def settle() -> None:
            nonlocal said
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                index = running.pop(future)
                results[index], stopped = future.result()
                if stopped is not None and outcome.stopped is None:
                    outcome.stopped = stopped
                progress.step()
            said = _say_in_order(outcome, results, said)

        for index, step in enumerate(steps):
            if step.kind in WRITES:
                while running and (
                    len(running) >= IN_FLIGHT or any(_collide(step.path, steps[i].path) for i in running.values())
                ):
                    settle()
                if outcome.stopped is None:
                    running[pool.submit(_attempt, hub, bundle, step)] = index
                    continue
                results[index] = Step(Kind.NOT_ATTEMPTED, step.path)
                progress.step()
            else:
                results[index] = step
            said = _say_in_order(outcome, results, said)
        while running:
            settle()
    _say_in_order(outcome, results, said)
    return outcome


def _collide(a: str, b: str) -> bool:
    """Whether one path is the other or lies under it (a page and a directory of the same name)."""
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _say_in_order(outcome: _Outcome, results: list[Step | None], said: int) -> int:
    """Print the done steps that follow the ones already printed; how many are printed now."""
    while said < len(results) and results[said] is not None:
        _record(outcome, results[said], False)  # type: ignore[arg-type]
        said += 1
    return said


def _record(outcome: _Outcome, result: Step, dry_run: bool) -> None:
    outcome.done[result.path] = result
    outcome.final.append(result)
    print(result.line(dry_run), flush=True)


def _attempt(hub: Hub, bundle: Bundle, step: Step) -> tuple[Step, Stop | None]:
    """One guarded write or delete: a 409 is a conflict and a delete's 404 is already gone
    (the import goes on); any other refusal stops the import."""
    try:
        if step.kind is Kind.DELETE:
            hub.delete(step.path, step.guard)
        else:
            hub.put(step.path, bundle.pages[step.path], step.guard)
    except HubError as error:
        if error.status == 409 and step.kind is not Kind.DELETE and _holds(error, bundle.versions[step.path]):
            return step, None  # the hub holds exactly these bytes (a retried write that had landed): in step
        if error.status == 409:
            return Step(Kind.CONFLICT, step.path, "changed on the hub while the import ran"), None
        if error.status == 404 and step.kind is Kind.DELETE:
            return Step(Kind.ALREADY_GONE, step.path), None
        return Step(Kind.NOT_ATTEMPTED, step.path), error
    except Stop as error:
        return Step(Kind.NOT_ATTEMPTED, step.path), error
    return step, None


def _holds(error: HubError, version: str) -> bool:
    """Whether the hub's 409 names ``version`` as the page's current one (``current_version=...``)."""
    return error.message.rstrip().endswith(f"current_version={version}")


def _summary(directory: Path, project: str, sides: _Sides, outcome: _Outcome, dry_run: bool) -> int:
    """The counting line, the stop's reason, the manifest (not on a dry run) and the exit code."""
    print(summary(outcome.final, dry_run))
    stopped = outcome.stopped
    if stopped is not None:
        say(stopped.message)
    if not dry_run:
        pages = next_manifest(sides.bundle.versions, sides.hub, sides.manifest, outcome.done)
        try:
            folder.write_manifest(directory, project, pages)
        except OSError as error:
            say(f"the manifest cannot be saved: {error}")
            return stopped.code if stopped is not None else REFUSED
    if stopped is not None:
        return stopped.code
    return REFUSED if any(s.kind is Kind.CONFLICT for s in outcome.final) else 0
