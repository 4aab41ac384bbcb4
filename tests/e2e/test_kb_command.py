"""The ``kb`` command against the local stack: export, edit in the folder, import, and
every refusal and exit code the specification's "Sync with a folder" names."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from kb.__main__ import main
from kb.hub import Hub as KbHub
from tests.localstack import LocalStack, bearer

pytestmark = pytest.mark.e2e

INDEX = "---\nokf_version: 1\ntitle: Home\n---\n# Home\n\n[a](a.md) [runbooks](runbooks/deploy.md) [log](log.md)\n"
LOG = "---\ntype: Reference\ntitle: Log\n---\n# Log\n"
A = "---\ntype: Concept\ntitle: A\n---\n# A\n\n[home](index.md)\n"
DEPLOY = "---\ntype: Runbook\ntitle: Deploy\n---\n# Deploy\n\n[home](../index.md)\n"


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()


@dataclass
class Hub:
    """A fresh project on the shared stack, with the human admin's token, and a way to run ``kb``."""

    stack: LocalStack
    project: str
    http: httpx.Client
    capsys: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch

    def kb(self, *args: str, token: str | None = None, url: str | None = None) -> Run:
        self.monkeypatch.setenv("HUB_URL", url or self.stack.url)
        self.monkeypatch.setenv("HUB_TOKEN", token or self.stack.admin_token)
        self.monkeypatch.setenv("HUB_PROJECT", self.project)
        self.capsys.readouterr()
        code = main(list(args))
        captured = self.capsys.readouterr()
        return Run(code, captured.out, captured.err)

    @property
    def base(self) -> str:
        return f"/api/v1/projects/{self.project}/kb"

    def put(self, path: str, content: str) -> str:
        answer = self.http.put(f"{self.base}/pages/{path.lstrip('/')}", json={"content": content})
        assert answer.status_code == 200, answer.text
        return str(answer.json()["version"])

    def delete(self, path: str) -> None:
        assert self.http.delete(f"{self.base}/pages/{path.lstrip('/')}").status_code == 200

    def content(self, path: str) -> str | None:
        answer = self.http.get(f"{self.base}/pages/{path.lstrip('/')}")
        return str(answer.json()["content"]) if answer.status_code == 200 else None

    def writes(self) -> int:
        return int(self.http.get(f"{self.base}/history", params={"limit": "0"}).json()["total"])


