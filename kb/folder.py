"""The folder side: reading a bundle without following links, writing one through
directory descriptors opened with ``O_NOFOLLOW``, the manifest, and case/NFC twins."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowledge_service.domain.pages import paths
from knowledge_service.errors import BadRequest

MANIFEST = ".agent-hub-kb.json"
FORMAT = 1
MAX_PAGE_BYTES = 1024 * 1024
MAX_BUNDLE_PAGES = 10_000
MAX_BUNDLE_BYTES = 256 * 1024 * 1024
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class Refused(Exception):
    """A file, a target or the manifest refuses the command (exit 1)."""


def version_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def fold(spelling: str) -> str:
    """What a case- and normalisation-insensitive filesystem keys on (close, not the same)."""
    return unicodedata.normalize("NFC", spelling).lower()


def spellings(page: str) -> list[str]:
    """The page path and every directory on the way to it, below ``/fs``."""
    parts = page.split("/")[2:]
    return ["/".join([paths.ROOT, *parts[: i + 1]]) for i in range(len(parts))]


def twins(pages: Iterable[str], others: Iterable[str] = ()) -> list[tuple[str, str]]:
    """Pairs of spellings (a page or a directory on the way) that differ only in case or
    normalisation. With ``others``, only pairs of one spelling from ``pages`` and one
    from ``others`` are reported, the one from ``pages`` first."""
    seen: dict[str, str] = {}
    origin: dict[str, bool] = {}
    found: list[tuple[str, str]] = []
    tagged = [(p, True) for p in pages] + [(p, False) for p in others]
    cross = any(not mine for _, mine in tagged)
    for page, mine in tagged:
        for spelling in spellings(page):
            key = fold(spelling)
            first = seen.setdefault(key, spelling)
            origin.setdefault(spelling, mine)
            if first != spelling and (not cross or origin[first] != mine):
                pair = (first, spelling) if not cross or origin[first] else (spelling, first)
                if pair not in found:
                    found.append(pair)
    return found


def is_dot_named(page: str) -> bool:
    return any(part.startswith(".") for part in page.split("/")[2:])


# ------------------------------------------------------------------ manifest
def read_manifest(directory: Path, project: str) -> dict[str, str] | None:
    """The manifest's pages, ``None`` when there is none; ``Refused`` when it cannot be read,
    is from another project, names a page twice or names a non-canonical path."""
    try:
        fd = os.open(directory / MANIFEST, os.O_RDONLY | NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise Refused(f"the manifest {MANIFEST} cannot be read: {error.strerror}") from error
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise Refused(f"the manifest {MANIFEST} is not a regular file")
        raw = handle.read(64 * 1024 * 1024 + 1)

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        for key in keys:
            if keys.count(key) > 1:
                raise Refused(f"the manifest names {key} twice")
        return dict(items)

    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=pairs)
    except (UnicodeDecodeError, ValueError) as error:
        if isinstance(error, Refused):
            raise
        raise Refused(f"the manifest {MANIFEST} cannot be read: {error}") from error
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("pages"), dict):
        raise Refused(f"the manifest {MANIFEST} is not format {FORMAT}")
    if data.get("project") != project:
        raise Refused(f"the manifest was exported from project {data.get('project')!r}, not {project!r}")
    return _manifest_pages(data["pages"])


def _manifest_pages(listed: dict[str, Any]) -> dict[str, str]:
    """The manifest's pages, each a canonical page path under /fs with a sha256 version, once."""
    pages: dict[str, str] = {}
    canon: dict[str, str] = {}
    for page, version in listed.items():
        if not isinstance(version, str) or not version.startswith("sha256:"):
            raise Refused(f"the manifest's version for {page} is not a sha256 version")
        try:
            canonical = paths.page_path(page)
        except BadRequest:
            canonical = ""
        if canonical != page or not page.startswith(paths.ROOT + "/"):
            raise Refused(f"the manifest names {page!r}, which is not a canonical page path under /fs")
        if canonical in canon:
            raise Refused(f"the manifest names {page} twice")
        canon[canonical] = page
        pages[page] = version
    return pages


