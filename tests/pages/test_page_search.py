"""Page search: the search row on the one write path, and ``GET kb/search`` over it.

The row lands in the write's own transaction (a fault between the head and the row cannot
exist, and a refused transaction leaves neither); a page is findable as soon as its write
answers; a delete hides it at once; the compactor folds the overlay into a snapshot without
changing an answer; a write costs the same requests on a base a hundred times larger.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

import botocore.client
import pytest
from botocore.exceptions import ClientError

from knowledge_service.domain.pages import page_search
from knowledge_service.domain.pages.page_search import PageSearch
from knowledge_service.domain.pages.search import MAX_INDEXED_BODY_BYTES, parse_query
from tests.pages.conftest import KB, Client, Pages
from tests.pages.test_pages_write_cost import seed, store_reads

RUNBOOK = (
    "---\ntype: Runbook\ntitle: Deploy the hub\nstatus: draft\ntags: [ops, deploy]\n---\n"
    "# Deploy\nRestart caddy after the certificate rotates.\n"
)
CONCEPT = (
    "---\ntype: Concept\ntitle: Caddy\nstatus: stable\ntags: [web]\n---\n"
    "Caddy is the reverse proxy in front of the hub.\n"
)


def search(client: Client, q: str, **params: Any) -> Any:
    from urllib.parse import urlencode

    answer = client.get(f"{KB}/search?{urlencode({'q': q, **params})}")
    assert answer.status == 200, answer.body
    return answer.body


def paths(body: Any) -> list[str]:
    return [hit["path"] for hit in body["hits"]]


@pytest.fixture(autouse=True)
def _fresh_open_indexes() -> Any:
    page_search._OPEN.clear()
    yield
    page_search._OPEN.clear()


def test_a_written_page_is_found_as_soon_as_its_write_answers(admin: Client) -> None:
    assert admin.put("ops/deploy.md", RUNBOOK).status == 200
    body = search(admin, "certificate")
    assert paths(body) == ["/fs/ops/deploy.md"]
    hit = body["hits"][0]
    assert hit["title"] == "Deploy the hub"
    assert hit["type"] == "Runbook"
    assert hit["status"] == "draft"
    assert hit["tags"] == ["ops", "deploy"]
    assert hit["version"].startswith("sha256:")
    assert {"text": "certificate", "hit": True} in hit["snippet"]
    assert body["total"] == 1
    assert body["next_offset"] is None


def test_the_answer_keys_on_the_canonical_path_whatever_the_spelling(admin: Client) -> None:
    assert admin.put("fs/ops/./x/../deploy.md", RUNBOOK).status == 200
    assert paths(search(admin, "caddy")) == ["/fs/ops/deploy.md"]


def test_a_title_hit_outranks_a_body_hit(admin: Client) -> None:
    assert admin.put("ops/deploy.md", RUNBOOK).status == 200
    assert admin.put("web/caddy.md", CONCEPT).status == 200
    assert paths(search(admin, "caddy")) == ["/fs/web/caddy.md", "/fs/ops/deploy.md"]


def test_filters_by_tag_type_and_status(admin: Client) -> None:
    assert admin.put("ops/deploy.md", RUNBOOK).status == 200
    assert admin.put("web/caddy.md", CONCEPT).status == 200
    assert paths(search(admin, "caddy", tag="ops")) == ["/fs/ops/deploy.md"]
    assert paths(search(admin, "caddy", type="concept")) == ["/fs/web/caddy.md"]
    assert paths(search(admin, "caddy", status="draft")) == ["/fs/ops/deploy.md"]
    assert paths(search(admin, "caddy", tag="nothing")) == []


def test_a_deleted_page_is_not_found_and_a_restored_one_is(admin: Client) -> None:
    written = admin.put("ops/deploy.md", RUNBOOK)
    assert admin.call("DELETE", f"{KB}/pages/ops/deploy.md").status == 200
    assert paths(search(admin, "certificate")) == []
    answer = admin.call("POST", f"{KB}/pages/ops/deploy.md/revert", json_body={"version": written.body["version"]})
    assert answer.status == 200, answer.body
    assert paths(search(admin, "certificate")) == ["/fs/ops/deploy.md"]


def test_an_overwrite_replaces_the_page_s_row(admin: Client) -> None:
    assert admin.put("ops/deploy.md", RUNBOOK).status == 200
    assert admin.put("ops/deploy.md", "---\ntype: Runbook\n---\nNothing about proxies.\n").status == 200
    assert paths(search(admin, "certificate")) == []
    assert paths(search(admin, "proxies")) == ["/fs/ops/deploy.md"]


def test_paging_walks_every_hit_once(admin: Client) -> None:
    for n in range(7):
        assert admin.put(f"many/p{n}.md", f"---\ntype: Concept\n---\nwidget number {n}\n").status == 200
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        body = search(admin, "widget", limit=3, offset=offset)
        assert body["total"] == 7
        seen += paths(body)
        offset = body["next_offset"]
    assert sorted(seen) == [f"/fs/many/p{n}.md" for n in range(7)]


def test_the_body_is_indexed_up_to_its_bound(admin: Client) -> None:
    filler = "lorem " * (MAX_INDEXED_BODY_BYTES // 6)
    assert admin.put("big.md", f"---\ntype: Concept\n---\nearlyword {filler} lateword\n").status == 200
    assert paths(search(admin, "earlyword")) == ["/fs/big.md"]
    assert paths(search(admin, "lateword")) == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("q=", "q"),
        ("q=x&limit=0", "limit"),
        ("q=x&limit=51", "limit"),
        ("q=x&offset=1001", "offset"),
        ("", "q"),
    ],
)
def test_a_refused_query_names_its_field(admin: Client, query: str, field: str) -> None:
    answer = admin.get(f"{KB}/search?{query}")
    assert answer.status == 400
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert field in answer.body["detail"]


def test_fts_operators_in_a_query_are_words_not_syntax(admin: Client) -> None:
    assert admin.put("ops/deploy.md", RUNBOOK).status == 200
    assert paths(search(admin, "NEAR(caddy")) == []  # the phrase "near caddy", not FTS5's NEAR
    for q in ('"restart caddy', "caddy*", "-caddy", "caddy:", "cad*", '"restart caddy"', "caddy\x07"):
        assert paths(search(admin, q)) == ["/fs/ops/deploy.md"], q  # a word, never a syntax error
    for q in ("caddy OR nothing", '"caddy restart"', "caddy AND"):
        assert paths(search(admin, q)) == [], q  # every word must match; OR is a word


@pytest.mark.parametrize("q", ['""', "***", " ", "...", '"', "\ue000"])
def test_a_query_with_no_word_finds_nothing(admin: Client, q: str) -> None:
    assert admin.put("ops/deploy.md", RUNBOOK).status == 200
    body = search(admin, q)
    assert (body["hits"], body["total"], body["next_offset"]) == ([], 0, None)


def test_a_transaction_refused_after_the_head_was_read_leaves_neither_head_nor_row(admin: Client, pages: Pages) -> None:
    """The fault between the steps: the write's transaction (head, log, feed, search row) fails;
    nothing of it is visible, to the pages nor to search."""
    original = botocore.client.BaseClient._make_api_call  # type: ignore[attr-defined]

    def failing(self: Any, operation: str, params: Any) -> Any:
        if operation == "TransactWriteItems" and any("SROW#" in str(i) for i in params.get("TransactItems", [])):
            raise ClientError({"Error": {"Code": "InternalServerError", "Message": "fault"}}, operation)
        return original(self, operation, params)

    with mock.patch.object(botocore.client.BaseClient, "_make_api_call", failing):
        assert admin.put("ops/deploy.md", RUNBOOK).status == 500
    assert pages.runtime.pages.head("falcon", "/fs/ops/deploy.md") is None
    assert paths(search(admin, "certificate")) == []
    assert admin.put("ops/deploy.md", RUNBOOK).status == 200
    with mock.patch.object(botocore.client.BaseClient, "_make_api_call", failing):
        assert admin.call("DELETE", f"{KB}/pages/ops/deploy.md").status == 500
    assert admin.get(f"{KB}/pages/ops/deploy.md").status == 200
    assert paths(search(admin, "certificate")) == ["/fs/ops/deploy.md"]


def test_compaction_folds_the_overlay_without_changing_an_answer(admin: Client, pages: Pages) -> None:
    for n in range(5):
        assert admin.put(f"many/p{n}.md", f"---\ntype: Concept\n---\nwidget number {n}\n").status == 200
    assert admin.call("DELETE", f"{KB}/pages/many/p3.md").status == 200
    before = search(admin, "widget")
    finder = PageSearch(pages.runtime.search, "falcon")
    assert finder.compact()["compacted"] is False  # under COMPACT_AFTER
    import time

    done = finder.compact(force=True, now=time.time() + 120)  # every marker has settled
    assert done["compacted"] is True
    assert done["rows"] == 4
    assert finder.pending() == 0
    assert search(admin, "widget") == before
    assert admin.put("many/p9.md", "---\ntype: Concept\n---\nwidget nine\n").status == 200
    assert admin.call("DELETE", f"{KB}/pages/many/p0.md").status == 200
    assert sorted(paths(search(admin, "widget"))) == [f"/fs/many/p{n}.md" for n in (1, 2, 4, 9)]


def test_a_compaction_keeps_markers_younger_than_the_settling_time(admin: Client, pages: Pages) -> None:
    assert admin.put("ops/deploy.md", RUNBOOK).status == 200
    finder = PageSearch(pages.runtime.search, "falcon")
    assert finder.compact(force=True)["folded"] == 0
    assert finder.pending() == 1
    assert paths(search(admin, "certificate")) == ["/fs/ops/deploy.md"]


def test_a_held_lease_keeps_a_second_compactor_out(pages: Pages) -> None:
    store = pages.runtime.search
    assert store.lease("falcon", "first", 300)
    assert PageSearch(store, "falcon").compact(force=True)["compacted"] is False
    store.release("falcon", "first")
    assert PageSearch(store, "falcon").compact(force=True)["compacted"] is True


def seed_rows(pages: Pages, count: int) -> None:
    """``count`` pages' heads, search rows and change markers, straight into the table."""
    seed(pages, count)
    with pages.runtime.pages.table.batch_writer() as batch:
        for n in range(count):
            path = f"/fs/bulk/p{n:05d}.md"
            batch.put_item(Item={"pk": "SROW#falcon", "sk": path, "path": path, "body": f"filler {n}", "version": "v"})
            batch.put_item(Item={"pk": "SCHG#falcon", "sk": f"{n:017d}-seed", "path": path})


