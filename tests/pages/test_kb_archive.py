"""``GET /api/v1/projects/{id}/kb/archive``: 409 not_ready while the builder has not run, 303 to
the archive of the base as it is now once it has; the archive's manifest and bytes; a base that
changed gets a new build; the folder limits; the build's memory bounded whatever the base."""

from __future__ import annotations

import hashlib
import io
import json
import random
import tarfile
import time
import tracemalloc
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from knowledge_service.domain.pages import archive
from knowledge_service.storage.kb_archives import PartSink, archive_key
from tests.pages.conftest import KB, Pages

PAGES = {
    "/fs/index.md": "---\nokf_version: 1\ntitle: Home\n---\n# Home\n",
    "/fs/notes/a b.md": "---\ntype: Concept\n---\n# A, with a space\n",
    "/fs/notes/ünï.md": "# Unicode\n",
}


def _seed(pages: Pages, contents: dict[str, str]) -> None:
    admin = pages.as_("admin")
    for path, text in contents.items():
        assert admin.put(path.removeprefix("/fs/"), text).status == 200


def _build(pages: Pages) -> dict[str, Any]:
    rt = pages.runtime
    return archive.build(rt.pages, rt.kb_archives, rt.archives, "falcon")


def _members(pages: Pages, generation: int) -> tuple[dict[str, Any], dict[str, bytes]]:
    data = pages.runtime.kb_archives.read(archive_key("falcon", generation))
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        names = tar.getnames()
        assert names[0] == archive.MANIFEST
        files = {}
        for member in tar.getmembers():
            handle = tar.extractfile(member)
            assert handle is not None
            files[member.name] = handle.read()
    listed = json.loads(files.pop(archive.MANIFEST))
    assert names[1:] == [p["path"].lstrip("/") for p in listed["pages"]]  # the manifest's order
    return listed, files


def test_the_first_get_answers_409_not_ready_with_retry_after_and_builds_nothing_itself(pages: Pages) -> None:
    _seed(pages, PAGES)
    answer = pages.as_("admin").get(f"{KB}/archive")
    assert answer.status == 409
    assert answer.body["code"] == "not_ready"
    assert answer.headers["content-type"] == "application/problem+json"
    assert int(answer.headers["retry-after"]) >= 1
    generation = pages.runtime.pages.generation("falcon")[0]
    assert pages.runtime.kb_archives.size_of(archive_key("falcon", generation)) is None


def test_once_built_the_get_answers_303_to_a_short_lived_url_of_every_page_and_its_manifest(pages: Pages) -> None:
    _seed(pages, PAGES)
    done = _build(pages)
    assert (done["built"], done["pages"]) == (True, 3)
    answer = pages.as_("admin").get(f"{KB}/archive")
    assert answer.status == 303, answer.raw
    location = answer.headers["location"]
    assert f"kb-archives/falcon/{done['generation']}.tar.gz" in location
    expires = int(parse_qs(urlsplit(location).query)["Expires"][0])
    assert 0 < expires - time.time() <= 300  # five minutes
    assert answer.body["url"] == location and answer.body["generation"] == done["generation"]
    assert answer.headers["cache-control"] == "no-store"
    listed, files = _members(pages, done["generation"])
    assert (listed["format"], listed["project"], listed["page_count"]) == (1, "falcon", 3)
    for row in listed["pages"]:
        data = files[row["path"].lstrip("/")]
        assert data == PAGES[row["path"]].encode("utf-8")  # the stored bytes, frontmatter and all
        assert row["sha256"] == hashlib.sha256(data).hexdigest() and row["version"] == "sha256:" + row["sha256"]
        assert row["size_bytes"] == len(data)
    assert listed["size_bytes"] == sum(len(v) for v in files.values())


def test_a_second_request_for_a_built_archive_builds_nothing(pages: Pages) -> None:
    _seed(pages, PAGES)
    assert _build(pages)["built"] is True
    assert _build(pages) | {"reason": "already built"} == _build(pages)


def test_a_base_that_changed_since_the_build_gets_a_new_build(pages: Pages) -> None:
    _seed(pages, PAGES)
    first = _build(pages)
    admin = pages.as_("admin")
    assert admin.get(f"{KB}/archive").status == 303
    _seed(pages, {"/fs/new.md": "# New\n"})
    assert admin.get(f"{KB}/archive").status == 409  # the old state is never handed over
    second = _build(pages)
    assert second["generation"] > first["generation"] and second["pages"] == 4
    again = admin.get(f"{KB}/archive")
    assert again.status == 303 and f"/{second['generation']}.tar.gz" in again.headers["location"]
    _listed, files = _members(pages, second["generation"])
    assert files["fs/new.md"] == b"# New\n"


