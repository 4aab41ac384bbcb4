"""``kb`` asks again after a 429 or a 503, honouring ``Retry-After``, and never more than
``ATTEMPTS`` times; a whole export and import go through a storm of them."""

from __future__ import annotations

import hashlib
import json
import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from kb import sync
from kb.hub import ATTEMPTS, BACKOFF_CAP_SECONDS, EX_TEMPFAIL, RETRY_AFTER_CAP_SECONDS, Config, Hub, HubError
from tests.kb_archive import S3_URL, archive_bytes


def hub_of(answers: list[httpx.Response], slept: list[float]) -> Hub:
    queue = list(answers)

    def answer(request: httpx.Request) -> httpx.Response:
        return queue.pop(0)

    return Hub(Config("http://hub.test", "t", "falcon"), httpx.MockTransport(answer), slept.append, random.Random(7))


OK = httpx.Response(200, json={"path": "/fs/a.md", "content": "A", "version": "v1"})


def throttled(retry_after: str | None = None, status: int = 429) -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return httpx.Response(status, json={"code": "rate_limited", "detail": "Slow down."}, headers=headers)


def test_a_429_with_retry_after_is_waited_out_and_asked_again() -> None:
    slept: list[float] = []
    with hub_of([throttled("2"), throttled("3"), OK], slept) as hub:
        assert hub.get("/fs/a.md")["content"] == "A"
        assert (hub.requests, hub.retries, slept) == (3, 2, [2.0, 3.0])


def test_a_503_without_retry_after_backs_off_with_jitter_under_the_cap() -> None:
    slept: list[float] = []
    answers = [throttled(status=503)] * (ATTEMPTS - 1) + [OK]
    with hub_of(answers, slept) as hub:
        hub.get("/fs/a.md")
    assert len(slept) == ATTEMPTS - 1
    assert all(0 <= s <= BACKOFF_CAP_SECONDS for s in slept)
    assert all(s <= 0.5 * 2**n for n, s in enumerate(slept))


def test_retry_after_as_an_http_date_and_a_long_one_capped() -> None:
    slept: list[float] = []
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=5), usegmt=True)
    with hub_of([throttled(soon), throttled("3600"), OK], slept) as hub:
        hub.get("/fs/a.md")
    assert 3.0 <= slept[0] <= 5.0
    assert slept[1] == RETRY_AFTER_CAP_SECONDS


def test_a_storm_that_does_not_end_stops_after_the_last_attempt_with_the_temporary_failure_code() -> None:
    slept: list[float] = []
    with hub_of([throttled("1")] * ATTEMPTS, slept) as hub, pytest.raises(HubError) as stopped:
        hub.get("/fs/a.md")
    assert (stopped.value.status, stopped.value.code) == (429, EX_TEMPFAIL)
    assert (hub.requests, len(slept)) == (ATTEMPTS, ATTEMPTS - 1)


@pytest.mark.parametrize("status", [400, 404, 409, 500, 502])
def test_any_other_refusal_is_final_at_once(status: int) -> None:
    slept: list[float] = []
    with hub_of([httpx.Response(status, json={"code": "x", "detail": "no"})], slept) as hub, pytest.raises(HubError):
        hub.get("/fs/a.md")
    assert (hub.requests, slept) == (1, [])


class StormyHub:
    """A hub's pages held in memory, answering every other request 429 first."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {}
        self.calls = 0

    def version(self, content: str) -> str:
        return "sha256:" + hashlib.sha256(content.encode()).hexdigest()

    def answer(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == "s3.test":  # the archive's presigned URL: S3, not the hub
            return httpx.Response(200, content=archive_bytes("falcon", {p: c.encode() for p, c in self.pages.items()}))
        self.calls += 1
        if self.calls % 2:
            return throttled("0")
        path = request.url.path.split("/kb", 1)[1]
        if path == "/archive":
            return httpx.Response(303, headers={"Location": S3_URL})
        if path == "/pages" and request.method == "GET":
            rows = [
                {"path": p, "type": "file", "size_bytes": len(c), "version": self.version(c)}
                for p, c in sorted(self.pages.items())
            ]
            return httpx.Response(200, json={"entries": rows, "truncated": False})
        page = "/" + path.removeprefix("/pages/")
        if request.method == "PUT":
            body: dict[str, Any] = json.loads(request.content)
            self.pages[page] = body["content"]
        return httpx.Response(
            200, json={"path": page, "content": self.pages[page], "version": self.version(self.pages[page])}
        )


def test_an_export_and_an_import_go_through_a_429_storm_whole(tmp_path: Path) -> None:
    hub_pages = StormyHub()
    hub_pages.pages = {f"/fs/p{i}.md": f"# Page {i}\n" for i in range(5)}
    slept: list[float] = []
    with Hub(Config("http://hub.test", "t", "falcon"), httpx.MockTransport(hub_pages.answer), slept.append) as hub:
        assert sync.export(hub, tmp_path / "kb", force=False) == 0
        (tmp_path / "kb" / "p2.md").write_text("# Page 2, edited\n")
        (tmp_path / "kb" / "new.md").write_text("# New\n")
        assert sync.import_(hub, tmp_path / "kb", prune=False, dry_run=False) == 0
    assert hub_pages.pages["/fs/p2.md"] == "# Page 2, edited\n"
    assert hub_pages.pages["/fs/new.md"] == "# New\n"
    assert slept and all(s == 0.0 for s in slept)


# ---------------------------------------------------------------------- mutation survivors (issue 39)
def test_a_storm_is_asked_six_times_in_all_one_request_and_five_more() -> None:
    """The documented count, literally: a test that reads ``ATTEMPTS`` moves with a mutated constant."""
    slept: list[float] = []
    with hub_of([throttled("1")] * 10, slept) as hub, pytest.raises(HubError):
        hub.get("/fs/a.md")
    assert (ATTEMPTS, hub.requests, hub.retries, len(slept)) == (6, 6, 5, 5)


def test_a_retry_after_date_in_the_past_is_no_wait_never_a_negative_one() -> None:
    slept: list[float] = []
    past = format_datetime(datetime.now(UTC) - timedelta(minutes=5), usegmt=True)
    with hub_of([throttled(past), OK], slept) as hub:
        hub.get("/fs/a.md")
    assert slept == [0.0]


def test_the_backoff_is_jittered_not_the_ceiling_each_time() -> None:
    from kb.hub import BACKOFF_SECONDS, backoff

    rng = random.Random(11)
    waits = [backoff(3, throttled(status=503), rng) for _ in range(200)]
    ceiling = BACKOFF_SECONDS * 2**2
    assert all(0 <= w <= ceiling for w in waits)
    assert len(set(waits)) > 150  # drawn, not fixed
    assert min(waits) < ceiling / 4 and max(waits) > 3 * ceiling / 4  # spread over the whole range