def test_a_write_costs_the_same_requests_on_a_base_a_hundred_times_larger(admin: Client, pages: Pages) -> None:
    def one_put(n: int) -> dict[str, int]:
        with store_reads() as counts:
            assert admin.put("w.md", f"---\ntype: Concept\n---\nedition {n}\n").status == 200
        return {
            k: v for k, v in counts.items() if k not in ("items", "meta_items")
        }  # what was asked, not what came back

    seed_rows(pages, 3)
    small = one_put(0)
    seed_rows(pages, 300)
    large = one_put(1)
    assert large == small
    assert large["dynamodb:TransactWriteItems"] == 1  # the write with its search row and its bytes' version item
    assert "edition" in str(pages.runtime.search.rows("falcon", {"/fs/w.md"}))


def test_forgetting_history_rewrites_the_snapshot_from_current_rows(admin: Client, pages: Pages) -> None:
    assert admin.put("ops/deploy.md", RUNBOOK).status == 200
    finder = PageSearch(pages.runtime.search, "falcon")
    import time

    finder.compact(force=True, now=time.time() + 120)
    old = pages.runtime.search.pointer("falcon")
    assert old is not None
    assert admin.put("ops/deploy.md", "---\ntype: Runbook\n---\nrewritten\n").status == 200
    assert admin.call("DELETE", f"{KB}/versions?path=ops/deploy.md").status == 200
    new = pages.runtime.search.pointer("falcon")
    assert new is not None and new.key != old.key
    page_search._OPEN.clear()
    index_file = pages.runtime.search.local_copy(new.key)
    assert index_file is not None
    assert b"certificate" not in index_file.read_bytes()


