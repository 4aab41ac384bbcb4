"""Curation: what a person decides in FORAGER's own application, through the colony.

The rules every act keeps (specification, "FORAGER's own application's writes (K2)"):

- the knowledge base is the caller's project's, resolved at the operator's rank (the route
  declares it; a viewer and a role-less owner are refused 403);
- the record is read first and held to that knowledge base: FORAGER's record routes are not
  project-scoped upstream, so another base's record is 404 in the words an id that does not
  exist gets, and nothing is sent;
- FORAGER's own words go to FORAGER, a field with no value left out; the signed-in user's name
  goes as FORAGER's ``actor``; a note is optional, trimmed, and refused past 2,000 characters;
- nothing is decided for anyone: the colony never applies FORAGER's suggestion, never picks a
  side and never merges on its own; a merge's answer is read back from FORAGER;
- every act is recorded in the event log as ``knowledge_curated`` with its ``act``, naming
  who, which knowledge base and project, which record and what was chosen — never the note.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import ConfigDict, Field, field_validator

from knowledge_service.base_model import Model
from knowledge_service.domain import identifiers
from knowledge_service.domain.reads import Reader, fetched, missing
from knowledge_service.domain.scope import held
from knowledge_service.errors import BadRequest, Conflict, UpstreamError, UpstreamRefused
from knowledge_service.identity.principal import Principal
from knowledge_service.storage.event_log import EventLog
from knowledge_service.upstream import models as upstream_models

T = TypeVar("T")

NOTES_MAX = 2000
NOTES_RAW_MAX = 20_000
"""The most a note may be before it is trimmed: bounded before it is read."""
NOTES_PATTERN = rf"^[{identifiers.BLANK_CLASS}]*[\s\S]{{0,{NOTES_MAX}}}[{identifiers.BLANK_CLASS}]*$"
"""The rule, declared: at most 2,000 characters once ``identifiers.BLANK`` is trimmed from both
ends (the same ASCII whitespace in Python's and JSON Schema's regex; a note is refused past
it, never cut). The code checks the rule by trimming and counting, never by this pattern."""
RESOLVE_ACTIONS = {
    "contradiction": ("accept_winner", "keep_both", "dismiss"),
    "duplicate": ("archive_duplicates", "keep_both", "dismiss"),
}
ALL_RESOLVE_ACTIONS = ("accept_winner", "archive_duplicates", "keep_both", "dismiss")
CURATED = "knowledge_curated"


def _trimmed_notes(value: str | None) -> str | None:
    if value is None:
        return None
    text = value.strip(identifiers.BLANK)
    if len(text) > NOTES_MAX:
        raise ValueError(f"must be at most {NOTES_MAX} characters (it is refused, not cut)")
    return text or None


class _Curation(Model):
    model_config = ConfigDict(extra="forbid")

    notes: str | None = Field(
        default=None,
        max_length=NOTES_RAW_MAX,
        json_schema_extra={"pattern": NOTES_PATTERN},
        description="Optional; trimmed, and at most 2,000 characters after trimming (refused, never cut)",
    )

    @field_validator("notes")
    @classmethod
    def _notes(cls, value: str | None) -> str | None:
        return _trimmed_notes(value)


class ResolveRequest(_Curation):
    """``POST /knowledge/conflicts/{id}/resolve``."""

    action: str = Field(min_length=1, max_length=64, pattern=r"^[a-z0-9_]+$")
    winner_id: str | None = Field(default=None, max_length=64, pattern=identifiers.record_pattern("ki"))


class DecideRequest(_Curation):
    """``POST /knowledge/duplicates/{id}/decide``."""

    action: Literal["merge", "keep_apart"]


class UnmergeRequest(_Curation):
    """``POST /knowledge/entities/{id}/unmerge`` (the body is optional)."""


class ReviewRequest(_Curation):
    """``POST /knowledge/items/{id}/review``."""

    action: Literal["mark_reviewed", "reject", "restore"]


class DuplicateDecided(Model):
    duplicate: upstream_models.Duplicate
    merged: bool
    kept: upstream_models.DuplicateSide | None
    merged_away: upstream_models.DuplicateSide | None


class Unmerged(Model):
    restored: upstream_models.PersonRow
    winner: upstream_models.PersonRow


class ItemReviewed(Model):
    knowledge_id: str
    status: str
    review_status: str
    reviewed_by: str | None
    reviewed_at: str | None
    review_notes: str | None


# ------------------------------------------------------------------------------ disagreements
def resolve(
    reader: Reader, principal: Principal, events: EventLog, conflict_id: str, request: ResolveRequest
) -> upstream_models.ConflictRecord:
    conflict = _conflict(reader, conflict_id)
    if conflict.status != "open":
        raise Conflict(
            "This disagreement was already decided; a second decision would overwrite it, so reopen it first.",
            code="already_decided",
        )
    if request.action not in ALL_RESOLVE_ACTIONS:
        raise BadRequest("action", f"is not one FORAGER takes ({', '.join(ALL_RESOLVE_ACTIONS)}).")
    fitting = RESOLVE_ACTIONS.get(conflict.type, ())
    if request.action not in fitting:
        raise BadRequest("action", f"does not fit a {conflict.type} disagreement ({', '.join(fitting) or 'none'}).")
    sides = {side.knowledge_id for side in conflict.sides}
    if request.action == "accept_winner":
        if request.winner_id is None:
            raise BadRequest("winner_id", "is required with accept_winner: name the side to keep.")
        if request.winner_id not in sides:
            raise BadRequest("winner_id", "is not one of this disagreement's sides.")
    elif request.winner_id is not None:
        raise BadRequest("winner_id", "is only given with accept_winner.")
    body = {
        "action": request.action,
        "winner_id": request.winner_id,
        "notes": request.notes,
        "actor": principal.name,
    }
    decided = _asked(lambda: reader.forager.resolve_conflict(conflict_id, body))
    _curated(
        events, reader, principal, "resolve", conflict_id, {"action": request.action, "winner_id": request.winner_id}
    )
    return decided


def reopen(reader: Reader, principal: Principal, events: EventLog, conflict_id: str) -> upstream_models.ConflictRecord:
    conflict = _conflict(reader, conflict_id)
    if conflict.status == "open":
        raise Conflict("This disagreement is open; there is no decision to reopen.", code="not_decided")
    reopened = _asked(lambda: reader.forager.reopen_conflict(conflict_id, principal.name))
    _curated(events, reader, principal, "reopen", conflict_id, {"previous_status": conflict.status})
    return reopened


def _conflict(reader: Reader, conflict_id: str) -> upstream_models.ConflictRecord:
    listed = held(lambda: reader.forager.conflicts(reader.knowledge_base, "all"))
    found = next((c for c in listed.conflicts if c.conflict_id == conflict_id), None)
    if found is None or found.project_ref != reader.knowledge_base:
        raise missing("disagreement", conflict_id)
    return found


# ------------------------------------------------------------------------------ people
def decide(
    reader: Reader, principal: Principal, events: EventLog, candidate_id: str, request: DecideRequest
) -> DuplicateDecided:
    """Merge or keep apart; found in the base's own list, since FORAGER has no read of one."""
    listed = held(lambda: reader.forager.duplicates(reader.knowledge_base, "all"))
    candidate = next((d for d in listed.duplicates if d.candidate_id == candidate_id), None)
    if candidate is None:
        raise missing("possible duplicate", candidate_id)
    if candidate.status != "pending":
        raise Conflict("This possible duplicate was already decided.", code="already_decided")
    body = {"action": request.action, "notes": request.notes, "actor": principal.name}
    answer = _asked(lambda: reader.forager.decide_duplicate(candidate_id, body))
    kept = merged_away = None
    if request.action == "merge":
        kept, merged_away = _read_back_merge(reader, answer.duplicate)
    chosen: dict[str, Any] = {"action": request.action}
    if kept is not None and merged_away is not None:
        chosen |= {"kept": kept.entity_id, "merged_away": merged_away.entity_id}
    _curated(events, reader, principal, request.action, candidate_id, chosen)
    return DuplicateDecided(
        duplicate=answer.duplicate, merged=request.action == "merge", kept=kept, merged_away=merged_away
    )


