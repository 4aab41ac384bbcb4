"""The verbs' wire: camelCase names (``captureId``, ``evidenceQuote``), as this surface's
clients expect. Unknown fields are refused, types are never coerced, every string bounded."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel

from knowledge_service.base_model import Model
from knowledge_service.storage.verbs import AssertionFields, AssertionStatus

KNOWLEDGE_ID = r"^kn_[0-9a-f]{24}$"
CAPTURE_ID = r"^cap_[0-9a-f]{24}$"
JURISDICTION = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$"
SUBJECT_MAX = 500
ASSERTION_MAX = 10_000
QUOTE_MAX = 10_000
REASON_MAX = 2_000
TITLE_MAX = 500
CAPTURE_BODY_MAX = 1_048_576  # bytes of UTF-8
LIST_LIMIT_MAX = 100


class ReviewDecision(StrEnum):
    APPROVE = "APPROVE"
    REJECT = "REJECT"


class VerbModel(Model):
    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, alias_generator=to_camel, populate_by_name=False
    )


class DistilInput(VerbModel):
    subject: str = Field(min_length=1, max_length=SUBJECT_MAX)
    assertion: str = Field(min_length=1, max_length=ASSERTION_MAX)
    capture_id: str = Field(pattern=CAPTURE_ID)
    evidence_quote: str = Field(min_length=1, max_length=QUOTE_MAX)
    confidence: float | None = Field(default=None, ge=0, le=1)
    jurisdiction: str | None = Field(default=None, pattern=JURISDICTION)


class ProposeInput(DistilInput):
    pass


class KnowledgeIdInput(VerbModel):
    knowledge_id: str = Field(pattern=KNOWLEDGE_ID)


class RetireInput(KnowledgeIdInput):
    reason: str | None = Field(default=None, min_length=1, max_length=REASON_MAX)


class ReviewInput(KnowledgeIdInput):
    decision: ReviewDecision
    reason: str | None = Field(default=None, min_length=1, max_length=REASON_MAX)


class SupersedeInput(KnowledgeIdInput):
    superseded_by_id: str = Field(pattern=KNOWLEDGE_ID)


class ListInput(VerbModel):
    status: AssertionStatus | None = None
    jurisdiction: str | None = Field(default=None, pattern=JURISDICTION)
    limit: int = Field(default=50, ge=1, le=LIST_LIMIT_MAX)
    offset: int = Field(default=0, ge=0, le=100_000)


class CaptureCreateInput(VerbModel):
    body: str = Field(min_length=1, max_length=CAPTURE_BODY_MAX)
    title: str | None = Field(default=None, min_length=1, max_length=TITLE_MAX)


class CaptureGetInput(VerbModel):
    capture_id: str = Field(pattern=CAPTURE_ID)


# ---------------------------------------------------------------------- answers
class Answer(Model):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


class Assertion(AssertionFields, Answer):
    """An assertion as every verb that returns one answers it."""

    # The stored fields (storage/verbs.py), less the workspace, on this surface's wire (camelCase);
    # every one is in every answer, so the answer's schema requires them all.
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)


class Published(Assertion):
    """publish and review: ``alreadyPublished`` reports a re-publish that wrote nothing."""

    already_published: bool = False


class AssertionReviewed(Assertion):
    decision: ReviewDecision
    already_published: bool = False


class AssertionWithEvidence(Assertion):
    """knowledge.get: the assertion with its capture's body."""

    capture_body: str | None
    capture_sha256: str | None


class AssertionList(Answer):
    items: list[Assertion]
    total: int
    limit: int
    offset: int


class Capture(Answer):
    capture_id: str
    sha256: str
    size: int
    title: str | None = None
    storage: Literal["inline", "s3"]
    created_by: str
    created_at: datetime


class CaptureWithBody(Capture):
    body: str


class VerbDescription(Answer):
    verb: str
    summary: str
    capability: str
    risk_class: str
    min_autonomy: str
    min_permission: str
    availability: str
    mcp_tier: int | None
    idempotent: bool
    budget_gated: bool
    egress: str = "none"
    path: str
    render_schema: dict[str, Any] | None = Field(
        default=None,
        description="For a verb whose answer a panel shows: a JSON Schema of the fields shown, each with its "
        "display role in x-role (domain/verbs/render.py)",
    )


class VerbCatalogue(Answer):
    verbs: list[VerbDescription]


class VerbError(Model):
    """A refusal on this surface: ``{error, code}``."""

    model_config = ConfigDict(extra="forbid")

    error: str
    code: Literal["BadInput", "Unauthenticated", "Forbidden", "NotFound", "Conflict", "BudgetExceeded", "Internal"]


INPUTS: dict[str, type[VerbModel]] = {
    "knowledge.distil": DistilInput,
    "knowledge.propose": ProposeInput,
    "knowledge.get": KnowledgeIdInput,
    "knowledge.list": ListInput,
    "knowledge.publish": KnowledgeIdInput,
    "knowledge.retire": RetireInput,
    "knowledge.review": ReviewInput,
    "knowledge.supersede": SupersedeInput,
    "capture.create": CaptureCreateInput,
    "capture.get": CaptureGetInput,
}

OUTPUTS: dict[str, type[Answer]] = {
    "knowledge.distil": Assertion,
    "knowledge.propose": Assertion,
    "knowledge.get": AssertionWithEvidence,
    "knowledge.list": AssertionList,
    "knowledge.publish": Published,
    "knowledge.retire": Assertion,
    "knowledge.review": AssertionReviewed,
    "knowledge.supersede": Assertion,
    "capture.create": Capture,
    "capture.get": CaptureWithBody,
}
