"""The first fence on paths (the specification's IWorkspacePathGuard): every path an import
names is resolved against the colony's workspace root before anything is sent.

``canon`` is pure and total: it either answers the path's one canonical spelling, relative
to the workspace root, or raises ``PathRefused`` with the reason. It is a law, property-tested
(``tests/unit/test_workspace_paths.py``): no answer escapes the root, names a blocked
segment or carries a character that could be read two ways, and ``canon(canon(p)) ==
canon(p)``. In order:

1. bounded before it is read: at most ``PATH_MAX`` characters in, ``PATH_MAX_BYTES`` UTF-8
   bytes out, ``SEGMENT_MAX_BYTES`` a segment;
2. percent-encoding decoded until nothing more decodes (``%252e`` is ``%2e`` is ``.``), so a
   layer that decodes once more can never see a different path;
3. Unicode folded to NFKC, so look-alikes that fold (fullwidth ``．．／``) are read as what
   they fold to; NUL, control and format characters (zero-width, bidi), spaces other than the plain
   one, and separator
   look-alikes that do not fold (``∕``, ``⁄``, ``⧸``) are refused;
4. ``\\`` read as a separator (a Windows engine would), doubled slashes and ``.`` collapsed;
5. an absolute path must lie inside the root; a relative one is taken from the root; ``..``
   is resolved lexically and refused if it would climb above the root at any point; a drive
   letter (``C:``, which a Windows engine reads as absolute) is refused;
6. a blocked segment (``.git``, ``data``, caches), in any letter case, is refused.

``file_name`` holds an upload's file name (the upstream contract's "relative name") to the
same rules, so a name FORAGER is sent is one spelling under the batch, never above it, and
refuses besides what no file system should name (issue 39): a segment that is blank or only
spaces, one ending in ``.`` or a space (Windows drops them, so ``x.`` and ``x`` would be one
file), and a Windows device name (``con``, ``prn``, ``aux``, ``nul``, ``com1``–``com9``,
``lpt1``–``lpt9``, in any letter case, with or without an extension).

``contain`` adds what only the host can know: where the workspace is mounted here, symlinks
are followed and the real path must still lie inside the real root.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote

PATH_MAX = 4096
PATH_MAX_BYTES = 4096
SEGMENT_MAX_BYTES = 255
BLOCKED_SEGMENTS = frozenset(
    {".git", "data", ".cache", "cache", "caches", "__pycache__", "node_modules", ".venv", ".hg", ".svn"}
)
"""Segments an import never reads: version control, the engine's own data, caches."""

WINDOWS_DEVICES = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{n}" for n in range(1, 10)), *(f"lpt{n}" for n in range(1, 10))}
)
"""Names Windows reads as a device in any folder, whatever extension follows (``nul.md``)."""

_CACHE_SUFFIX = re.compile(r"^\..*[_-]cache$")  # .pytest_cache, .mypy_cache, .ruff_cache
_SEPARATOR_LOOKALIKES = frozenset("\u2215\u2044\u29f8\u29f9\u2571\u2572\u29f5\u3033\u3035\u1735\u2cc6")
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_DRIVE = re.compile(r"^[A-Za-z]:")


