"""Page writes do not serialise a project on one counter (issue 30): a write adds to the one
meta shard its row id picks; readers sum the shards, and the sum is still the write generation
(it grows with every write, so a kept walk is dropped) and the kept bytes."""

from __future__ import annotations

from boto3.dynamodb.conditions import Key

from knowledge_service.domain.pages.tree import walk
from knowledge_service.storage.page_store import META_SHARDS
from tests.pages.conftest import KB, Client, Pages


def shards(pages: Pages) -> dict[str, tuple[int, int]]:
    items = pages.runtime.pages.table.query(KeyConditionExpression=Key("pk").eq("META#falcon"), ConsistentRead=True)
    return {str(i["sk"]): (int(i.get("gen", 0)), int(i.get("used_bytes", 0))) for i in items["Items"]}


def test_writes_spread_over_the_shards_and_the_sums_are_the_generation_and_the_kept_bytes(
    admin: Client, pages: Pages
) -> None:
    texts = [f"# Page {n}\n" for n in range(24)]
    for n, text in enumerate(texts):
        assert admin.put(f"p{n}.md", text).status == 200
    found = shards(pages)
    assert 1 < len(found) <= META_SHARDS
    assert set(found) <= {f"#{n}" for n in range(META_SHARDS)}
    assert sum(gen for gen, _ in found.values()) == 24
    assert sum(used for _, used in found.values()) == sum(len(t.encode()) for t in texts)
    assert pages.runtime.pages.generation("falcon") == (24, sum(len(t.encode()) for t in texts))


def test_one_write_touches_one_shard(admin: Client, pages: Pages) -> None:
    assert admin.put("a.md", "# A\n").status == 200
    before = shards(pages)
    assert admin.put("a.md", "# A, again\n").status == 200
    after = shards(pages)
    changed = [sk for sk in after if after[sk] != before.get(sk)]
    assert len(changed) == 1


def test_a_write_still_drops_the_kept_walk(admin: Client, pages: Pages) -> None:
    assert admin.put("a.md", "# A\n").status == 200
    first = walk(pages.runtime.pages, "falcon")
    assert admin.put("b.md", "# B\n").status == 200
    second = walk(pages.runtime.pages, "falcon")
    assert second.generation > first.generation
    assert "/fs/b.md" in second.heads
    listing = admin.get(f"{KB}/pages?prefix=/fs").body
    assert {e["path"] for e in listing["entries"]} >= {"/fs/a.md", "/fs/b.md"}
