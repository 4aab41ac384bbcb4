"""The first fence on paths is a law: whatever a caller writes, the canonical path it
answers lies inside the workspace, names no blocked folder, carries no character that reads
two ways, and is its own canonical form. Hypothesis tries to break it with percent-encoding,
``..`` chains, doubled slashes and backslashes, NUL and control characters, Unicode
look-alikes and over-long paths (10,000 examples for the main law under ``make deep``, 2,000
in CI: ``tests/budget.py``)."""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from knowledge_service.domain.workspace_paths import (
    BLOCKED_SEGMENTS,
    PATH_MAX,
    PathRefused,
    canon,
    contain,
    resolve,
)
from tests.budget import sized

ROOT = "/srv/colony/workspace"
MAIN_EXAMPLES = sized(ci=2_000, deep=10_000)
EXAMPLES = sized(ci=400, deep=1_500)

TOKENS = [
    "..",
    ".",
    "/",
    "//",
    "\\",
    "%2e",
    "%2E",
    "%2f",
    "%2F",
    "%5c",
    "%25",
    "%252e",
    "%252f",
    "%00",
    "%ff",
    "\x00",
    "\x1f",
    "\x7f",
    "\n",
    "\u200b",
    "\u202e",
    "\uff0e",
    "\uff0f",
    "\uff3c",
    "\u2215",
    "\u2044",
    "\u2024",
    "\ufe52",
    "e\u0301",
    "\u00e9",
    "\ufb01",
    ".git",
    ".GIT",
    ".Git",
    "data",
    "DATA",
    "__pycache__",
    ".pytest_cache",
    "node_modules",
    "docs",
    "handbook",
    "procedures",
    "a",
    "b c",
    "srv",
    "colony",
    "workspace",
    "etc",
    "passwd",
    "x" * 300,
]

paths = st.one_of(
    st.lists(st.sampled_from(TOKENS), max_size=24).map("".join),
    st.text(max_size=64),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=32).map(lambda t: t.replace("a", "../")),
)


def is_dot_cache(segment: str) -> bool:
    return segment.startswith(".") and segment.endswith(("_cache", "-cache"))


def is_safe(relative: str) -> bool:
    if relative == ".":
        return True
    if relative.startswith("/") or "\\" in relative:
        return False
    segments = relative.split("/")
    if any(s in ("", ".", "..") for s in segments):
        return False
    if any(s.casefold() in BLOCKED_SEGMENTS or is_dot_cache(s.casefold()) for s in segments):
        return False
    if any(unicodedata.category(c).startswith(("C", "Z")) and c != " " for c in relative):
        return False
    if relative != unicodedata.normalize("NFKC", relative) or re.search(r"%[0-9A-Fa-f]{2}", relative):
        return False
    joined = posixpath.normpath(posixpath.join(ROOT, relative))
    return joined.startswith(ROOT + "/")


@settings(max_examples=MAIN_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paths)
def test_a_canonical_path_stays_inside_and_is_its_own_canonical_form(path: str) -> None:
    try:
        relative = canon(path)
    except PathRefused:
        return
    assert is_safe(relative), (path, relative)
    assert canon(relative) == relative


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=16).map(lambda t: "/" + "".join(t)))
def test_an_absolute_path_is_accepted_only_inside_the_root(path: str) -> None:
    try:
        found = resolve(path, ROOT)
    except PathRefused:
        return
    assert found.absolute == ROOT or found.absolute.startswith(ROOT + "/")
    assert resolve(found.relative, ROOT) == found


