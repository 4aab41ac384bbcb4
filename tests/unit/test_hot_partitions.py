"""The event log and the verb audit keyed so that one busy event type or workspace cannot cap
the installation (issue 30): rows spread over shards, read back merged, in order, paged."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from boto3.dynamodb.conditions import Attr

from knowledge_service.runtime import Runtime
from knowledge_service.storage import event_log as log_module
from knowledge_service.storage.event_log import SHARDS, EventLog, event_item, new_event
from knowledge_service.storage.verbs import AUDIT_SHARDS


def seed_events(rt: Runtime, count: int, event_type: str = "kb_history_forgotten") -> list[str]:
    """``count`` events a second apart, oldest first; their ids."""
    start = datetime(2026, 12, 1, tzinfo=UTC)
    ids = []
    table = rt.events._table
    for n in range(count):
        event = new_event(event_type, "ada", {"project": "falcon" if n % 2 else "heron", "n": n})
        event = event.model_copy(update={"at": start + timedelta(seconds=n)})
        table.put_item(Item=event_item(event))
        ids.append(event.event_id)
    return ids


def test_one_event_type_is_spread_over_partitions(aws: Runtime) -> None:
    seed_events(aws, 40)
    items = aws.events._table.scan()["Items"]
    assert len({i["event_type"] for i in items}) > 1
    assert {i["type"] for i in items} == {"kb_history_forgotten"}
    assert len({i["log"] for i in items}) > 1
    assert all(int(str(i["event_type"]).rsplit("#", 1)[1]) < SHARDS for i in items)


def test_recent_reads_every_shard_newest_first(aws: Runtime) -> None:
    ids = seed_events(aws, 30)
    recent = aws.events.recent("kb_history_forgotten", limit=12)
    assert [e.event_id for e in recent] == list(reversed(ids))[:12]
    assert {e.event_type for e in recent} == {"kb_history_forgotten"}


def test_pages_of_the_whole_log_keep_their_order_and_miss_nothing(aws: Runtime) -> None:
    ids = seed_events(aws, 37)
    seen: list[str] = []
    before = None
    while True:
        rows, before = aws.events.page(act=None, project=None, limit=10, before=before)
        seen += [r.event_id for r in rows]
        if before is None:
            break
    assert seen == list(reversed(ids))


def test_filters_still_apply_across_the_shards(aws: Runtime) -> None:
    ids = seed_events(aws, 20)
    seed_events(aws, 5, "knowledge_base_created")
    rows, _ = aws.events.page(act="kb_history_forgotten", project="falcon", limit=50, before=None)
    assert [r.event_id for r in rows] == [i for n, i in reversed(list(enumerate(ids))) if n % 2]
    assert {r.event_type for r in rows} == {"kb_history_forgotten"}


def test_the_shards_are_read_at_once(aws: Runtime, monkeypatch: object) -> None:
    reads: list[int] = []
    real = log_module._each_shard

    def counted(read):  # type: ignore[no-untyped-def]
        answers = real(read)
        reads.append(len(answers))
        return answers

    monkeypatch.setattr(log_module, "_each_shard", counted)  # type: ignore[attr-defined]
    seed_events(aws, 3)
    assert isinstance(aws.events, EventLog)
    aws.events.page(act=None, project=None, limit=5, before=None)
    assert reads == [SHARDS]


def test_one_workspace_s_audit_is_spread_and_read_back_in_order(aws: Runtime) -> None:
    audit = aws.verb_audit
    recorded = [f"2026-12-01T00:00:{n:02d}+00:00#{n:012x}" for n in range(30)]
    for n, at in enumerate(recorded):
        audit.record({"workspace": "falcon", "recorded": at, "verb": "knowledge.list", "n": n})
    audit.conclude("falcon", recorded[7], {"outcome": "ok"})
    items = audit._table.scan()["Items"]
    partitions = {str(i["workspace"]) for i in items}
    assert len(partitions) > 1
    assert all(p.startswith("falcon#") and int(p.rsplit("#", 1)[1]) < AUDIT_SHARDS for p in partitions)
    rows = audit.rows("falcon")
    assert [r["recorded"] for r in rows] == recorded
    assert {r["workspace"] for r in rows} == {"falcon"}
    assert rows[7]["outcome"] == "ok"
    assert audit.rows("heron") == []
    assert not audit._table.scan(FilterExpression=Attr("workspace").eq("falcon"))["Items"]


def test_a_page_says_more_follow_when_one_shard_alone_filled_it(aws: Runtime) -> None:
    """Every row in one shard (issue 39's survivor): the page is that shard's ``limit`` rows and
    nothing else, so only the shard's own "I stopped at the limit" says more follow."""
    start = datetime(2026, 12, 2, tzinfo=UTC)
    ids: list[str] = []
    while len(ids) < 13:
        event = new_event("kb_history_forgotten", "ada", {"project": "falcon"})
        if log_module.shard_of(event.event_id) != 3:
            continue
        event = event.model_copy(update={"at": start + timedelta(seconds=len(ids))})
        aws.events._table.put_item(Item=event_item(event))
        ids.append(event.event_id)
    first, before = aws.events.page(act=None, project=None, limit=10, before=None)
    assert [e.event_id for e in first] == list(reversed(ids))[:10]
    assert before is not None
    rest, after = aws.events.page(act=None, project=None, limit=10, before=before)
    assert [e.event_id for e in rest] == list(reversed(ids))[10:] and after is None
