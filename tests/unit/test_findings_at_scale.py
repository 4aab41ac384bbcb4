"""A large revision's study is a few dozen requests, not one a source (issue 56: a sync of a base of
2,683 sources ran out of the feed function's time at one conditional write a finding). Counted
on the DynamoDB tables moto serves, never timed. A pass bounded by its request's time stops
between two groups and the next files the rest: the time is a fake the test shortens."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from knowledge_service import budget
from knowledge_service.domain.feed.consumer import FeedConsumer
from knowledge_service.domain.findings import STUDY_RESERVE_SECONDS, StudyInterrupted, study_pass
from knowledge_service.models import AutoStudy
from knowledge_service.runtime import Runtime
from knowledge_service.upstream.client import ForagerClient
from knowledge_service.upstream.models.feed import ForagerSource
from local_engine.double import Double

REF = "falcon"

SOURCES = 3_000


class Lister:
    def __init__(self, sources: list[ForagerSource]) -> None:
        self.listed = sources

    def sources(self, project_ref: str) -> list[ForagerSource]:
        return self.listed


def _counted(rt: Runtime) -> list[str]:
    calls: list[str] = []
    client = rt.findings._client  # the store's own client: every request it sends is counted

    def count(event_name: str, **_: Any) -> None:
        calls.append(event_name.rsplit(".", 1)[-1])

    client.meta.events.register("before-call.dynamodb", count)
    return calls


def test_a_revision_of_three_thousand_sources_is_studied_in_a_few_dozen_requests_and_again_in_fewer(
    aws: Runtime,
) -> None:
    # Given a base of 3,000 sources the colony has never studied
    sources = [
        ForagerSource(source_id=f"src_{n:05d}", project_ref="big", name=f"docs/{n}.md", logical_content_hash=f"h{n}")
        for n in range(SOURCES)
    ]
    calls = _counted(aws)
    # When the study pass runs (suggest: findings only)
    first = study_pass(Lister(sources), aws.findings, None, "big", "", queue=False)
    # Then every source has its finding, written in transactions of a hundred
    assert len(first.findings) == SOURCES
    assert len(aws.findings.finding_ids("big")) == SOURCES
    assert calls.count("TransactWriteItems") == SOURCES // 100 and len(calls) < 50, sorted(set(calls))
    # And a pass run again (after one that stopped, or a redelivery) writes nothing, and files nothing twice
    calls.clear()
    again = study_pass(Lister(sources), aws.findings, None, "big", "", queue=False)
    assert again.findings == [] and "TransactWriteItems" not in calls and len(calls) < 10
    # while one more source is one more finding
    sources.append(ForagerSource(source_id="src_new", project_ref="big", name="docs/new.md", logical_content_hash="n"))
    assert len(study_pass(Lister(sources), aws.findings, None, "big", "", queue=False).findings) == 1


class Shortening:
    """A request's budget whose remaining time runs short after ``groups`` reads."""

    def __init__(self, groups: int) -> None:
        self.reads = 0
        self.groups = groups
        self.deadline = time.monotonic() + 60.0  # each engine call's own deadline (not what runs short)

    def remaining(self) -> float:
        self.reads += 1
        return 60.0 if self.reads <= self.groups else STUDY_RESERVE_SECONDS - 0.1


def test_a_pass_short_of_time_stops_between_two_groups_and_the_next_files_only_the_rest(aws: Runtime) -> None:
    sources = [
        ForagerSource(source_id=f"src_{n:05d}", project_ref="big", name=f"docs/{n}.md", logical_content_hash=f"h{n}")
        for n in range(350)
    ]
    clock = Shortening(groups=2)
    # When a pass's request has time for two groups of a hundred
    with pytest.raises(StudyInterrupted) as stopped:
        study_pass(Lister(sources), aws.findings, None, "big", "", queue=False, time_left=clock.remaining)
    # Then it stops before the third, saying what it filed and what is left
    assert (stopped.value.filed, stopped.value.left) == (200, 150)
    assert len(aws.findings.finding_ids("big")) == 200
    # And the next pass files the rest, none twice
    rest = study_pass(Lister(sources), aws.findings, None, "big", "", queue=False)
    assert len(rest.findings) == 150
    assert len(aws.findings.finding_ids("big")) == 350


class Listing:
    """The engine's client, its source list a large base's (the feed stays the engine's own)."""

    def __init__(self, inner: ForagerClient, listed: list[ForagerSource]) -> None:
        self.inner = inner
        self.listed = listed

    def sources(self, project_ref: str) -> list[ForagerSource]:
        return self.listed

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_revision_whose_study_runs_short_of_the_requests_time_is_retried_and_filed_exactly_once(
    knowledge_on: Runtime, forager: Double
) -> None:
    listed = [
        ForagerSource(source_id=f"src_{n:03d}", project_ref=REF, name=f"docs/{n}.md", logical_content_hash=f"h{n}")
        for n in range(250)
    ]
    forager.put_source(REF, "a.md", "a")  # one revision on the engine's feed
    engine = Listing(ForagerClient(forager.url, forager.token, timeout_seconds=10.0), listed)
    at = [datetime(2026, 12, 8, 6, 0, tzinfo=UTC)]
    run = FeedConsumer(knowledge_on.feed_stores(), engine, now=lambda: at[0], rng=random.Random(7))  # type: ignore[arg-type]
    # When the pass runs under a request whose time runs short after one group
    with budget.spending(Shortening(groups=1)):  # type: ignore[arg-type]
        first = run.run(REF, REF, AutoStudy.SUGGEST)
    # Then the revision is recorded and its action reads retrying, interrupted, a hundred filed
    assert (first.watermark, first.acted, first.retrying, first.findings) == (1, 0, 1, 100)
    [action] = knowledge_on.actions.all(REF)
    assert action.outcome == "retrying" and [a["error_class"] for a in action.attempts] == ["interrupted"]
    assert len(knowledge_on.findings.finding_ids(REF)) == 100
    # And the next pass past the backoff files the rest, and the action is studied once
    at[0] += timedelta(seconds=1)
    second = run.run(REF, REF, AutoStudy.SUGGEST)
    assert (second.retried, second.retrying, second.findings) == (1, 0, 150)
    assert [a.outcome for a in knowledge_on.actions.all(REF)] == ["studied"]
    assert len(knowledge_on.findings.finding_ids(REF)) == 250