def test_a_deleted_page_is_not_in_the_next_archive(pages: Pages) -> None:
    _seed(pages, PAGES)
    assert pages.as_("admin").call("DELETE", f"{KB}/pages/notes/a%20b.md").status == 200
    listed, files = _members(pages, _build(pages)["generation"])
    assert [p["path"] for p in listed["pages"]] == ["/fs/index.md", "/fs/notes/ünï.md"]
    assert "fs/notes/a b.md" not in files


def test_a_base_over_one_exports_page_limit_is_refused_413_and_never_built(
    pages: Pages, monkeypatch: pytest.MonkeyPatch
) -> None:
    _seed(pages, PAGES)
    monkeypatch.setattr(archive, "MAX_PAGES", 2)
    answer = pages.as_("admin").get(f"{KB}/archive")
    assert answer.status == 413
    assert answer.body["code"] == "payload_too_large"
    assert "holds 3 pages, over one export's limit of 2" in answer.body["detail"]
    with pytest.raises(archive.PayloadTooLarge):
        _build(pages)


def test_a_base_over_one_exports_byte_limit_is_refused_413(pages: Pages, monkeypatch: pytest.MonkeyPatch) -> None:
    _seed(pages, PAGES)
    monkeypatch.setattr(archive, "MAX_BYTES", 10)
    answer = pages.as_("admin").get(f"{KB}/archive")
    assert (answer.status, answer.body["code"]) == (413, "payload_too_large")
    assert "over one export's limit of 256 MiB" in answer.body["detail"]


def test_the_limits_are_inclusive() -> None:
    archive.within_limits(archive.MAX_PAGES, archive.MAX_BYTES)
    with pytest.raises(archive.PayloadTooLarge):
        archive.within_limits(archive.MAX_PAGES + 1, 0)
    with pytest.raises(archive.PayloadTooLarge):
        archive.within_limits(0, archive.MAX_BYTES + 1)


def test_the_retry_after_grows_with_the_base_and_is_capped() -> None:
    assert archive.retry_after(0) == 1
    assert archive.retry_after(2000) > archive.retry_after(200)
    assert archive.retry_after(10**9) == archive.MAX_RETRY_AFTER


def test_a_reader_that_is_not_the_projects_admin_token_is_told_401(pages: Pages) -> None:
    _seed(pages, PAGES)
    _build(pages)
    for who in ("operator", "other-admin", "agent"):
        assert pages.as_(who).get(f"{KB}/archive").status == 401, who


def test_another_projects_archive_is_never_handed_over(pages: Pages) -> None:
    _seed(pages, PAGES)
    _build(pages)
    answer = pages.as_("admin").get("/api/v1/projects/elsewhere/kb/archive")
    assert answer.status == 401 and "location" not in answer.headers


class _Discarding:
    """An upload that keeps nothing: the build's own memory is what is measured."""

    def __init__(self) -> None:
        self.parts = 0
        self.completed = False

    def part(self, data: bytes) -> None:
        self.parts += 1

    def complete(self) -> None:
        self.completed = True


class _Generated:
    """A page store whose pages' bytes are made when read (incompressible, 256 KiB each)."""

    SIZE = 256 * 1024

    def data(self, n: int) -> bytes:
        return random.Random(n).randbytes(self.SIZE)  # the same bytes for ``n`` every time, made in C

    def entries(self, count: int) -> list[archive.Entry]:
        return [
            archive.Entry(f"/fs/p{n:04}.md", "sha256:" + hashlib.sha256(self.data(n)).hexdigest(), self.SIZE)
            for n in range(count)
        ]

    def read_bytes(self, project: str, version: str) -> bytes:
        return self.data(int(self._index[version]))

    def index(self, entries: list[archive.Entry]) -> None:
        self._index = {e.version: e.path[5:9] for e in entries}