DOT_DOT = ["..", "%2e%2e", "%2E%2e", "%252e%252e", ".%2e", "\uff0e\uff0e", "%25252e%25252e"]
SLASH = ["/", "//", "\\", "%2f", "%5c", "%252f", "\uff0f", "/./"]


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    st.lists(st.sampled_from(["docs", "a", "handbook", "."]), max_size=5),
    st.integers(min_value=1, max_value=6),
    st.data(),
)
def test_a_dot_dot_chain_that_climbs_above_the_root_is_refused(
    inside: list[str], extra: int, data: st.DataObject
) -> None:
    depth = sum(1 for s in inside if s != ".")
    climbs = [data.draw(st.sampled_from(DOT_DOT)) for _ in range(depth + extra)]
    separators = [data.draw(st.sampled_from(SLASH)) for _ in range(len(inside) + len(climbs) + 1)]
    pieces = [*inside, *climbs, "etc"]
    path = "".join(p + s for p, s in zip(pieces, separators, strict=False))
    with pytest.raises(PathRefused):
        resolve(path, ROOT)
    with pytest.raises(PathRefused):
        resolve(ROOT + "/" + path, ROOT)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(min_value=PATH_MAX + 1, max_value=PATH_MAX + 64), st.text(alphabet="ab/", min_size=1, max_size=64))
def test_an_over_long_path_is_refused(length: int, unit: str) -> None:
    # Hypothesis drawing 4,097 characters one by one cost ~30 ms an example; a short run of
    # the alphabet repeated to the drawn length reaches every length past the bound as well.
    path = (unit * (length // len(unit) + 1))[:length]
    with pytest.raises(PathRefused, match="longer than"):
        canon(path)


@pytest.mark.parametrize(
    "path",
    [
        "../etc",
        "docs/../../etc",
        "%2e%2e/etc",
        "%252e%252e%252fetc",
        "..%5cetc",
        "\uff0e\uff0e\uff0fetc",
        "/etc/passwd",
        "/srv/colony/workspace-other/x",
        "/srv/colony/workspace/../secrets",
        "docs/.git/config",
        "docs/.GIT",
        "data",
        "x/__pycache__/y",
        "x/.mypy_cache",
        "docs\x00/x",
        "docs/\u200bhidden",
        "a\u2215b",
        "%ff",
        "x" * (PATH_MAX + 1),
    ],
)
def test_each_known_escape_is_refused_with_a_reason(path: str) -> None:
    with pytest.raises(PathRefused) as refused:
        resolve(path, ROOT)
    assert refused.value.reason


@pytest.mark.parametrize(
    ("path", "relative"),
    [
        ("docs/procedures", "docs/procedures"),
        ("docs//procedures/", "docs/procedures"),
        ("./docs/./procedures", "docs/procedures"),
        ("docs/old/../procedures", "docs/procedures"),
        ("docs%2Fprocedures", "docs/procedures"),
        ("/srv/colony/workspace/handbook", "handbook"),
        ("/srv/colony/workspace", "."),
        ("\uff44ocs", "docs"),
        ("metadata/notes", "metadata/notes"),
    ],
)
def test_a_path_inside_is_answered_in_its_one_canonical_spelling(path: str, relative: str) -> None:
    found = resolve(path, ROOT)
    assert found.relative == relative
    assert found.absolute == (ROOT if relative == "." else f"{ROOT}/{relative}")


def test_a_symlink_out_of_a_mounted_workspace_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "workspace"
    (root / "docs").mkdir(parents=True)
    (root / ".git").mkdir()
    outside = tmp_path / "secrets"
    outside.mkdir()
    os.symlink(outside, root / "docs" / "escape")
    os.symlink(root / "docs", root / "alias")
    os.symlink(root / ".git", root / "docs" / "vcs")

    assert contain("alias", str(root)).relative == "alias"
    with pytest.raises(PathRefused, match="symbolic link"):
        contain("docs/escape", str(root))
    with pytest.raises(PathRefused, match="blocked folder"):
        contain("docs/vcs", str(root))


def test_an_unmounted_workspace_is_held_to_the_lexical_fence_alone(tmp_path: Path) -> None:
    missing = tmp_path / "not-mounted"
    assert contain("docs", str(missing)).absolute == f"{missing}/docs"
    with pytest.raises(PathRefused):
        contain("../x", str(missing))