@pytest.fixture
def hub(
    stack: LocalStack, http: httpx.Client, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Hub:
    project = f"kb-{uuid.uuid4().hex[:8]}"
    stack.admin("project", "create", project, "--organization", "colony")
    stack.admin("principal", "grant", "local-admin", f"--role={project}=admin")
    http.headers.update(bearer(stack.admin_token))
    made = Hub(stack, project, http, capsys, monkeypatch)
    for path, text in (("index.md", INDEX), ("log.md", LOG), ("a.md", A), ("runbooks/deploy.md", DEPLOY)):
        made.put(path, text)
    return made


def exported(hub: Hub, tmp_path: Path) -> Path:
    d = tmp_path / "kb"
    run = hub.kb("export", "--dir", str(d))
    assert run.code == 0, run.err
    return d


def test_export_edit_in_the_folder_import_and_the_same_import_again_changes_nothing(hub: Hub, tmp_path: Path) -> None:
    # Given an exported base
    d = exported(hub, tmp_path)
    assert (d / "runbooks" / "deploy.md").read_text() == DEPLOY
    manifest = json.loads((d / ".agent-hub-kb.json").read_text())
    assert manifest["format"] == 1 and manifest["project"] == hub.project
    assert sorted(manifest["pages"]) == ["/fs/a.md", "/fs/index.md", "/fs/log.md", "/fs/runbooks/deploy.md"]
    # When the folder edits one page and adds one, and is imported
    (d / "a.md").write_text(A + "\nmore\n")
    (d / "runbooks" / "new.md").write_text("---\ntype: Runbook\n---\n# New\n[home](../index.md)\n")
    run = hub.kb("import", "--dir", str(d))
    # Then exactly those two are written, with a last counting line, and lint warnings on stderr
    assert run.code == 0, run.err
    assert run.lines[:-1] == ["update /fs/a.md", "create /fs/runbooks/new.md"]
    assert run.lines[-1].startswith("1 create, 1 update, 0 hub newer")
    assert "agent-hub: lint missing_index_entry /fs/runbooks/new.md: " in run.err
    assert hub.content("a.md") == A + "\nmore\n"
    # And a second import changes nothing
    before = hub.writes()
    again = hub.kb("import", "--dir", str(d))
    assert again.code == 0 and again.lines == [again.lines[-1]] and again.lines[-1].startswith("0 create, 0 update")
    assert hub.writes() == before


def test_a_page_changed_on_both_sides_is_a_conflict_and_everything_else_is_written(hub: Hub, tmp_path: Path) -> None:
    d = exported(hub, tmp_path)
    hub.put("a.md", A + "hub edit\n")
    hub.put("log.md", LOG + "hub only\n")
    (d / "a.md").write_text(A + "folder edit\n")
    (d / "runbooks" / "deploy.md").write_text(DEPLOY + "folder edit\n")
    dry = hub.kb("import", "--dir", str(d), "--dry-run")
    assert dry.code == 1
    assert dry.lines[:-1] == [
        "conflict /fs/a.md: changed in the folder and on the hub",
        "hub newer /fs/log.md: left as is",
        "would update /fs/runbooks/deploy.md",
    ]
    assert hub.content("runbooks/deploy.md") == DEPLOY
    run = hub.kb("import", "--dir", str(d))
    assert run.code == 1
    assert run.lines[:-1] == [l.replace("would ", "") for l in dry.lines[:-1]]  # noqa: E741
    assert hub.content("a.md") == A + "hub edit\n" and hub.content("runbooks/deploy.md") == DEPLOY + "folder edit\n"
    assert hub.content("log.md") == LOG + "hub only\n"


def test_prune_deletes_only_what_the_manifest_names(hub: Hub, tmp_path: Path) -> None:
    d = exported(hub, tmp_path)
    hub.put("later.md", A)  # created on the hub after the export
    (d / "a.md").unlink()
    kept = hub.kb("import", "--dir", str(d))
    assert kept.code == 0 and kept.lines[0].startswith("keep /fs/a.md: ")
    assert hub.content("a.md") == A
    pruned = hub.kb("import", "--dir", str(d), "--prune")
    assert pruned.code == 0 and pruned.lines[:-1] == ["delete /fs/a.md"]
    assert hub.content("a.md") is None and hub.content("later.md") == A
    assert "/fs/a.md" not in json.loads((d / ".agent-hub-kb.json").read_text())["pages"]
    assert hub.kb("import", "--dir", str(d), "--prune").lines[:-1] == []


def test_a_folder_with_no_manifest_is_a_new_bundle(hub: Hub, tmp_path: Path) -> None:
    d = tmp_path / "new"
    d.mkdir()
    (d / "a.md").write_text("other bytes\n")
    (d / "b.md").write_text("---\ntype: Concept\n---\nb\n")
    run = hub.kb("import", "--dir", str(d))
    assert run.code == 1
    assert run.lines[:-1] == [
        "conflict /fs/a.md: the hub has this page with other bytes and the export did not",
        "create /fs/b.md",
    ]


def refused_with_nothing_written(hub: Hub, d: Path, *expected: str, prune: bool = False) -> None:
    before = hub.writes()
    run = hub.kb("import", "--dir", str(d), *(["--prune"] if prune else []))
    assert run.code == 1, run.err
    assert run.out == ""
    for text in expected:
        assert text in run.err
    assert hub.writes() == before


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda d: os.symlink(d / "a.md", d / "link.md"), "link.md: a symbolic link"),
        (lambda d: (d / "bin.md").write_bytes(b"\xff\xfe"), "bin.md: not UTF-8"),
        (lambda d: (d / "big.md").write_bytes(b"x" * (1024 * 1024 + 1)), "big.md: over the 1 MiB"),
        (lambda d: (d / "A.md").write_text("twin\n"), "differs only in case"),
        (lambda d: (d / "Runbooks").mkdir() or (d / "Runbooks" / "x.md").write_text("x\n"), "differs only in case"),
        (lambda d: (d / "a\tb.md").write_text("x\n"), "control character"),
        (lambda d: (d / "x\\y.md").write_text("x\n"), "backslash"),
        (lambda d: (d / "bad.md").write_text("---\nokf_version: 1\ntype: Concept\n---\n"), "okf_version_misplaced"),
        (lambda d: (d / "up.md").write_text("---\ntype: Concept\n---\n[x](../../etc.md)\n"), "link_escapes_bundle"),
        (lambda d: (d / "un.md").write_text("---\ntype: [Concept\n---\n"), "unparsed_frontmatter"),
    ],
)
def test_every_file_refusal_writes_nothing(hub: Hub, tmp_path: Path, make: Any, why: str) -> None:
    d = exported(hub, tmp_path)
    (d / "a.md").write_text(A + "edit that would be written\n")
    make(d)
    refused_with_nothing_written(hub, d, why, "nothing was written")