class PathRefused(Exception):
    """The path cannot be read inside the workspace; ``reason`` says why, for the caller."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class WorkspacePath:
    relative: str  # the canonical spelling under the root, "." for the root itself
    absolute: str  # root + relative, what FORAGER is sent


def canon(path: str, *, label: str | None = None) -> str:
    """The path's canonical spelling relative to the workspace root, or ``PathRefused``.

    Absolute paths are not accepted here (``resolve`` strips the root first); the answer
    is itself a valid input with the same answer.
    """
    named = label if label is not None else path
    if len(path) > PATH_MAX:
        raise PathRefused(named, f"it is longer than {PATH_MAX} characters")
    text = unicodedata.normalize("NFKC", _fully_decoded(path, named))
    _refuse_characters(text, named)
    if _PERCENT.search(text):  # folding made a new escape: refuse rather than guess
        raise PathRefused(named, "it contains percent-encoding that decodes differently when read again")
    text = text.replace("\\", "/")
    if text.startswith("/"):
        raise PathRefused(named, "it is absolute; name it relative to the workspace")
    segments = _segments(text, named)
    if segments and _DRIVE.match(segments[0]):
        raise PathRefused(named, "it names a drive letter; name it relative to the workspace")
    relative = "/".join(segments) or "."
    if len(relative.encode("utf-8")) > PATH_MAX_BYTES:
        raise PathRefused(named, f"it is longer than {PATH_MAX_BYTES} bytes")
    return relative


def file_name(name: str) -> str:
    """An upload's file name held to the fence's rules (``canon``): its canonical relative
    spelling, or ``PathRefused``. The same rule on every route that forwards a name (the
    inline upload, the upload session and preflight), so none is sent above the batch."""
    relative = canon(name)
    if relative == ".":
        raise PathRefused(name, "it names no file")
    for segment in relative.split("/"):
        if not segment.strip():
            raise PathRefused(name, "it has a blank name or segment")
        if segment.endswith((".", " ")):
            raise PathRefused(name, "a segment ends in '.' or a space, which Windows drops")
        if segment.split(".", 1)[0].rstrip(" ").casefold() in WINDOWS_DEVICES:
            raise PathRefused(name, f"'{shown(segment)}' is a Windows device name")
    return relative


def _refuse_characters(text: str, named: str) -> None:
    for character in text:
        if character in _SEPARATOR_LOOKALIKES:
            raise PathRefused(named, "it contains a character that looks like a path separator")
        category = unicodedata.category(character)
        if category in _REFUSED_CATEGORIES:
            raise PathRefused(named, "it contains a control, format or unassigned character")
        if category == "Zs" and character != " ":
            raise PathRefused(named, "it contains a space that is not the plain space")


def _segments(text: str, named: str) -> list[str]:
    """The path's segments with ``.`` and empty ones dropped and ``..`` resolved, refusing a
    climb above the root and a blocked segment."""
    segments: list[str] = []
    for segment in text.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not segments:
                raise PathRefused(named, "it climbs out of the workspace with '..'")
            segments.pop()
            continue
        if len(segment.encode("utf-8")) > SEGMENT_MAX_BYTES:
            raise PathRefused(named, f"a segment is longer than {SEGMENT_MAX_BYTES} bytes")
        folded = segment.casefold()
        if folded in BLOCKED_SEGMENTS or _CACHE_SUFFIX.match(folded):
            raise PathRefused(
                named, f"'{shown(segment)}' is a blocked folder (version control, engine data or a cache)"
            )
        segments.append(segment)
    return segments


def normalized_root(root: str) -> str:
    """The workspace root as a clean absolute path (a deployment parameter, trusted)."""
    cleaned = posixpath.normpath(root)
    if not cleaned.startswith("/"):
        raise ValueError(f"the workspace root must be absolute, not {root!r}")
    return cleaned


def resolve(path: str, root: str) -> WorkspacePath:
    """``path`` (relative to the root, or absolute inside it) as a contained workspace path."""
    base = normalized_root(root)
    text = path
    if len(text) > PATH_MAX:
        raise PathRefused(path[:80] + "…", f"it is longer than {PATH_MAX} characters")
    probe = unicodedata.normalize("NFKC", _fully_decoded(text, path)).replace("\\", "/")
    if probe.startswith("/"):
        inside = posixpath.normpath(probe)
        prefix = base.rstrip("/") + "/"
        if inside == base:
            text = "."
        elif inside.startswith(prefix):
            text = inside[len(prefix) :]
        else:
            raise PathRefused(path, f"it is outside the colony's workspace ({base})")
    relative = canon(text, label=path)
    absolute = base if relative == "." else posixpath.join(base, relative)
    return WorkspacePath(relative, absolute)


def contain(path: str, root: str) -> WorkspacePath:
    """``resolve``, then, where the workspace is mounted on this host, follow symlinks: the
    real path must lie inside the real root, and must not pass through a blocked folder."""
    found = resolve(path, root)
    base = normalized_root(root)
    if not os.path.isdir(base):
        return found  # not mounted here (a serverless host): FORAGER's own fence follows links
    real_root = os.path.realpath(base)
    real = os.path.realpath(found.absolute)
    if real != real_root and not real.startswith(real_root.rstrip("/") + "/"):
        raise PathRefused(path, "it leads out of the colony's workspace through a symbolic link")
    canon(posixpath.relpath(real, real_root), label=path)  # a link into .git is still .git
    return found


def _fully_decoded(text: str, named: str) -> str:
    """Percent-decoded until nothing more decodes; each pass shortens the text, so it ends."""
    while _PERCENT.search(text):
        try:
            text = unquote(text, errors="strict")
        except UnicodeDecodeError:
            raise PathRefused(named, "it contains percent-encoding that is not UTF-8") from None
    return text


def shown(path: str, limit: int = 200) -> str:
    """A path as a message may quote it: control characters escaped, long ones cut."""
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in path)
    return text if len(text) <= limit else text[:limit] + "…"
