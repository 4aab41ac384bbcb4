"""``kb export`` within the seed's folder limits (001, Limits: "One folder export or import:
10,000 pages and 256 MiB"), each page written as it arrives: from the base's archive (the
default), and by one read a page (``--per-page``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from kb import folder, sync
from kb.__main__ import main
from kb.folder import Refused
from kb.hub import Config, Hub
from tests.kb_archive import ArchiveAnswers, archive_bytes


class FakeHub:
    """The pages routes of one project, answered from a dict, counting the page reads."""

    def __init__(self, pages: dict[str, str], sizes: dict[str, int] | None = None) -> None:
        self.pages = pages
        self.sizes = sizes or {}
        self.reads: list[str] = []

    def answer(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.split("/kb", 1)[1]
        if path == "/pages":
            entries = [
                {"path": p, "type": "file", "size_bytes": self.sizes.get(p, len(c.encode())), "version": f"v{len(c)}"}
                for p, c in sorted(self.pages.items())
            ]
            return httpx.Response(200, json={"entries": entries, "truncated": False})
        page = "/" + path.removeprefix("/pages/")
        self.reads.append(page)
        return httpx.Response(200, json={"path": page, "content": self.pages[page], "version": f"v{page}"})

    def hub(self) -> Hub:
        return Hub(Config("http://hub.test", "t", "falcon"), transport=httpx.MockTransport(self.answer))


def test_an_export_of_one_page_over_the_page_limit_is_refused_before_any_page_is_read(tmp_path: Path) -> None:
    fake = FakeHub({f"/fs/p{i:05}.md": "x" for i in range(folder.MAX_BUNDLE_PAGES + 1)})
    with fake.hub() as hub, pytest.raises(Refused, match="10001 pages, over one export's limit of 10000"):
        sync.export(hub, tmp_path / "out", force=False, per_page=True)
    assert fake.reads == []
    assert not (tmp_path / "out").exists()


def test_the_limits_are_inclusive() -> None:
    sync._within_the_folder_limits(folder.MAX_BUNDLE_PAGES, folder.MAX_BUNDLE_BYTES)
    with pytest.raises(Refused):
        sync._within_the_folder_limits(folder.MAX_BUNDLE_PAGES + 1, 0)
    with pytest.raises(Refused):
        sync._within_the_folder_limits(0, folder.MAX_BUNDLE_BYTES + 1)


def test_an_export_over_the_size_limit_by_the_listing_is_refused_before_any_page_is_read(tmp_path: Path) -> None:
    pages = {"/fs/a.md": "a", "/fs/b.md": "b"}
    fake = FakeHub(pages, sizes={"/fs/a.md": folder.MAX_BUNDLE_BYTES, "/fs/b.md": 1})
    with fake.hub() as hub, pytest.raises(Refused, match="over 256 MiB"):
        sync.export(hub, tmp_path / "out", force=False, per_page=True)
    assert fake.reads == []


def test_a_page_that_grew_past_the_limit_since_the_listing_stops_the_export_with_no_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(folder, "MAX_BUNDLE_BYTES", 10)
    fake = FakeHub({"/fs/a.md": "12345", "/fs/b.md": "67890abcdef"}, sizes={"/fs/a.md": 5, "/fs/b.md": 5})
    with fake.hub() as hub, pytest.raises(Refused):
        sync.export(hub, tmp_path / "out", force=False, per_page=True)
    assert (tmp_path / "out" / "a.md").read_text() == "12345"
    assert not (tmp_path / "out" / folder.MANIFEST).exists()
    assert "stopped after writing 1 of 2 pages; no manifest was written" in capsys.readouterr().err


def test_each_page_is_written_before_the_next_is_read(tmp_path: Path) -> None:
    out = tmp_path / "out"
    seen_on_disk: list[list[str]] = []
    fake = FakeHub({"/fs/a.md": "A", "/fs/b.md": "B", "/fs/c.md": "C"})
    answer = fake.answer

    def spying(request: httpx.Request) -> httpx.Response:
        if "/pages/" in request.url.path:
            seen_on_disk.append(sorted(p.name for p in out.glob("*.md")) if out.exists() else [])
        return answer(request)

    fake.answer = spying  # type: ignore[method-assign]
    with fake.hub() as hub:
        assert sync.export(hub, out, force=False, per_page=True) == 0
    assert seen_on_disk == [[], ["a.md"], ["a.md", "b.md"]]
    manifest: dict[str, Any] = json.loads((out / folder.MANIFEST).read_text())
    assert set(manifest["pages"]) == {"/fs/a.md", "/fs/b.md", "/fs/c.md"}


def archive_hub(fake: ArchiveAnswers, slept: list[float]) -> Hub:
    def answer(request: httpx.Request) -> httpx.Response:
        got = fake.answer(request)
        assert got is not None, f"a request the archive export does not make: {request.url}"
        return got

    return Hub(Config("http://hub.test", "t", "falcon"), transport=httpx.MockTransport(answer), sleep=slept.append)


def test_an_export_reads_one_archive_waiting_out_not_ready_and_verifies_each_page(tmp_path: Path) -> None:
    pages = {"/fs/a.md": b"# A\n", "/fs/notes/b c.md": b"---\ntitle: B\n---\n# B\n"}
    fake, slept = ArchiveAnswers(archive_bytes("falcon", pages), not_ready=2, retry_after="3"), []
    with archive_hub(fake, slept) as hub:
        assert sync.export(hub, tmp_path / "out", force=False) == 0
        assert (hub.requests, hub.polls) == (3, 2)
    assert (fake.hub_requests, fake.downloads, slept) == (3, 1, [3.0, 3.0])
    assert (tmp_path / "out" / "notes" / "b c.md").read_bytes() == pages["/fs/notes/b c.md"]
    manifest: dict[str, Any] = json.loads((tmp_path / "out" / folder.MANIFEST).read_text())
    assert manifest["pages"] == {p: folder.version_of(d) for p, d in pages.items()}


def test_an_archive_page_whose_bytes_do_not_match_the_manifest_stops_the_export_with_no_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = archive_bytes("falcon", {"/fs/a.md": b"# A\n", "/fs/b.md": b"# B\n"})
    tampered = gzip.compress(gzip.decompress(data).replace(b"# B\n", b"# X\n"))
    with archive_hub(ArchiveAnswers(tampered, not_ready=0), []) as hub, pytest.raises(Refused, match="SHA-256"):
        sync.export(hub, tmp_path / "out", force=False)
    assert (tmp_path / "out" / "a.md").read_bytes() == b"# A\n"
    assert not (tmp_path / "out" / "b.md").exists()
    assert not (tmp_path / "out" / folder.MANIFEST).exists()
    assert "stopped after writing 1 pages; no manifest was written" in capsys.readouterr().err


def test_an_archive_cut_short_stops_the_export_with_no_manifest(tmp_path: Path) -> None:
    data = archive_bytes("falcon", {f"/fs/p{i}.md": bytes([65 + i]) * 4000 for i in range(20)})
    with archive_hub(ArchiveAnswers(data[: len(data) // 2], not_ready=0), []) as hub, pytest.raises(Refused):
        sync.export(hub, tmp_path / "out", force=False)
    assert not (tmp_path / "out" / folder.MANIFEST).exists()


def test_an_archive_of_another_project_is_refused_before_any_page_is_written(tmp_path: Path) -> None:
    data = archive_bytes("elsewhere", {"/fs/a.md": b"# A\n"})
    with archive_hub(ArchiveAnswers(data, not_ready=0), []) as hub, pytest.raises(Refused, match="'elsewhere'"):
        sync.export(hub, tmp_path / "out", force=False)
    assert not (tmp_path / "out").exists()


def test_an_archive_over_the_page_limit_is_refused_before_any_page_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(folder, "MAX_BUNDLE_PAGES", 2)
    data = archive_bytes("falcon", {f"/fs/p{i}.md": b"x" for i in range(3)})
    with archive_hub(ArchiveAnswers(data, not_ready=0), []) as hub, pytest.raises(Refused, match="3 pages, over"):
        sync.export(hub, tmp_path / "out", force=False)
    assert not (tmp_path / "out").exists()


def test_the_hubs_413_for_a_base_over_the_limits_is_the_exports_refusal_and_its_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    refusal = "archive: the knowledge base holds 10001 pages, over one export's limit of 10,000."

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(413, json={"code": "payload_too_large", "detail": refusal, "status": 413})

    monkeypatch.setattr("kb.__main__.Hub", lambda config: Hub(config, transport=httpx.MockTransport(answer)))
    monkeypatch.setenv("HUB_URL", "http://hub.test")
    monkeypatch.setenv("HUB_TOKEN", "t")
    assert main(["--project", "falcon", "export", "--dir", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "10001 pages, over one export's limit" in err and "nothing was written" in err
    assert not (tmp_path / "out").exists()
