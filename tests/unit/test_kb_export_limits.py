"""``kb export`` within the seed's folder limits (001, Limits: "One folder export or import:
10,000 pages and 256 MiB"), each page written as it arrives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from kb import folder, sync
from kb.folder import Refused
from kb.hub import Config, Hub


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
        sync.export(hub, tmp_path / "out", force=False)
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
        sync.export(hub, tmp_path / "out", force=False)
    assert fake.reads == []


def test_a_page_that_grew_past_the_limit_since_the_listing_stops_the_export_with_no_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(folder, "MAX_BUNDLE_BYTES", 10)
    fake = FakeHub({"/fs/a.md": "12345", "/fs/b.md": "67890abcdef"}, sizes={"/fs/a.md": 5, "/fs/b.md": 5})
    with fake.hub() as hub, pytest.raises(Refused):
        sync.export(hub, tmp_path / "out", force=False)
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
        assert sync.export(hub, out, force=False) == 0
    assert seen_on_disk == [[], ["a.md"], ["a.md", "b.md"]]
    manifest: dict[str, Any] = json.loads((out / folder.MANIFEST).read_text())
    assert set(manifest["pages"]) == {"/fs/a.md", "/fs/b.md", "/fs/c.md"}
