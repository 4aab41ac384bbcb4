"""The ``kb import`` plan as a pure function (folder, hub, manifest -> lines), and the
folder rules that need no hub: twins, the manifest, reading a bundle without links."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from kb import folder
from kb.folder import Refused
from kb.plan import ABSENT, Kind, Step, next_manifest, plan, summary
from kb.sync import Progress

PATHS = [f"/fs/{name}" for name in ("index.md", "log.md", "a.md", "d/b.md", "d/e/c.md")]
TABLE = re.compile(
    r"^(create \S+|update \S+|hub newer \S+: left as is|delete \S+|keep \S+: .+|conflict \S+: .+"
    r"|delete \S+: already gone|not attempted \S+)$"
)


def v(text: str) -> str:
    return folder.version_of(text.encode())


edits = st.lists(
    st.tuples(st.sampled_from(["folder", "hub"]), st.sampled_from(PATHS), st.sampled_from(["edit", "delete"])),
    max_size=12,
)


def apply(side: dict[str, str], op: str, path: str, n: int) -> None:
    if op == "delete":
        side.pop(path, None)
    else:
        side[path] = f"{path} edit {n}"


def hub_apply(hub: dict[str, str], steps: list[Step], folder_pages: dict[str, str]) -> dict[str, Step]:
    """What the hub does with each guarded write: it lands only when the guard holds."""
    done: dict[str, Step] = {}
    for step in steps:
        outcome = step
        if step.kind in (Kind.CREATE, Kind.UPDATE, Kind.DELETE):
            current = v(hub[step.path]) if step.path in hub else ABSENT
            if current != step.guard:
                outcome = Step(Kind.CONFLICT, step.path, "changed on the hub while the import ran")
            elif step.kind is Kind.DELETE:
                del hub[step.path]
            else:
                hub[step.path] = folder_pages[step.path]
        done[step.path] = outcome
    return done


@settings(max_examples=300, deadline=None)
@given(
    base=st.sets(st.sampled_from(PATHS)),
    sequence=edits,
    prune=st.booleans(),
    exported=st.booleans(),
)
def test_the_plan_is_a_table_line_per_page_and_never_overwrites_a_hub_change(
    base: set[str], sequence: list[tuple[str, str, str]], prune: bool, exported: bool
) -> None:
    # Given a base exported to a folder (or a folder with no manifest), then edits on both sides
    hub = {p: f"{p} original" for p in base}
    local = dict(hub)
    manifest = {p: v(t) for p, t in hub.items()} if exported else {}
    for n, (side, path, op) in enumerate(sequence):
        apply(local if side == "folder" else hub, op, path, n)
    folder_versions = {p: v(t) for p, t in local.items()}
    hub_versions = {p: v(t) for p, t in hub.items()}
    # When the import plans
    steps = plan(folder_versions, hub_versions, manifest, prune)
    # Then every line is one of the table's, one per page at most
    assert all(TABLE.match(s.line()) for s in steps), [s.line() for s in steps]
    assert len({s.path for s in steps}) == len(steps)
    for step in steps:
        if step.kind in (Kind.CREATE, Kind.UPDATE, Kind.DELETE):
            # a write always carries the hub's current version, and a hub change is never the one written over
            assert step.guard == hub_versions.get(step.path, ABSENT)
            assert step.path not in hub_versions or manifest.get(step.path) == hub_versions[step.path]
            assert prune or step.kind is not Kind.DELETE
            assert step.kind is not Kind.DELETE or step.path in manifest
    # a page the folder holds with other bytes than the hub always gets a line
    for path, version in folder_versions.items():
        if hub_versions.get(path) != version:
            assert any(s.path == path for s in steps)
    # And after the hub applied it and the manifest was rewritten, a second import changes nothing
    done = hub_apply(hub, steps, local)
    again = plan(
        folder_versions,
        {p: v(t) for p, t in hub.items()},
        next_manifest(folder_versions, hub_versions, manifest, done),
        prune,
    )
    assert not [s for s in again if s.kind in (Kind.CREATE, Kind.UPDATE, Kind.DELETE)]


def test_each_line_reads_as_the_table_says() -> None:
    m, h, f = v("m"), v("h"), v("f")
    p = "/fs/p.md"
    assert plan({p: f}, {p: f}, {p: m}, False) == []
    assert plan({p: f}, {}, {}, False)[0].line() == "create /fs/p.md"
    assert plan({p: f}, {p: m}, {p: m}, False)[0].line(dry_run=True) == "would update /fs/p.md"
    assert plan({p: m}, {p: h}, {p: m}, False)[0].line() == "hub newer /fs/p.md: left as is"
    assert plan({p: m}, {}, {p: m}, False)[0].line() == "hub newer /fs/p.md: left as is"
    assert plan({}, {p: m}, {p: m}, True)[0].line() == "delete /fs/p.md"
    assert plan({}, {p: m}, {p: m}, False)[0].line().startswith("keep /fs/p.md: ")
    assert plan({p: f}, {p: h}, {p: m}, False)[0].line().startswith("conflict /fs/p.md: ")
    assert plan({p: f}, {}, {p: m}, False)[0].kind is Kind.CONFLICT
    assert plan({p: f}, {p: h}, {}, False)[0].kind is Kind.CONFLICT
    assert plan({}, {p: h}, {p: m}, True)[0].kind is Kind.CONFLICT
    assert plan({}, {p: h}, {}, True) == []  # created on the hub after the export: never pruned
    assert Step(Kind.ALREADY_GONE, p).line() == "delete /fs/p.md: already gone"
    assert Step(Kind.NOT_ATTEMPTED, p).line() == "not attempted /fs/p.md"
    assert summary([Step(Kind.CREATE, p)], dry_run=True).startswith("1 would create, 0 would update")


def test_twins_fold_case_and_normalisation_on_the_way_too() -> None:
    assert folder.twins(["/fs/Notes.md", "/fs/notes.md"])
    assert folder.twins(["/fs/Runbooks/a.md", "/fs/runbooks/b.md"])
    assert folder.twins(["/fs/caf\u00e9.md", "/fs/cafe\u0301.md"])
    assert not folder.twins(["/fs/a.md", "/fs/b.md", "/fs/a/b.md"])
    assert folder.twins(["/fs/a.md"], ["/fs/A.md"]) == [("/fs/a.md", "/fs/A.md")]
    assert not folder.twins(["/fs/a.md"], ["/fs/X.md", "/fs/x.md"])  # the hub's own pair is not the folder's


def manifest(tmp_path: Path, body: str) -> Path:
    (tmp_path / folder.MANIFEST).write_text(body)
    return tmp_path


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ('{"format": 1, "project": "other", "pages": {}}', "exported from project"),
        ('{"format": 1, "project": "p", "pages": {"/fs/a.md": "sha256:1", "/fs/a.md": "sha256:2"}}', "twice"),
        ('{"format": 1, "project": "p", "pages": {"/fs/x/../a.md": "sha256:1"}}', "not a canonical"),
        ('{"format": 1, "project": "p", "pages": {"a.md": "sha256:1"}}', "not a canonical"),
        ('{"format": 2, "project": "p", "pages": {}}', "format 1"),
        ("{nope", "cannot be read"),
    ],
)
def test_a_manifest_that_cannot_be_trusted_refuses(tmp_path: Path, body: str, why: str) -> None:
    with pytest.raises(Refused, match=why):
        folder.read_manifest(manifest(tmp_path, body), "p")


def test_a_bundle_reads_nfc_names_and_refuses_links_bytes_and_sizes(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text("# ok\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref\n")
    (tmp_path / "cafe\u0301.md").write_text("x\n")
    (tmp_path / "bin.md").write_bytes(b"\xff\xfe")
    (tmp_path / "big.md").write_bytes(b"x" * (folder.MAX_PAGE_BYTES + 1))
    os.symlink(tmp_path / "ok.md", tmp_path / "link.md")
    (tmp_path / "Ok.md").write_text("# twin\n")
    (tmp_path / "kv").mkdir()
    (tmp_path / "kv" / "k.md").write_text("k\n")  # /fs/kv/k.md: a page like any other
    (tmp_path / "tab\t.md").write_text("t\n")
    bundle = folder.read_bundle(tmp_path)
    assert set(bundle.pages) == {"/fs/ok.md", "/fs/Ok.md", "/fs/caf\u00e9.md", "/fs/kv/k.md"}
    joined = "\n".join(bundle.refusals)
    for why in ("link.md: a symbolic link", "bin.md: not UTF-8", "big.md: over the 1 MiB", "differs only in case"):
        assert why in joined
    assert "tab\t.md: the hub would refuse the path" in joined


def test_a_manifest_is_written_whole_and_read_back(tmp_path: Path) -> None:
    folder.write_manifest(tmp_path, "p", {"/fs/b.md": "sha256:2", "/fs/a.md": "sha256:1"})
    data = json.loads((tmp_path / folder.MANIFEST).read_text())
    assert data == {"format": 1, "project": "p", "pages": {"/fs/a.md": "sha256:1", "/fs/b.md": "sha256:2"}}
    assert folder.read_manifest(tmp_path, "p") == data["pages"]


def test_an_export_write_does_not_follow_a_link_put_in_place(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    d = tmp_path / "d"
    d.mkdir()
    os.symlink(outside, d / "sub")
    with pytest.raises(OSError):  # noqa: PT011
        folder.write_page(d, "/fs/sub/a.md", b"x")
    os.symlink(outside / "t.md", d / "t.md")
    with pytest.raises(OSError):  # noqa: PT011
        folder.write_page(d, "/fs/t.md", b"x")
    assert list(outside.iterdir()) == []
    with pytest.raises(Refused, match="symbolic link"):
        folder.check_target(d, "/fs/sub/a.md")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_a_bar_on_a_terminal_and_lines_otherwise() -> None:
    terminal = _Terminal()
    with Progress("write", 4, terminal) as bar:
        for _ in range(4):
            bar.step()
    drawn = terminal.getvalue()
    assert "write" in drawn and "4/4" in drawn and "\x1b[" in drawn  # rich's bar, drawn for a terminal
    plain = io.StringIO()
    with Progress("read", 1000, plain) as lines:
        for _ in range(1000):
            lines.step()
    assert plain.getvalue() == "kb: read 500/1000\nkb: read 1000/1000\n"
    small = io.StringIO()
    with Progress("read", 10, small) as quiet:
        quiet.step()
    assert small.getvalue() == ""
    empty = _Terminal()
    with Progress("write", 0, empty):
        pass
    assert empty.getvalue() == ""  # a dry run, or nothing to write: no bar at all
