"""Findings: the per-source study pass, and what an operator does with a finding.

The specification's "knowledge changes" (A4) on the wire (``/knowledge/changes``,
``edge/routes/changes.py``); inside, one word: a change the study pass sees is a *finding*,
kept by ``storage/findings_store.py``.

One pass serves ``POST /knowledge/seed`` (queueing on: a study mission per source not yet studied
at its hash, its seed receipt written as it is queued),
``POST /knowledge/changes/scan`` and the timer (queueing off: findings only), and a revision
on the change feed under ``knowledge_revision_study`` (suggest: findings; on: findings
queued as missions). Everything is keyed by the knowledge base, so two projects on one
knowledge base share findings and receipts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

from pydantic import Field

from knowledge_service.base_model import Model
from knowledge_service.errors import Conflict, NotFound
from knowledge_service.storage.findings_store import (
    TRANSACTION_ITEMS,
    Finding,
    FindingPosition,
    FindingsStore,
    FindingStatus,
    SeedReceipt,
)
from knowledge_service.storage.missions import MissionBus
from knowledge_service.upstream.models import ForagerSource


class SourceLister(Protocol):
    def sources(self, project_ref: str) -> list[ForagerSource]: ...


class StudyResult(Model):
    findings: list[str] = Field(default_factory=list)
    mission_ids: list[str] = Field(default_factory=list)
    sources: int = 0
    already_studied: int = 0  # sources whose seed receipt stands at their logical_content_hash


class FindingView(Model):
    id: str
    project_ref: str
    source_id: str
    source_name: str
    kind: str
    previous_hash: str | None
    current_hash: str
    status: str
    mission_id: str | None
    detected_at: str


class FindingsAnswer(Model):
    findings: list[FindingView]  # newest first
    count: int  # how many this page holds
    next_cursor: str | None = None  # the next page's ?cursor=, while more follow


FINDINGS_PAGE_DEFAULT = 100
FINDINGS_PAGE_MAX = 500


class SeedAnswer(Model):
    knowledge_base: str
    project: str  # the project the missions were queued in ("" — the console default: no project)
    sources: int  # sources the engine lists
    already_studied: int  # their seed receipt stands at their logical_content_hash: nothing spent
    findings: int  # findings filed by this seed (new or changed sources)
    studied: int  # sources queued for study now: one mission each, the model calls seeding spends
    mission_ids: list[str]
    receipts: int  # seed receipts written, one as each mission was queued
    message: str


class ScanAnswer(Model):
    knowledge_base: str
    sources: int
    new_findings: int


def finding_id(knowledge_base: str, source_id: str, current_hash: str) -> str:
    return hashlib.sha256(f"{knowledge_base}/{source_id}/{current_hash}".encode()).hexdigest()[:24]


STUDY_RESERVE_SECONDS = 5.0
"""A bounded pass stops filing when its request has less than this left: room to record that it
stopped (the action's retry), finish the pass and answer inside API Gateway's 29 s."""


class StudyInterrupted(Exception):
    """A bounded pass ran short of time: what it filed stands, and a pass run again files only
    the rest (a finding's id is its source and hash, and those held are skipped)."""

    def __init__(self, filed: int, left: int) -> None:
        super().__init__(f"The pass ran short of time after filing {filed} finding(s); {left} left for the next pass.")
        self.filed = filed
        self.left = left


def study_pass(
    client: SourceLister,
    findings: FindingsStore,
    missions: MissionBus | None,
    knowledge_base: str,
    project: str,
    *,
    queue: bool,
    time_left: Callable[[], float] | None = None,
) -> StudyResult:
    """Compare the engine's source list with the seed receipts; file (and maybe queue) findings.

    A large revision's findings are written in groups (``FindingsStore.add_many``), those already
    held read once and skipped, so a pass over thousands of sources is a few dozen requests and a
    pass run again (after one that ran out of time) writes only what the first did not. Given
    ``time_left`` (the request's remaining seconds), the pass stops between two groups, or two
    missions, once less than :data:`STUDY_RESERVE_SECONDS` is left: :class:`StudyInterrupted`."""
    sources = client.sources(knowledge_base)
    receipts = findings.receipts(knowledge_base)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    result = StudyResult(sources=len(sources))
    candidates: list[Finding] = []
    for source in sources:
        receipt = receipts.get(source.source_id)
        if receipt is not None and receipt.logical_content_hash == source.logical_content_hash:
            result.already_studied += 1
            continue
        candidates.append(_finding(knowledge_base, source, receipt, now))
    held = findings.finding_ids(knowledge_base) if candidates else set()
    unheld = [f for f in candidates if f.id not in held]
    for start in range(0, len(unheld), TRANSACTION_ITEMS):
        _in_time(time_left, len(result.findings), len(unheld) - start)
        result.findings += findings.add_many(unheld[start : start + TRANSACTION_ITEMS])
    if queue and missions is not None:
        for n, finding in enumerate(candidates):
            _in_time(time_left, len(result.findings), len(candidates) - n)
            mission = _queue(findings, missions, finding, project)
            if mission:
                result.mission_ids.append(mission)
    return result


def _in_time(time_left: Callable[[], float] | None, filed: int, left: int) -> None:
    if time_left is not None and time_left() < STUDY_RESERVE_SECONDS:
        raise StudyInterrupted(filed, left)


def _finding(knowledge_base: str, source: ForagerSource, receipt: SeedReceipt | None, now: str) -> Finding:
    return Finding(
        id=finding_id(knowledge_base, source.source_id, source.logical_content_hash),
        knowledge_base=knowledge_base,
        project_ref=knowledge_base,
        source_id=source.source_id,
        source_name=source.name,
        kind="new" if receipt is None else "changed",
        previous_hash=None if receipt is None else receipt.logical_content_hash,
        current_hash=source.logical_content_hash,
        detected_at=now,
    )


def _queue(findings: FindingsStore, missions: MissionBus, finding: Finding, project: str) -> str | None:
    """open → queued (the claim), then the mission; None when it was already decided."""
    if not findings.decide(finding.knowledge_base, finding.id, FindingStatus.QUEUED):
        return None
    mission_id = missions.queue(
        project, finding.knowledge_base, {"finding_id": finding.id, "source_id": finding.source_id}
    )
    findings.set_mission(finding.knowledge_base, finding.id, mission_id)
    findings.write_receipts(
        [
            SeedReceipt(
                knowledge_base=finding.knowledge_base,
                source_id=finding.source_id,
                logical_content_hash=finding.current_hash,
                studied_at=datetime.now(UTC).isoformat(),
            )
        ]
    )
    return mission_id


def list_findings(
    findings: FindingsStore,
    knowledge_base: str,
    status: str,
    *,
    limit: int = FINDINGS_PAGE_DEFAULT,
    cursor: str | None = None,
) -> FindingsAnswer:
    """A page of the knowledge base's findings, newest first, after ``cursor`` (a ``next_cursor``)."""
    after = None
    if cursor is not None:
        detected_at, _, finding_id_ = cursor.partition("#")
        after = FindingPosition(detected_at=detected_at, finding_id=finding_id_)
    rows, last = findings.page(knowledge_base, open_only=status == FindingStatus.OPEN, limit=limit, after=after)
    views = [FindingView.model_validate(f.model_dump()) for f in rows]
    next_cursor = f"{last.detected_at}#{last.finding_id}" if last else None
    return FindingsAnswer(findings=views, count=len(views), next_cursor=next_cursor)


def _found(findings: FindingsStore, knowledge_base: str, finding_id_: str) -> Finding:
    found = findings.get(knowledge_base, finding_id_)
    if found is None:
        raise NotFound("There is no such finding.")
    return found


def queue_finding(
    findings: FindingsStore, missions: MissionBus, knowledge_base: str, finding_id_: str, project: str
) -> FindingView:
    finding = _found(findings, knowledge_base, finding_id_)
    if _queue(findings, missions, finding, project) is None:
        raise Conflict(f"This finding was already decided ({finding.status}).", code="already_decided")
    return FindingView.model_validate(_found(findings, knowledge_base, finding_id_).model_dump())


def dismiss_finding(findings: FindingsStore, knowledge_base: str, finding_id_: str) -> FindingView:
    finding = _found(findings, knowledge_base, finding_id_)
    if not findings.decide(knowledge_base, finding_id_, FindingStatus.DISMISSED):
        raise Conflict(f"This finding was already decided ({finding.status}).", code="already_decided")
    return FindingView.model_validate(_found(findings, knowledge_base, finding_id_).model_dump())


def seed(
    client: SourceLister, findings: FindingsStore, missions: MissionBus, knowledge_base: str, project: str
) -> SeedAnswer:
    """Study every source: the per-source pass with queueing on (the text: "under on it runs with
    queueing on"; seeding "spends model calls"). Each source not yet studied at its
    logical_content_hash gets its finding (new or changed) and a study mission in ``project``, and
    its seed receipt as the mission is queued; one already studied at its hash spends nothing, and
    one whose finding an operator already decided at that hash is not queued again."""
    result = study_pass(client, findings, missions, knowledge_base, project, queue=True)
    queued = len(result.mission_ids)
    not_queued = result.sources - result.already_studied - queued
    sentence = (
        f"Seeded {result.sources} source(s): {queued} study mission(s) queued"
        f"{' in ' + repr(project) if project else ' with no project'} — each spends model calls; "
        f"{result.already_studied} already studied at their content hash"
    )
    if not_queued:
        sentence += f"; {not_queued} decided earlier at this content hash and not queued again"
    return SeedAnswer(
        knowledge_base=knowledge_base,
        project=project,
        sources=result.sources,
        already_studied=result.already_studied,
        findings=len(result.findings),
        studied=queued,
        mission_ids=result.mission_ids,
        receipts=queued,
        message=sentence + ".",
    )


def scan(client: SourceLister, findings: FindingsStore, knowledge_base: str) -> ScanAnswer:
    result = study_pass(client, findings, None, knowledge_base, "", queue=False)
    return ScanAnswer(knowledge_base=knowledge_base, sources=result.sources, new_findings=len(result.findings))
