"""``kb export`` and ``kb import``: a whole knowledge base to a folder and back."""

from __future__ import annotations

import os
import stat
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TextIO

from kb import folder
from kb.folder import Refused
from kb.hub import Hub, HubError, Stop
from kb.plan import Kind, Step, next_manifest, plan, summary
from knowledge_service.domain.pages.describe import describe
from knowledge_service.domain.pages.tree import Tree
from knowledge_service.storage.page_store import Head

REFUSING_LINT = ("unparsed_frontmatter", "okf_version_misplaced", "link_escapes_bundle")
REFUSED = 1


class Progress:
    """Progress on stderr: a bar on a terminal, a line every 500 items otherwise (large bases only)."""

    def __init__(self, what: str, total: int, stream: TextIO | None = None) -> None:
        self.what, self.total, self.done = what, total, 0
        self.stream = stream or sys.stderr
        self.bar = self.stream.isatty()
        self.quiet = total < 200 and not self.bar

    def step(self) -> None:
        self.done += 1
        if self.quiet:
            return
        if self.bar:
            filled = int(30 * self.done / max(self.total, 1))
            self.stream.write(f"\r{self.what} [{'#' * filled}{' ' * (30 - filled)}] {self.done}/{self.total}")
            if self.done == self.total:
                self.stream.write("\n")
            self.stream.flush()
        elif self.done % 500 == 0 or self.done == self.total:
            self.stream.write(f"kb: {self.what} {self.done}/{self.total}\n")


def say(message: str) -> None:
    print(f"kb: {message}", file=sys.stderr)


# ------------------------------------------------------------------ export
def export(hub: Hub, directory: Path, force: bool) -> int:  # noqa: PLR0912
    project = hub.config.project
    old: dict[str, str] | None = None
    exists = False
    try:
        info = os.lstat(directory)
        exists = True
    except FileNotFoundError:
        info = None
    if info is not None:
        if stat.S_ISLNK(info.st_mode):
            raise Refused(f"{directory} is a symbolic link")
        if not stat.S_ISDIR(info.st_mode):
            raise Refused(f"{directory} is not a directory")
        if any(os.scandir(directory)):
            if not force:
                raise Refused(f"{directory} is not empty (--force writes into it)")
            old = folder.read_manifest(directory, project)
    rows = hub.pages()
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
    for page in wanted:
        if exists:
            folder.check_target(directory, page)
        else:
            folder.target_parts(page)
    contents: dict[str, bytes] = {}
    versions: dict[str, str] = {}
    progress = Progress("read", len(wanted))
    for page in wanted:
        got = hub.get(page)
        contents[page] = got["content"].encode("utf-8")
        versions[page] = got["version"]
        progress.step()
    gone = sorted(p for p in (old or {}) if p not in rows and exists and folder.removable(directory, p))
    directory.mkdir(parents=True, exist_ok=True)
    progress = Progress("write", len(wanted))
    for page in wanted:
        try:
            folder.write_page(directory, page, contents[page])
        except OSError as error:
            raise Refused(f"{page}: cannot be written without following a link ({error.strerror})") from error
        progress.step()
    for page in gone:
        folder.remove_page(directory, page)
        print(f"removed {page}")
    folder.write_manifest(directory, project, versions)
    say(f"exported {len(wanted)} pages to {directory}")
    return 0


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


def import_(hub: Hub, directory: Path, prune: bool, dry_run: bool) -> int:  # noqa: PLR0912, PLR0915
    project = hub.config.project
    bundle = folder.read_bundle(directory)
    manifest_refusal: str | None = None
    try:
        manifest = folder.read_manifest(directory, project) or {}
    except Refused as error:
        manifest, manifest_refusal = {}, str(error)
    if bundle.refusals or manifest_refusal:
        for refusal in bundle.refusals:
            say(f"refused {refusal}")
        if manifest_refusal:
            say(f"refused: {manifest_refusal}")
        say("nothing was written")
        return REFUSED
    hub_versions = {path: str(row["version"]) for path, row in hub.pages().items()}
    steps = plan(bundle.versions, hub_versions, manifest, prune)
    deleting = {s.path for s in steps if s.kind is Kind.DELETE}
    kept = [p for p in hub_versions if p not in deleting and p not in bundle.versions]
    found = folder.twins(bundle.versions, kept)
    if found:
        for a, b in found:
            say(f"refused {a}: differs only in case or normalisation from {b} on the hub")
        say("nothing was written")
        return REFUSED
    writing = {s.path for s in steps if s.kind in (Kind.CREATE, Kind.UPDATE)}
    refusing = []
    for finding in lint_bundle(bundle.pages, project):
        if finding["code"] in REFUSING_LINT and finding["path"] in writing:
            refusing.append(finding)
        else:
            print(lint_line(finding), file=sys.stderr)
    if refusing:
        for finding in refusing:
            say(f"refused {lint_line(finding).removeprefix('agent-hub: ')}")
        say("nothing was written")
        return REFUSED
    done: dict[str, Step] = {}
    stopped: Stop | None = None
    final: list[Step] = []
    progress = Progress("write", sum(1 for s in steps if s.kind in (Kind.CREATE, Kind.UPDATE, Kind.DELETE)))
    for step in steps:
        outcome = step
        if step.kind in (Kind.CREATE, Kind.UPDATE, Kind.DELETE) and not dry_run:
            if stopped is not None:
                outcome = Step(Kind.NOT_ATTEMPTED, step.path)
            else:
                try:
                    if step.kind is Kind.DELETE:
                        hub.delete(step.path, step.guard)
                    else:
                        hub.put(step.path, bundle.pages[step.path], step.guard)
                except HubError as error:
                    if error.status == 409:
                        outcome = Step(Kind.CONFLICT, step.path, "changed on the hub while the import ran")
                    elif error.status == 404 and step.kind is Kind.DELETE:
                        outcome = Step(Kind.ALREADY_GONE, step.path)
                    else:
                        stopped, outcome = error, Step(Kind.NOT_ATTEMPTED, step.path)
                except Stop as error:
                    stopped, outcome = error, Step(Kind.NOT_ATTEMPTED, step.path)
                progress.step()
        done[step.path] = outcome
        final.append(outcome)
        print(outcome.line(dry_run), flush=True)
    print(summary(final, dry_run))
    if stopped is not None:
        say(stopped.message)
    if not dry_run:
        try:
            folder.write_manifest(directory, project, next_manifest(bundle.versions, hub_versions, manifest, done))
        except OSError as error:
            say(f"the manifest cannot be saved: {error}")
            return stopped.code if stopped is not None else REFUSED
    if stopped is not None:
        return stopped.code
    return REFUSED if any(s.kind is Kind.CONFLICT for s in final) else 0
