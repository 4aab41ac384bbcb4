"""What each verb does once the front door let it through (``door.invoke`` calls these).

Every write is one conditional write (or one transaction) whose condition names the
workspace; a refused condition is read back to say why, never retried blindly.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from knowledge_service.domain.verbs import models as verb_models
from knowledge_service.domain.verbs.rules import quote_is_evidence, walk_forward
from knowledge_service.errors import BadRequest, Conflict, NotFound
from knowledge_service.storage.verbs import INLINE_MAX, AssertionRecord, AssertionStatus, CaptureRecord, VerbStore


@dataclass(frozen=True)
class Context:
    store: VerbStore
    workspace: str
    actor: str


def new_knowledge_id() -> str:
    return "kn_" + secrets.token_hex(12)


def new_capture_id() -> str:
    return "cap_" + secrets.token_hex(12)


def _view(record: AssertionRecord) -> dict[str, Any]:
    return record.model_dump(exclude={"workspace"})


def _assertion(record: AssertionRecord) -> verb_models.Assertion:
    return verb_models.Assertion(**_view(record))


def _missing(knowledge_id: str, field: str = "knowledgeId") -> NotFound:
    # The same sentence for an id that never existed and one of another workspace.
    return NotFound(f"{field}: there is no assertion '{knowledge_id}' in this workspace.")


def _required(ctx: Context, knowledge_id: str, field: str = "knowledgeId") -> AssertionRecord:
    record = ctx.store.assertion(ctx.workspace, knowledge_id)
    if record is None:
        raise _missing(knowledge_id, field)
    return record


# ---------------------------------------------------------------------- distil, propose
def _evidenced(ctx: Context, request: verb_models.DistilInput, *, proposed: bool) -> verb_models.Assertion:
    found = ctx.store.capture(ctx.workspace, request.capture_id)
    if found is None:
        raise NotFound(f"captureId: there is no capture '{request.capture_id}' in this workspace.")
    _, body = found
    if not quote_is_evidence(body, request.evidence_quote):
        raise BadRequest("evidenceQuote", f"is not an exact substring of capture {request.capture_id}'s body.")
    now = datetime.now(UTC)
    record = AssertionRecord(
        workspace=ctx.workspace,
        knowledge_id=new_knowledge_id(),
        status=AssertionStatus.DISTILLED.value,
        subject=request.subject,
        assertion=request.assertion,
        capture_id=request.capture_id,
        evidence_quote=request.evidence_quote,
        confidence=request.confidence,
        jurisdiction=request.jurisdiction,
        proposed=proposed,
        created_by=ctx.actor,
        created_at=now,
        updated_at=now,
    )
    if not ctx.store.create_assertion(record):
        raise Conflict("A new assertion's id was already taken; nothing was written. Try again.")
    return _assertion(record)


def distil(ctx: Context, request: verb_models.DistilInput) -> verb_models.Assertion:
    return _evidenced(ctx, request, proposed=False)


def propose(ctx: Context, request: verb_models.ProposeInput) -> verb_models.Assertion:
    return _evidenced(ctx, request, proposed=True)


# ---------------------------------------------------------------------- reads
def get(ctx: Context, request: verb_models.KnowledgeIdInput) -> verb_models.AssertionWithEvidence:
    record = _required(ctx, request.knowledge_id)
    body = sha = None
    if record.capture_id:
        found = ctx.store.capture(ctx.workspace, record.capture_id)
        if found is not None:
            sha, body = found[0].sha256, found[1]
    return verb_models.AssertionWithEvidence(**_view(record), capture_body=body, capture_sha256=sha)


def list_assertions(ctx: Context, request: verb_models.ListInput) -> verb_models.AssertionList:
    records = [
        r
        for r in ctx.store.assertions(ctx.workspace)
        if (request.status is None or r.status == request.status.value)
        and (request.jurisdiction is None or r.jurisdiction == request.jurisdiction)
    ]
    records.sort(key=lambda r: (r.created_at, r.knowledge_id))
    page = records[request.offset : request.offset + request.limit]
    return verb_models.AssertionList(
        items=[_assertion(r) for r in page], total=len(records), limit=request.limit, offset=request.offset
    )


# ---------------------------------------------------------------------- lifecycle
def _publish(ctx: Context, knowledge_id: str) -> tuple[AssertionRecord, bool]:
    """DISTILLED → PUBLISHED in one conditional write; (the row, whether it was already published)."""
    if ctx.store.transition(
        ctx.workspace,
        knowledge_id,
        AssertionStatus.DISTILLED.value,
        AssertionStatus.PUBLISHED.value,
    ):
        return _required(ctx, knowledge_id), False
    record = _required(ctx, knowledge_id)
    if record.status == AssertionStatus.PUBLISHED.value:
        return record, True
    raise Conflict(f"Assertion {knowledge_id} is {record.status}; only a DISTILLED assertion is published.")


def publish(ctx: Context, request: verb_models.KnowledgeIdInput) -> verb_models.Published:
    record, already = _publish(ctx, request.knowledge_id)
    return verb_models.Published(**_view(record), already_published=already)


def review(ctx: Context, request: verb_models.ReviewInput) -> verb_models.AssertionReviewed:
    if request.decision is verb_models.ReviewDecision.APPROVE:
        record, already = _publish(ctx, request.knowledge_id)
        return verb_models.AssertionReviewed(**_view(record), decision=request.decision, already_published=already)
    record = _required(ctx, request.knowledge_id)
    if record.status != AssertionStatus.DISTILLED.value:
        raise Conflict(f"Assertion {request.knowledge_id} is {record.status}; only a DISTILLED assertion is reviewed.")
    return verb_models.AssertionReviewed(
        **_view(record), decision=request.decision
    )  # REJECT: no state change, only the audit row


def retire(ctx: Context, request: verb_models.RetireInput) -> verb_models.Assertion:
    extra = {"retired_reason": request.reason} if request.reason else None
    if ctx.store.transition(
        ctx.workspace,
        request.knowledge_id,
        AssertionStatus.PUBLISHED.value,
        AssertionStatus.RETIRED.value,
        extra,
    ):
        return _assertion(_required(ctx, request.knowledge_id))
    record = _required(ctx, request.knowledge_id)
    raise Conflict(f"Assertion {request.knowledge_id} is {record.status}; only a PUBLISHED assertion is retired.")


SUPERSEDABLE = {AssertionStatus.DISTILLED.value, AssertionStatus.PUBLISHED.value}
SUCCESSORS = {
    AssertionStatus.DISTILLED.value,
    AssertionStatus.PUBLISHED.value,
    AssertionStatus.SUPERSEDED.value,
}


def supersede(ctx: Context, request: verb_models.SupersedeInput) -> verb_models.Assertion:
    target_id, successor_id = request.knowledge_id, request.superseded_by_id
    if target_id == successor_id:
        raise BadRequest("supersededById", "must differ from knowledgeId (an assertion never supersedes itself).")
    target = _required(ctx, target_id)
    successor = _required(ctx, successor_id, "supersededById")
    if target.status not in SUPERSEDABLE:
        raise Conflict(f"Assertion {target_id} is {target.status}; only DISTILLED or PUBLISHED is superseded.")
    if successor.status not in SUCCESSORS:
        raise Conflict(f"Assertion {successor_id} is {successor.status}; it cannot succeed another.")
    walk = walk_forward(target_id, successor_id, lambda node: ctx.store.forward_pointer(ctx.workspace, node))
    if walk.closes_cycle:
        raise Conflict(
            f"Superseding {target_id} by {successor_id} would close a cycle: {successor_id}'s chain leads back."
        )
    if walk.too_long or walk.end is None:
        raise Conflict(f"{successor_id}'s supersession chain is too long to walk; nothing was written.")
    if not ctx.store.supersede(ctx.workspace, target_id, successor_id, walk.end):
        raise Conflict(f"Assertion {target_id} or its successor's chain changed meanwhile; nothing was written.")
    return _assertion(_required(ctx, target_id))


# ---------------------------------------------------------------------- captures
def capture_create(ctx: Context, request: verb_models.CaptureCreateInput) -> verb_models.Capture:
    data = request.body.encode("utf-8")
    if len(data) > verb_models.CAPTURE_BODY_MAX:
        raise BadRequest(
            "body", f"is {len(data)} bytes of UTF-8; a capture holds at most {verb_models.CAPTURE_BODY_MAX}."
        )
    record = CaptureRecord(
        workspace=ctx.workspace,
        capture_id=new_capture_id(),
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        title=request.title,
        storage="inline" if len(data) <= INLINE_MAX else "s3",
        created_by=ctx.actor,
        created_at=datetime.now(UTC),
    )
    if not ctx.store.create_capture(record, data):
        raise Conflict("A new capture's id was already taken; nothing was written. Try again.")
    return verb_models.Capture(**record.model_dump(exclude={"workspace"}))


def capture_get(ctx: Context, request: verb_models.CaptureGetInput) -> verb_models.CaptureWithBody:
    found = ctx.store.capture(ctx.workspace, request.capture_id)
    if found is None:
        raise NotFound(f"captureId: there is no capture '{request.capture_id}' in this workspace.")
    record, body = found
    return verb_models.CaptureWithBody(**record.model_dump(exclude={"workspace"}), body=body)


ACTIONS: dict[str, Callable[[Context, Any], verb_models.Answer]] = {
    "knowledge.distil": distil,
    "knowledge.propose": propose,
    "knowledge.get": get,
    "knowledge.list": list_assertions,
    "knowledge.publish": publish,
    "knowledge.retire": retire,
    "knowledge.review": review,
    "knowledge.supersede": supersede,
    "capture.create": capture_create,
    "capture.get": capture_get,
}
