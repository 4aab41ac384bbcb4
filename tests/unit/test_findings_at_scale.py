"""A large revision's study is a few dozen requests, not one a source (issue 56: a sync of a base of
2,683 sources ran out of the feed function's time at one conditional write a finding). Counted
on the DynamoDB tables moto serves, never timed."""

from __future__ import annotations

from typing import Any

from knowledge_service.domain.findings import study_pass
from knowledge_service.runtime import Runtime
from knowledge_service.upstream.models.feed import ForagerSource

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
