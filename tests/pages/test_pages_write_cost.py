"""What one PUT costs the store: its own links, never the size of the base.

A write answers its ``broken_link`` findings from its own link targets (a batched read of
which are pages, a key-range read per target that is not) instead of walking every head of
the base. Held here by counting the store requests of one PUT, and the items they return,
on a small base and on one a hundred times larger.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import botocore.client

from knowledge_service.domain.pages.describe import describe
from knowledge_service.domain.pages.tree import walk
from knowledge_service.storage.page_store import META_SHARDS
from tests.pages.conftest import KB, Client, Pages

LINKS = (
    "---\ntype: Concept\n---\n"
    "[there](there.md) [missing](missing.md) [dir](docs) [dir/](docs/) [gone](gone) [root](/fs) [self](w.md)\n"
)


@contextmanager
def store_reads() -> Iterator[Counter[str]]:
    """Every AWS request by ``service:Operation``, and under ``items`` the items DynamoDB returned
    (the project's meta shards under ``meta_items``)."""
    counts: Counter[str] = Counter()
    original = botocore.client.BaseClient._make_api_call  # type: ignore[attr-defined]

    def counted(self: Any, operation: str, params: Any) -> Any:
        answer = original(self, operation, params)
        counts[f"{self.meta.service_model.service_name}:{operation}"] += 1
        for item in [*answer.get("Items", []), *(i for items in answer.get("Responses", {}).values() for i in items)]:
            # the project's meta shards (at most nine, the old item's key included) fill as writes
            # land on them, whatever the base's size: counted apart
            pk = item.get("pk")
            pk = pk.get("S") if isinstance(pk, dict) else pk  # typed for a client, plain for a resource
            counts["meta_items" if str(pk).startswith("META#") else "items"] += 1
        return answer

    with mock.patch.object(botocore.client.BaseClient, "_make_api_call", counted):
        yield counts


def seed(pages: Pages, count: int) -> None:
    """``count`` linked pages under /fs/bulk/, straight into the heads a walk reads."""
    with pages.runtime.pages.table.batch_writer() as batch:
        for n in range(count):
            path = f"/fs/bulk/p{n:05d}.md"
            text = f"---\ntype: Concept\n---\n[next](p{n + 1:05d}.md)\n"
            batch.put_item(
                Item={
                    "pk": "PAGE#falcon",
                    "sk": path,
                    "version": f"sha256:{n:064x}",
                    "size_bytes": len(text),
                    "last_write_by": "human",
                    "last_write_at": "2026-11-30T00:00:00Z",
                    "meta": json.dumps(describe(path, text), separators=(",", ":")),
                }
            )


def given_the_link_targets(admin: Client) -> None:
    for path in ("there.md", "docs/a.md", "gone/b.md"):
        assert admin.put(path, "---\ntype: Concept\n---\n").status == 200
    assert admin.call("DELETE", f"{KB}/pages/gone/b.md").status == 200  # gone/ holds a tombstone only


def one_put(admin: Client, edition: int = 0) -> tuple[Counter[str], list[dict[str, Any]]]:
    with store_reads() as counts:
        answer = admin.put("w.md", f"{LINKS}\nedition {edition}\n")
    assert answer.status == 200, answer.body
    return counts, answer.body["lint"]


def test_a_put_costs_the_same_store_requests_and_items_on_a_base_a_hundred_times_larger(
    admin: Client, pages: Pages
) -> None:
    given_the_link_targets(admin)
    seed(pages, 3)
    one_put(admin, -1)  # both measured writes replace the page (the door reads its head with the caller)
    small, small_lint = one_put(admin)
    seed(pages, 300)
    large, large_lint = one_put(admin, 1)
    assert large["meta_items"] <= META_SHARDS + 1
    assert {k: v for k, v in large.items() if k != "meta_items"} == {
        k: v for k, v in small.items() if k != "meta_items"
    }
    assert large["items"] < 20  # its own targets, not the base's 300 heads
    assert small_lint == large_lint


def test_the_broken_links_a_put_reports_are_the_ones_the_walk_finds(admin: Client, pages: Pages) -> None:
    given_the_link_targets(admin)
    seed(pages, 5)
    _counts, lint = one_put(admin)
    broken = [f for f in lint if f["code"] == "broken_link"]
    assert {f["message"].split("'")[1] for f in broken} == {"missing.md", "gone"}
    head = pages.runtime.pages.head("falcon", "/fs/w.md")
    assert head is not None
    assert broken == walk(pages.runtime.pages, "falcon", fresh=True).broken_links("/fs/w.md", head.meta["links"])


def test_a_page_naming_many_missing_targets_gets_every_one_reported_once(admin: Client, pages: Pages) -> None:
    seed(pages, 5)
    missing = " ".join(f"[m{n}](m{n}.md)" for n in range(40))
    answer = admin.put("many.md", f"---\ntype: Concept\n---\n{missing} [again](m0.md) [ok](bulk/p00001.md)\n")
    assert answer.status == 200, answer.body
    broken = [f["message"].split("'")[1] for f in answer.body["lint"] if f["code"] == "broken_link"]
    assert broken == [f"m{n}.md" for n in range(40)] + ["m0.md"]