def write_manifest(directory: Path, project: str, pages: dict[str, str]) -> None:
    body = json.dumps({"format": FORMAT, "project": project, "pages": dict(sorted(pages.items()))}, indent=2) + "\n"
    temporary = directory / (MANIFEST + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        if os.lstat(temporary).st_mode and not stat.S_ISREG(os.lstat(temporary).st_mode):
            raise Refused(f"{temporary} is not a regular file")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(body.encode("utf-8"))
    os.replace(temporary, directory / MANIFEST)


# ------------------------------------------------------------------ reading a bundle
@dataclass
class Bundle:
    pages: dict[str, str] = field(default_factory=dict)  # page -> text
    versions: dict[str, str] = field(default_factory=dict)
    refusals: list[str] = field(default_factory=list)


def read_bundle(directory: Path) -> Bundle:
    """Every non-dot file under ``directory`` as a page; every refusal collected."""
    bundle = Bundle()
    total = 0
    source: dict[str, str] = {}
    for relative, entry in _walk(directory, (), bundle.refusals):
        shown = "/".join(relative)
        page = "/".join([paths.ROOT, *(unicodedata.normalize("NFC", p) for p in relative)])
        try:
            canonical = paths.page_path(page)
        except BadRequest as error:
            bundle.refusals.append(f"{shown}: the hub would refuse the path ({error})")
            continue
        if canonical != page:
            bundle.refusals.append(f"{shown}: the hub would read the path as {canonical}")
            continue
        if page in source:
            bundle.refusals.append(f"{shown}: the same page as {source[page]} (one spelling is decomposed)")
            continue
        source[page] = shown
        if entry.st_size > MAX_PAGE_BYTES:
            bundle.refusals.append(f"{shown}: over the 1 MiB page limit")
            continue
        try:
            data = _read_nofollow(directory, relative)
        except OSError as error:
            bundle.refusals.append(f"{shown}: cannot be opened without following a link ({error.strerror})")
            continue
        if len(data) > MAX_PAGE_BYTES:
            bundle.refusals.append(f"{shown}: over the 1 MiB page limit")
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            bundle.refusals.append(f"{shown}: not UTF-8 text")
            continue
        total += len(data)
        bundle.pages[page] = text
        bundle.versions[page] = version_of(data)
    for a, b in twins(bundle.pages):
        bundle.refusals.append(f"{b}: differs only in case or normalisation from {a}")
    if len(bundle.pages) > MAX_BUNDLE_PAGES:
        bundle.refusals.append(f"the folder holds {len(bundle.pages)} pages, over the limit of {MAX_BUNDLE_PAGES}")
    if total > MAX_BUNDLE_BYTES:
        bundle.refusals.append(f"the folder holds {total} bytes of pages, over the limit of {MAX_BUNDLE_BYTES}")
    return bundle


def _walk(
    root: Path, relative: tuple[str, ...], refusals: list[str]
) -> Iterable[tuple[tuple[str, ...], os.stat_result]]:
    with os.scandir(root.joinpath(*relative)) as entries:
        listed = sorted(entries, key=lambda e: e.name)
    for entry in listed:
        if entry.name.startswith("."):
            continue
        path = (*relative, entry.name)
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            refusals.append(f"{'/'.join(path)}: a symbolic link")
        elif stat.S_ISDIR(info.st_mode):
            yield from _walk(root, path, refusals)
        elif stat.S_ISREG(info.st_mode):
            yield path, info
        else:
            refusals.append(f"{'/'.join(path)}: not a regular file")


def _read_nofollow(root: Path, relative: tuple[str, ...]) -> bytes:
    fd = _open_dirs(root, relative[:-1], create=False)
    try:
        file_fd = os.open(relative[-1], os.O_RDONLY | NOFOLLOW, dir_fd=fd)
    finally:
        os.close(fd)
    with os.fdopen(file_fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        return handle.read(MAX_PAGE_BYTES + 1)


def _open_dirs(root: Path, parts: Iterable[str], create: bool) -> int:
    """A descriptor of ``root/parts...``, each step opened without following a link."""
    fd = os.open(root, os.O_RDONLY | DIRECTORY | NOFOLLOW)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            step = os.open(part, os.O_RDONLY | DIRECTORY | NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = step
    except BaseException:
        os.close(fd)
        raise
    return fd


# ------------------------------------------------------------------ writing an export
def target_parts(page: str) -> tuple[str, ...]:
    parts = tuple(page.split("/")[2:])
    if not parts or any(p in ("", ".", "..") for p in parts):
        raise Refused(f"{page}: the path would leave the folder")
    return parts


def check_target(directory: Path, page: str) -> None:
    """Refuse a link on the way, a file where a directory goes, or a directory where the page goes."""
    parts = target_parts(page)
    here = directory
    for i, part in enumerate(parts):
        here = here / part
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(info.st_mode):
            raise Refused(f"{page}: {here} is a symbolic link")
        last = i == len(parts) - 1
        if not last and not stat.S_ISDIR(info.st_mode):
            raise Refused(f"{page}: {here} is not a directory")
        if last and not stat.S_ISREG(info.st_mode):
            raise Refused(f"{page}: {here} is a directory or not a regular file")


def removable(directory: Path, page: str) -> bool:
    """A regular file reached through plain directories inside the folder."""
    try:
        parts = target_parts(page)
    except Refused:
        return False
    here = directory
    for i, part in enumerate(parts):
        here = here / part
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            return False
        want = stat.S_ISREG if i == len(parts) - 1 else stat.S_ISDIR
        if not want(info.st_mode):
            return False
    return True


def write_page(directory: Path, page: str, data: bytes) -> None:
    parts = target_parts(page)
    fd = _open_dirs(directory, parts[:-1], create=True)
    try:
        file_fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | NOFOLLOW, 0o644, dir_fd=fd)
    finally:
        os.close(fd)
    with os.fdopen(file_fd, "wb") as handle:
        handle.write(data)


def remove_page(directory: Path, page: str) -> None:
    parts = target_parts(page)
    fd = _open_dirs(directory, parts[:-1], create=False)
    try:
        info = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        if stat.S_ISREG(info.st_mode):
            os.unlink(parts[-1], dir_fd=fd)
    finally:
        os.close(fd)