def _read_back_merge(
    reader: Reader, duplicate: upstream_models.Duplicate
) -> tuple[upstream_models.DuplicateSide, upstream_models.DuplicateSide]:
    """Which one FORAGER kept, as FORAGER now says: never predicted here."""
    a = reader.forager.entity(duplicate.entity_a.entity_id)
    b = reader.forager.entity(duplicate.entity_b.entity_id)
    for kept, away in ((a, b), (b, a)):
        if kept.merged_into is None and away.merged_into == kept.entity.entity_id:
            return _side(kept.entity), _side(away.entity)
    raise UpstreamError("FORAGER recorded the merge, but neither side reads as merged into the other.")


def _side(row: upstream_models.PersonRow) -> upstream_models.DuplicateSide:
    return upstream_models.DuplicateSide(
        entity_id=row.entity_id, name=row.name, type=row.type, aliases=list(row.aliases)
    )


def unmerge(
    reader: Reader, principal: Principal, events: EventLog, entity_id: str, request: UnmergeRequest
) -> Unmerged:
    entity = fetched("entity", entity_id, lambda: reader.forager.entity(entity_id))
    if entity.project_ref != reader.knowledge_base:
        raise missing("entity", entity_id)
    if entity.merged_into is None:
        raise BadRequest("id", "names an entity that is not merged into another.")
    body = {"notes": request.notes, "actor": principal.name}
    answer = _asked(lambda: reader.forager.unmerge_entity(entity_id, body))
    _curated(events, reader, principal, "unmerge", entity_id, {"winner": answer.winner.entity_id})
    return Unmerged(restored=answer.restored, winner=answer.winner)