@pytest.mark.parametrize(
    ("pages", "why"),
    [
        ({"/fs/a.md": "sha256:" + "0" * 64}, "exported from project"),
        ("twice", "twice"),
        ({"/fs/x/../a.md": "sha256:" + "0" * 64}, "not a canonical page path"),
    ],
)
def test_a_manifest_from_elsewhere_or_malformed_refuses(hub: Hub, tmp_path: Path, pages: Any, why: str) -> None:
    d = exported(hub, tmp_path)
    (d / "a.md").write_text(A + "edit\n")
    manifest = d / ".agent-hub-kb.json"
    if pages == "twice":
        v = "sha256:" + "0" * 64
        manifest.write_text(
            f'{{"format": 1, "project": "{hub.project}", "pages": {{"/fs/a.md": "{v}", "/fs/a.md": "{v}"}}}}'
        )
    else:
        project = "elsewhere" if why.startswith("exported") else hub.project
        manifest.write_text(json.dumps({"format": 1, "project": project, "pages": pages}))
    refused_with_nothing_written(hub, d, why)


def test_a_case_twin_of_a_page_the_hub_keeps_refuses_unless_pruned(hub: Hub, tmp_path: Path) -> None:
    d = exported(hub, tmp_path)
    (d / "a.md").rename(d / "A.md")
    refused_with_nothing_written(hub, d, "/fs/A.md: differs only in case or normalisation from /fs/a.md on the hub")
    run = hub.kb("import", "--dir", str(d), "--prune")
    assert run.code == 0, run.err
    assert run.lines[:-1] == ["create /fs/A.md", "delete /fs/a.md"]


def test_a_refusal_from_the_hub_stops_the_import_with_its_code(hub: Hub, tmp_path: Path) -> None:
    d = exported(hub, tmp_path)
    (d / "a.md").write_text("---\ntype: Concept\ntitle: bad\x01title\n---\n")
    (d / "b.md").write_text("---\ntype: Concept\n---\n")
    (d / "runbooks" / "deploy.md").write_text(DEPLOY + "edit\n")
    run = hub.kb("import", "--dir", str(d))
    assert run.code == 65, run.err
    # the refused write is not attempted; the writes already in flight beside it (eight at once)
    # end and each line says what happened, true of the hub; none is begun after the stop
    assert run.lines[0] == "not attempted /fs/a.md"
    assert run.lines[1] in ("create /fs/b.md", "not attempted /fs/b.md")
    assert run.lines[2] in ("update /fs/runbooks/deploy.md", "not attempted /fs/runbooks/deploy.md")
    assert (hub.content("b.md") is not None) == run.lines[1].startswith("create")
    assert (hub.content("runbooks/deploy.md") == DEPLOY + "edit\n") == run.lines[2].startswith("update")
    assert "invalid_argument" in run.err
    assert hub.content("a.md") == A