def _peak_of_a_build(count: int) -> int:
    store = _Generated()
    entries = store.entries(count)
    store.index(entries)
    upload = _Discarding()
    sink = PartSink(upload, 5 * 1024 * 1024)  # type: ignore[arg-type]
    tracemalloc.start()
    try:
        archive.write_archive(
            sink,
            archive.manifest("falcon", 1, entries),
            archive._contents(store, "falcon", entries),  # type: ignore[arg-type]
        )
        sink.finish()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_builds_memory_is_flat_whatever_the_size_of_the_base() -> None:
    small, large = _peak_of_a_build(40), _peak_of_a_build(200)  # 10 MiB and 50 MiB of pages
    assert large < 24 * 1024 * 1024  # parts of 5 MiB (one filling, one sent) and eight pages read ahead
    assert large < small * 1.5


def test_a_write_that_meets_a_transaction_conflict_is_503_with_retry_after_and_lands_nothing(
    pages: Pages, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given DynamoDB cancelling the write's transaction for another request on one of its items
    # (eight kb import writes at once all add to the base's generation)
    from botocore.exceptions import ClientError

    def conflict(**_: Any) -> None:
        raise ClientError(
            {
                "Error": {"Code": "TransactionCanceledException", "Message": "Transaction cancelled"},
                "CancellationReasons": [{"Code": "None"}, {"Code": "TransactionConflict"}],
            },
            "TransactWriteItems",
        )

    before = pages.runtime.pages.generation("falcon")[0]
    monkeypatch.setattr(pages.runtime.pages._client, "transact_write_items", conflict)
    # When a page is written, then it is told to ask again (kb retries a 503), and nothing landed
    answer = pages.as_("admin").put("busy.md", "# Busy\n")
    assert (answer.status, answer.body["code"], answer.headers["retry-after"]) == (503, "unavailable", "1")
    monkeypatch.undo()
    assert pages.runtime.pages.generation("falcon")[0] == before
    assert pages.as_("admin").get(f"{KB}/pages/busy.md").status == 404


# ---------------------------------------------------------------------- mutation survivors (issue 39)
def test_a_write_between_the_generation_reads_is_read_again_never_mixed(
    pages: Pages, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot reads the generation before and after the pages: a write between the two
    makes it read again, so the generation named is the pages listed."""
    _seed(pages, PAGES)
    rt = pages.runtime
    real = type(rt.pages).current
    writes = iter([True])

    def current_with_a_write_racing(self: Any, project: str) -> Any:
        rows = real(self, project)
        if next(writes, False):
            assert pages.as_("admin").put("notes/late.md", "# Late\n").status == 200
        return rows

    monkeypatch.setattr(type(rt.pages), "current", current_with_a_write_racing)
    generation, entries = archive.snapshot(rt.pages, "falcon")
    assert generation == rt.pages.generation("falcon")[0]
    assert "/fs/notes/late.md" in {e.path for e in entries}


def test_a_build_finding_its_lease_held_builds_nothing(pages: Pages) -> None:
    _seed(pages, PAGES)
    rt = pages.runtime
    generation = rt.pages.generation("falcon")[0]
    assert rt.archives.claim(f"kb#falcon#{generation}", "another-builder", archive.LEASE_SECONDS)
    outcome = _build(pages)
    assert (outcome["built"], outcome["reason"]) == (False, "another build holds the lease")
    assert rt.kb_archives.size_of(archive_key("falcon", generation)) is None


def test_kept_bytes_of_the_right_size_but_not_the_version_abort_the_build(
    pages: Pages, monkeypatch: pytest.MonkeyPatch
) -> None:
    _seed(pages, PAGES)
    rt = pages.runtime
    real = type(rt.pages).read_bytes

    def corrupted(self: Any, project: str, version: str) -> bytes | None:
        data = real(self, project, version)
        return None if data is None else bytes(reversed(data))  # same size, other bytes

    monkeypatch.setattr(type(rt.pages), "read_bytes", corrupted)
    with pytest.raises(Exception, match="do not match its version"):
        _build(pages)
    assert rt.kb_archives.size_of(archive_key("falcon", rt.pages.generation("falcon")[0])) is None


def test_forgetting_a_version_moves_the_generation_and_the_bytes_used(pages: Pages) -> None:
    """Stats right after a forget, and the next archive's generation: both read the generation."""
    _seed(pages, PAGES)
    rt = pages.runtime
    generation, used = rt.pages.generation("falcon")
    version = archive.snapshot(rt.pages, "falcon")[1][0].version
    rt.pages.forget_version("falcon", version, 10)
    assert rt.pages.generation("falcon") == (generation + 1, used - 10)