def test_a_container_keeps_at_most_eight_projects_indexes_open(pages: Pages) -> None:
    for n in range(page_search._OPEN_LIMIT + 3):
        PageSearch(pages.runtime.search, f"p{n}").search(parse_query("anything"))
    assert list(page_search._OPEN) == [f"p{n}" for n in range(3, page_search._OPEN_LIMIT + 3)]
    PageSearch(pages.runtime.search, "p3").search(parse_query("anything"))  # used again: kept longest
    assert next(iter(page_search._OPEN)) == "p4"


def test_the_compactor_waits_until_enough_markers_have_settled(pages: Pages) -> None:
    import time

    now_us = time.time_ns() // 1000
    with pages.runtime.pages.table.batch_writer() as batch:  # a burst written just now
        for n in range(page_search.COMPACT_AFTER):
            path = f"/fs/burst/p{n}.md"
            batch.put_item(Item={"pk": "SROW#falcon", "sk": path, "path": path, "body": "burst", "version": "v"})
            batch.put_item(Item={"pk": "SCHG#falcon", "sk": f"{now_us + n:017d}-seed", "path": path})
    finder = PageSearch(pages.runtime.search, "falcon")
    assert finder.pending() == page_search.COMPACT_AFTER
    assert finder.compact()["compacted"] is False  # none settled: a later signal folds them
    later = finder.compact(now=time.time() + page_search.SETTLE_SECONDS + 1)
    assert (later["compacted"], later["folded"]) == (True, page_search.COMPACT_AFTER)
