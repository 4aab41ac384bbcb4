"""``kb import`` writes ``IN_FLIGHT`` pages at once, says each step in the plan's order with the
same summary, and after a stop says what was written and what was not attempted."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from kb import sync
from kb.hub import EX_SOFTWARE, Config, Hub


class SlowHub:
    """The hub's pages in memory; each write takes a little while, and the most writes seen
    at once is kept. A page named in ``failing`` is refused with a 500."""

    def __init__(self, failing: str | None = None) -> None:
        self.pages: dict[str, str] = {}
        self.failing = failing
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0

    def version(self, content: str) -> str:
        return "sha256:" + hashlib.sha256(content.encode()).hexdigest()

    def answer(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.split("/kb", 1)[1]
        if path == "/pages":
            rows = [{"path": p, "type": "file", "version": self.version(c)} for p, c in sorted(self.pages.items())]
            return httpx.Response(200, json={"entries": rows, "truncated": False})
        page = "/" + path.removeprefix("/pages/")
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            time.sleep(0.02)
            if page == self.failing:
                return httpx.Response(500, json={"code": "internal", "detail": "The service failed."})
            body: dict[str, Any] = json.loads(request.content)
            with self.lock:
                self.pages[page] = body["content"]
            return httpx.Response(200, json={"path": page, "version": self.version(body["content"]), "lint": []})
        finally:
            with self.lock:
                self.now -= 1

    def hub(self) -> Hub:
        return Hub(Config("http://hub.test", "t", "falcon"), transport=httpx.MockTransport(self.answer))


def _folder(tmp_path: Path, count: int) -> Path:
    folder = tmp_path / "kb"
    folder.mkdir()
    for n in range(count):
        (folder / f"p{n:02}.md").write_text(f"# Page {n}\n")
    return folder


def test_the_writes_go_several_at_once_never_more_than_in_flight_and_are_said_in_plan_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hub_pages = SlowHub()
    with hub_pages.hub() as hub:
        assert sync.import_(hub, _folder(tmp_path, 30), prune=False, dry_run=False) == 0
    assert 1 < hub_pages.most <= sync.IN_FLIGHT
    lines = capsys.readouterr().out.splitlines()
    assert lines[:-1] == [f"create /fs/p{n:02}.md" for n in range(30)]
    assert lines[-1].startswith("30 create, 0 update, 0 hub newer, 0 delete, 0 keep, 0 conflict")
    assert len(hub_pages.pages) == 30


def test_a_stop_midway_says_what_was_written_and_what_was_not_attempted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hub_pages = SlowHub(failing="/fs/p10.md")
    with hub_pages.hub() as hub:
        assert sync.import_(hub, _folder(tmp_path, 30), prune=False, dry_run=False) == EX_SOFTWARE
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    steps, summary = lines[:-1], lines[-1]
    assert len(steps) == 30 and [s.split()[-1] for s in steps] == [f"/fs/p{n:02}.md" for n in range(30)]
    created = {s.split()[-1] for s in steps if s.startswith("create ")}
    not_attempted = {s.split()[-1] for s in steps if s.startswith("not attempted ")}
    assert created == set(hub_pages.pages)  # each page said written is on the hub, and only those
    assert "/fs/p10.md" in not_attempted and not_attempted | created == {s.split()[-1] for s in steps}
    assert max(not_attempted) == "/fs/p29.md"  # nothing is begun after the stop
    assert summary.startswith(f"{len(created)} create,") and f"{len(not_attempted)} not attempted" in summary
    assert "The service failed." in captured.err
    manifest = json.loads((tmp_path / "kb" / ".agent-hub-kb.json").read_text())
    assert set(manifest["pages"]) == created  # the next import plans the rest again


def test_a_page_and_a_directory_of_the_same_name_are_never_written_at_once() -> None:
    assert sync._collide("/fs/a", "/fs/a/b.md") and sync._collide("/fs/a/b.md", "/fs/a")
    assert sync._collide("/fs/a.md", "/fs/a.md")
    assert not sync._collide("/fs/a", "/fs/ab.md") and not sync._collide("/fs/a/b.md", "/fs/a/c.md")


def test_a_409_naming_the_folders_own_bytes_as_current_is_the_write_done_not_a_conflict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a write that landed on the hub but whose answer was lost and asked again: the hub
    # answers the retry 409 with the folder's own version as the page's current one
    hub_pages = SlowHub()
    answer = hub_pages.answer

    def landed_then_409(request: httpx.Request) -> httpx.Response:
        if request.method == "PUT" and request.url.path.endswith("/p01.md"):
            content = json.loads(request.content)["content"]
            hub_pages.pages["/fs/p01.md"] = content
            detail = f"if_version does not match the page; current_version={hub_pages.version(content)}"
            return httpx.Response(409, json={"code": "conflict", "detail": detail})
        if request.method == "PUT" and request.url.path.endswith("/p02.md"):
            detail = "if_version does not match the page; current_version=sha256:" + "0" * 64
            return httpx.Response(409, json={"code": "conflict", "detail": detail})
        return answer(request)

    hub_pages.answer = landed_then_409  # type: ignore[method-assign]
    with hub_pages.hub() as hub:
        assert sync.import_(hub, _folder(tmp_path, 3), prune=False, dry_run=False) == 1
    # Then it is said as written, and a 409 naming other bytes stays a conflict
    assert capsys.readouterr().out.splitlines()[:-1] == [
        "create /fs/p00.md",
        "create /fs/p01.md",
        "conflict /fs/p02.md: changed on the hub while the import ran",
    ]
