"""A project's page meta is spread over ``META_SHARDS`` items: whatever shard a write picks, the
reads that sum the generation and the kept bytes read it (a read that left one shard out would
miss every write that landed there)."""

from __future__ import annotations

from hypothesis import given, strategies as st

from knowledge_service.storage.page_store import LEGACY_META_SK, META_SHARDS, generation_of, meta_key, meta_keys


@given(st.text(min_size=1, max_size=40), st.lists(st.text(max_size=30), min_size=1, max_size=50))
def test_every_shard_a_write_picks_is_one_the_reads_sum(project: str, spread: list[str]) -> None:
    read = {(k["pk"], k["sk"]) for k in meta_keys(project)}
    for spread_by in spread:
        key = meta_key(project, spread_by)
        assert (key["pk"], key["sk"]) in read


def test_the_reads_name_each_shard_once_and_the_legacy_item() -> None:
    keys = [k["sk"] for k in meta_keys("falcon")]
    assert sorted(keys) == sorted([f"#{n}" for n in range(META_SHARDS)] + [LEGACY_META_SK])


def test_writes_in_every_shard_are_summed() -> None:
    # Given one write's meta in each shard (the last one too)
    items = [{"gen": 1, "used_bytes": 10 * (n + 1)} for n in range(META_SHARDS)]
    # Then the generation and the bytes count them all
    assert generation_of(items) == (META_SHARDS, sum(10 * (n + 1) for n in range(META_SHARDS)))