def test_export_refusals_force_and_dot_named_pages(hub: Hub, tmp_path: Path) -> None:
    hub.put(".hidden/x.md", A)
    d = exported(hub, tmp_path)
    assert not (d / ".hidden").exists()
    # a folder holding anything is refused without --force
    again = hub.kb("export", "--dir", str(d))
    assert again.code == 1 and "not empty" in again.err
    # --force removes only the regular files of pages the old manifest names and the hub no longer has
    hub.delete("a.md")
    (d / "mine.txt").write_text("not a page of the export\n")
    forced = hub.kb("export", "--dir", str(d), "--force")
    assert forced.code == 0, forced.err
    assert forced.lines == ["removed /fs/a.md"] and "/fs/.hidden/x.md left out" in forced.err
    assert not (d / "a.md").exists() and (d / "mine.txt").exists()
    # a link on the way to a page refuses the export before anything is written
    (d / "runbooks" / "deploy.md").unlink()
    (d / "runbooks").rmdir()
    os.symlink(tmp_path, d / "runbooks")
    linked = hub.kb("export", "--dir", str(d), "--force")
    assert linked.code == 1 and "symbolic link" in linked.err
    # two hub pages that differ only in case refuse the export
    hub.put("Index.md", A)
    twins = hub.kb("export", "--dir", str(tmp_path / "fresh"))
    assert twins.code == 1 and "differ only in case" in twins.err and not (tmp_path / "fresh").exists()


def test_exit_codes_for_the_client_itself(hub: Hub, tmp_path: Path) -> None:
    assert hub.kb("export", "--dir", str(tmp_path / "x"), token="not-a-token").code == 77
    assert hub.kb("export", "--dir", str(tmp_path / "x"), url="http://127.0.0.1:9").code == 69
    hub.monkeypatch.delenv("HUB_URL")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
    none = subprocess.run(
        [sys.executable, "-m", "kb", "export", "--dir", str(tmp_path / "x")], capture_output=True, env=env, check=False
    )
    assert none.returncode == 78, none.stderr
    usage = subprocess.run([sys.executable, "-m", "kb", "import"], capture_output=True, env=env, check=False)
    assert usage.returncode == 2
    assert not (tmp_path / "x").exists()


def test_the_shorthands(hub: Hub, tmp_path: Path) -> None:
    assert hub.kb("get", "a.md").out == A
    page = tmp_path / "p.md"
    page.write_text("---\ntype: Concept\n---\n# P\n")
    put = hub.kb("put", "svc/p.md", str(page), "--if-version", "absent")
    assert put.code == 0 and put.out.startswith("/fs/svc/p.md sha256:")
    assert hub.kb("put", "svc/p.md", str(page), "--if-version", "absent").code == 1  # the hub's conflict
    assert "/fs/svc/\t1 entries" in hub.kb("ls").out
    assert hub.kb("history", "svc/p.md").out.split("\t")[2] == "created"


def test_the_listing_is_paged_through_with_after_and_carries_each_version(hub: Hub, tmp_path: Path) -> None:
    # Given a listing page far smaller than the base, the export by one read a page still reads every page
    hub.monkeypatch.setattr("kb.hub.LISTING_PAGE", 2)
    d = tmp_path / "kb"
    run = hub.kb("export", "--dir", str(d), "--per-page")
    assert run.code == 0, run.err
    pages = json.loads((d / ".agent-hub-kb.json").read_text())["pages"]
    assert sorted(pages) == ["/fs/a.md", "/fs/index.md", "/fs/log.md", "/fs/runbooks/deploy.md"]
    rows = hub.http.get(f"{hub.base}/pages", params={"meta": "1", "after": "/fs/index.md"}).json()["entries"]
    assert [r["path"] for r in rows] == ["/fs/log.md", "/fs/runbooks", "/fs/runbooks/deploy.md"]
    assert rows[0]["version"] == pages["/fs/log.md"]