# ------------------------------------------------------------------------------ statements
def review(
    reader: Reader, principal: Principal, events: EventLog, knowledge_id: str, request: ReviewRequest
) -> ItemReviewed:
    item = fetched("statement", knowledge_id, lambda: reader.forager.knowledge_item(knowledge_id))
    if item.project_ref != reader.knowledge_base:
        raise missing("statement", knowledge_id)
    body = {"action": request.action, "notes": request.notes, "actor": principal.name}
    answer = _asked(lambda: reader.forager.review_item(knowledge_id, body))
    _curated(events, reader, principal, "review", knowledge_id, {"action": request.action})
    return ItemReviewed(
        knowledge_id=answer.knowledge_id,
        status=answer.status,
        review_status=answer.review_status,
        reviewed_by=answer.reviewed_by,
        reviewed_at=answer.reviewed_at,
        review_notes=answer.review_notes,
    )


# ------------------------------------------------------------------------------ plumbing
def _curated(
    events: EventLog, reader: Reader, principal: Principal, act: str, record: str, chosen: dict[str, Any]
) -> None:
    events.record(
        CURATED,
        principal.name,
        {
            "act": act,
            "project": reader.scope.project,
            "knowledge_base": reader.knowledge_base,
            "record": record,
            "chosen": {k: v for k, v in chosen.items() if v is not None},
        },
    )


def _asked(send: Callable[[], T]) -> T:
    """FORAGER's own refusals of an act, in its words and the envelope's codes."""
    try:
        return send()
    except UpstreamRefused as refused:
        if refused.upstream_status == 409 and refused.upstream_code in ("already_decided", "not_decided"):
            raise Conflict(refused.upstream_message, code=refused.upstream_code) from None
        if refused.upstream_status == 409:
            raise Conflict(refused.upstream_message) from None
        if refused.upstream_status == 400:
            raise BadRequest("action", refused.upstream_message) from None
        raise
