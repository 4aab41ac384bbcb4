"""GET /knowledge/feed: the engine's head revision, the watermark(s), recent envelopes and actions."""

from __future__ import annotations

import re

from knowledge_service.base_model import Model
from knowledge_service.budget import finished, started
from knowledge_service.domain import identifiers
from knowledge_service.domain.feed.consumer import STREAM, mine_export
from knowledge_service.domain.feed.history import reading_from
from knowledge_service.domain.feed.recovery import RECONCILED
from knowledge_service.domain.feed.retention import Retention
from knowledge_service.domain.package import PackageAgreement, package_agreement
from knowledge_service.errors import BadRequest
from knowledge_service.models import AutoStudy, KnowledgeSettings, RevisionStudy
from knowledge_service.storage.feed_store import Action, ActionStore, InboxStore, WatermarkStore
from knowledge_service.upstream.client import ForagerClient
from knowledge_service.upstream.models import HeadRevision


class WatermarkView(Model):
    sequence: int
    status: str
    note: str | None


class WatermarkRow(WatermarkView):
    instance_id: str
    generation: str
    stream: str
    epoch: int  # 0, then one more each time the producer was found restored under this generation
    base: int  # sequences at or below it were read by an earlier epoch
    reconciled_over: list[list[int]]
    superseded_by: str | None  # the epoch that replaced this one (a restore); None for the live one
    updated_at: str


class InboxView(Model):
    sequence: int
    event_type: str
    revision_id: str | None
    publication_sequence: int | None


class ExportView(Model):
    sequence: int
    revision_id: str | None
    export_id: str | None
    export_format: str | None
    package_digest: str | None
    # Recorded from FORAGER's export history when a hole in the feed was passed over (its
    # envelope never arrived); sequence is then the hole's last sequence.
    reconciled: bool = False


class ActionView(Model):
    revision_id: str
    action_type: str
    outcome: str
    republished: bool


class FeedView(Model):
    change_feed: bool
    instance_id: str | None
    generation: str | None
    auto_study: AutoStudy
    revision_study: RevisionStudy
    revision_study_resolved: AutoStudy
    head: HeadRevision | None
    watermark: WatermarkView | None
    watermarks: list[WatermarkRow]
    retention: Retention
    inbox: list[InboxView]
    exports: list[ExportView]
    package_agreement: PackageAgreement
    package_note: str | None
    actions: list[ActionView]  # recent: newest claim first, at most ACTIONS_PAGE
    actions_cursor: str | None  # pass back as actions_after for the older ones; None when no more


ACTIONS_PAGE = 20
ACTIONS_CURSOR_MAX = 400
ACTIONS_CURSOR_PATTERN = identifiers.ACTIONS_CURSOR_PATTERN
"""Whatever the cursor says, the actions are read from the caller's scope's knowledge base."""
ACTIONS_CURSOR = re.compile(ACTIONS_CURSOR_PATTERN)
ACTIONS_CURSOR_PROBLEM = identifiers.ACTIONS_CURSOR_PROBLEM


def recent_actions(
    all_actions: list[Action], after: str | None, limit: int = ACTIONS_PAGE
) -> tuple[list[Action], str | None]:
    """Newest claim first, ``limit`` at a time; the cursor names the last one shown."""
    ordered = sorted(all_actions, key=lambda a: (a.claimed_at, a.effect_key), reverse=True)
    if after is not None:
        if not ACTIONS_CURSOR.fullmatch(after) or len(after) > ACTIONS_CURSOR_MAX:
            raise BadRequest("actions_after", ACTIONS_CURSOR_PROBLEM)
        claimed_at, effect_key = after.split("#", 1)
        ordered = [a for a in ordered if (a.claimed_at, a.effect_key) < (claimed_at, effect_key)]
    page = ordered[:limit]
    more = len(ordered) > limit
    cursor = f"{page[-1].claimed_at}#{page[-1].effect_key}" if more else None
    return page, cursor


def feed_view(
    client: ForagerClient,
    settings: KnowledgeSettings,
    knowledge_base: str,
    inbox: InboxStore,
    watermarks: WatermarkStore,
    actions: ActionStore,
    actions_after: str | None = None,
) -> FeedView:
    # Independent reads at once (budget.started: the container's pool, the request's budget):
    # FORAGER's capabilities beside the three tables; then the head and the stream they name.
    caps_asked = started(client.capabilities)
    marks_read = started(lambda: watermarks.all(knowledge_base))
    actions_read = started(lambda: actions.all(knowledge_base))
    exports_read = started(lambda: inbox.exports(knowledge_base))
    finished(caps_asked, marks_read, actions_read, exports_read)
    caps, marks = caps_asked.result(), marks_read.result()
    current = reading_from(marks, caps.instance_id or "unknown", caps.generation or "unknown", STREAM)
    head_asked = started(lambda: client.head_revision(knowledge_base)) if caps.change_feed else None
    rows = inbox.stream(current.stream_key) if current else []
    finished(*([head_asked] if head_asked else []))
    head = head_asked.result() if head_asked else None
    agreement, note = package_agreement(caps.package_version, asked=True)
    shown, cursor = recent_actions(actions_read.result(), actions_after)
    return FeedView(
        change_feed=caps.change_feed,
        instance_id=caps.instance_id,
        generation=caps.generation,
        auto_study=settings.knowledge_auto_study,
        revision_study=settings.knowledge_revision_study,
        revision_study_resolved=settings.revision_study_resolved,
        head=head,
        watermark=None
        if current is None
        else WatermarkView(sequence=current.sequence, status=current.status, note=current.note),
        watermarks=[WatermarkRow.model_validate(m.model_dump()) for m in marks],
        retention=Retention(),
        inbox=[InboxView.model_validate(r.model_dump()) for r in rows],
        exports=[
            ExportView(
                sequence=r.sequence,
                revision_id=r.revision_id,
                reconciled=r.event_id.startswith(RECONCILED),
                **mine_export(r.envelope),
            )
            for r in exports_read.result()
        ],
        package_agreement=agreement,
        package_note=note,
        actions=[ActionView.model_validate(a.model_dump()) for a in shown],
        actions_cursor=cursor,
    )