def test_a_page_that_changes_on_the_hub_while_the_import_runs_is_a_conflict(hub: Hub, tmp_path: Path) -> None:
    # Given a plan made from a listing, after which another writer edits one page and deletes another
    d = exported(hub, tmp_path)
    (d / "a.md").write_text(A + "folder edit\n")
    (d / "log.md").unlink()
    (d / "runbooks" / "deploy.md").write_text(DEPLOY + "folder edit\n")
    listed = KbHub.pages

    def racing(self: KbHub) -> dict[str, dict[str, Any]]:
        rows = listed(self)
        hub.put("a.md", A + "racing writer\n")
        hub.delete("log.md")
        return rows

    hub.monkeypatch.setattr(KbHub, "pages", racing)
    # When the import writes
    run = hub.kb("import", "--dir", str(d), "--prune")
    # Then the guard refuses the raced page, the raced delete is already gone, and the rest is made
    assert run.code == 1, run.err
    assert run.lines[:-1] == [
        "conflict /fs/a.md: changed on the hub while the import ran",
        "delete /fs/log.md: already gone",
        "update /fs/runbooks/deploy.md",
    ]
    assert hub.content("a.md") == A + "racing writer\n"
    assert hub.content("runbooks/deploy.md") == DEPLOY + "folder edit\n"


REAL_WORLD = Path(__file__).parent / "realworld_docs"
"""A documentation site written the way MkDocs Material's own docs are: custom frontmatter keys
holding nested maps and lists (``date: created:``, ``search: boost:``, ``social:
cards_layout_options:``, ``plugins:``), comments, block scalars, content tabs, admonitions and
code fences holding ``---``."""


def test_a_real_world_documentation_folder_imports_and_exports_back_byte_identical(hub: Hub, tmp_path: Path) -> None:
    # Given a folder of real-world pages, no manifest (a new bundle), in a fresh project
    d = tmp_path / "site"
    shutil.copytree(REAL_WORLD, d)
    pages = sorted(p.relative_to(d).as_posix() for p in d.rglob("*.md"))
    for path in ("index.md", "log.md", "a.md", "runbooks/deploy.md"):
        hub.delete(path)
    # When it is planned, then imported
    plan = hub.kb("import", "--dir", str(d), "--dry-run")
    assert plan.code == 0, plan.err
    assert "unparsed_frontmatter" not in plan.err
    assert sorted(line.removeprefix("would create /fs/") for line in plan.lines[:-1]) == pages
    run = hub.kb("import", "--dir", str(d))
    assert run.code == 0, run.err
    assert run.lines[-1].startswith(f"{len(pages)} create, 0 update")
    # Then every page is stored as sent, its custom keys kept byte for byte
    assert hub.content("setup/changing-the-colors.md") == (d / "setup" / "changing-the-colors.md").read_text()
    # And an export into an empty folder gives back every byte
    back = exported(hub, tmp_path)
    assert sorted(p.relative_to(back).as_posix() for p in back.rglob("*.md")) == pages
    for page in pages:
        assert (back / page).read_bytes() == (d / page).read_bytes(), page


def test_every_mistake_is_one_sentence_and_a_documented_exit_code(hub: Hub, tmp_path: Path) -> None:
    # A file that is missing, or not UTF-8: one line, no traceback, nothing sent
    missing = hub.kb("put", "m.md", str(tmp_path / "missing.md"))
    assert (missing.code, missing.out) == (66, "")
    assert missing.err == f"kb: {tmp_path / 'missing.md'} cannot be read: No such file or directory\n"
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"ok\xff\xfe")
    refused = hub.kb("put", "m.md", str(binary))
    assert (refused.code, refused.err) == (65, f"kb: {binary} is not UTF-8 text (byte 2 is not)\n")
    assert hub.content("m.md") is None
    # A page path is resolved, and refused, before anything is sent
    for raw, why in (("kv/x.md", "key-value namespace"), ("/fs", "root directory"), ("a\\b.md", "backslash")):
        with pytest.raises(SystemExit) as usage:
            hub.kb("get", raw)
        assert usage.value.code == 2
        assert why in hub.capsys.readouterr().err
    # A history limit out of range is one sentence, not argparse's 200 choices
    with pytest.raises(SystemExit):
        hub.kb("history", "a.md", "--limit", "0")
    err = hub.capsys.readouterr().err
    assert err.splitlines()[-1].endswith("argument --limit: takes a whole number from 1 to 200, not '0'")
    assert "199" not in err


def test_a_path_climbing_above_the_root_names_the_page_the_hub_resolves_it_to(hub: Hub, tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("---\ntype: Concept\n---\n# P\n")
    put = hub.kb("put", "../etc/passwd", str(page))
    assert put.code == 0, put.err
    assert put.out.startswith("/fs/etc/passwd sha256:")
    assert hub.kb("get", "/etc/passwd").out == page.read_text()


def test_a_refusal_prints_the_hubs_sentence_never_its_raw_body(hub: Hub) -> None:
    missing = hub.kb("get", "no/such.md")
    assert missing.code == 66
    assert missing.err.startswith("kb: the hub refused (404 not_found): ")
    assert "{" not in missing.err


class CountingHub(KbHub):
    """The kb client's hub, each one made kept, so a test reads its request counts."""

    made: list[KbHub] = []  # noqa: RUF012 - the test's record, reset by each test

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        CountingHub.made.append(self)


def test_an_export_is_one_archive_whatever_the_size_of_the_base_and_round_trips_byte_identical(
    hub: Hub, tmp_path: Path
) -> None:
    hub.monkeypatch.setattr("kb.__main__.Hub", CountingHub)
    counts = {}
    for size in (4, 40):  # ten times the pages, the same requests (make bench: 200 and 2,000)
        # Given a base of `size` pages (four to start with)
        for n in range(4, size):
            hub.put(f"bulk/p{n:03}.md", f"---\ntype: Concept\ntitle: P{n}\n---\n# Page {n}\n\n[home](../index.md)\n")
        CountingHub.made = []
        # When it is exported
        d = exported_to(hub, tmp_path / f"kb-{size}")
        client = CountingHub.made[-1]
        # Then one request was answered with the archive; the others waited out its build
        counts[size] = (client.requests - client.polls, client.retries)
        assert client.polls <= 15, client.polls
        pages = json.loads((d / ".agent-hub-kb.json").read_text())["pages"]
        assert len(pages) == size
        for page in pages:
            assert (d / page.removeprefix("/fs/")).read_text() == hub.content(page), page
    assert counts == {4: (1, 0), 40: (1, 0)}
    # And an import of the untouched folder writes nothing: the archive's bytes are the hub's
    before = hub.writes()
    again = hub.kb("import", "--dir", str(tmp_path / "kb-40"))
    assert again.code == 0 and again.lines == [again.lines[-1]] and again.lines[-1].startswith("0 create, 0 update")
    assert hub.writes() == before


def exported_to(hub: Hub, d: Path) -> Path:
    run = hub.kb("export", "--dir", str(d))
    assert run.code == 0, run.err
    return d


def test_a_base_changed_after_its_archive_was_built_is_exported_as_it_is_now(hub: Hub, tmp_path: Path) -> None:
    first = exported_to(hub, tmp_path / "first")
    hub.put("a.md", A + "changed after the archive\n")
    second = exported_to(hub, tmp_path / "second")
    assert (first / "a.md").read_text() == A
    assert (second / "a.md").read_text() == A + "changed after the archive\n"
