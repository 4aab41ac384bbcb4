"""Curation: what a person decides in FORAGER's own application (docs/upstream-contract.md).

The demo corpus is frozen; the :class:`CurationLedger` holds each knowledge base's *current*
corpus, replaced (never mutated) by every decision, and the reads serve from it. Resetting
the simulator returns to the demo corpus. Every act is kept in ``history`` (FORAGER's audit
trail: a reopened decision stays there).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from .corpus import DEMO_RECORDS, ConflictSpec, CorpusSpec, DuplicateSpec, EntitySpec, ItemSpec, record_id
from .routing import ApiError, Handler, Request, Response, json_response
from .state import EngineState

ID = r"(?P<id>[a-z]+_[0-9a-f]{16})"
NOTES_MAX = 2000
CONFLICT_ACTIONS = {
    "contradiction": ("accept_winner", "keep_both", "dismiss"),
    "duplicate": ("archive_duplicates", "keep_both", "dismiss"),
}
REVIEW_ACTIONS = ("mark_reviewed", "reject", "restore")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class CurationLedger:
    def __init__(self, state: EngineState) -> None:
        self.state = state
        self.specs: dict[str, CorpusSpec] = dict(DEMO_RECORDS)
        self.history: list[dict[str, Any]] = []

    def reset(self) -> None:
        with self.state.lock:
            self.specs = dict(DEMO_RECORDS)
            self.history = []

    def spec(self, ref: str) -> CorpusSpec | None:
        with self.state.lock:
            return self.specs.get(ref)

    # -- lookups ---------------------------------------------------------------------
    def _find(self, prefix: str, wanted: str) -> tuple[str, str]:
        for ref, spec in self.specs.items():
            keys: tuple[str, ...] = ()
            if prefix == "cf":
                keys = tuple(c.key for c in spec.conflicts)
            elif prefix == "mc":
                keys = tuple(d.key for d in spec.duplicates)
            elif prefix == "ent":
                keys = tuple(e.key for e in spec.entities)
            elif prefix == "ki":
                keys = tuple(i.key for i in spec.items)
            for key in keys:
                if record_id(prefix, ref, key) == wanted:
                    return ref, key
        raise ApiError(404, "not_found", f"No record {wanted}.")

    def _swap(self, ref: str, **changes: Any) -> None:
        self.specs[ref] = replace(self.specs[ref], **changes)

    def _record(self, act: str, record: str, body: dict[str, Any]) -> None:
        self.history.append({"act": act, "record": record, "actor": body.get("actor"), "at": _now()})

    # -- conflicts -------------------------------------------------------------------
    def resolve(self, conflict_id: str, body: dict[str, Any]) -> tuple[str, str]:
        with self.state.lock:
            ref, key = self._find("cf", conflict_id)
            spec = self.specs[ref]
            conflict = next(c for c in spec.conflicts if c.key == key)
            if conflict.status != "open":
                raise ApiError(409, "already_decided", "This disagreement was already decided; reopen it first.")
            action = body.get("action")
            if action not in CONFLICT_ACTIONS.get(conflict.type, ()):
                raise ApiError(400, "invalid_action", f"A {conflict.type} is not resolved with {action!r}.")
            winner_key = None
            if action == "accept_winner":
                winner = body.get("winner_id")
                winner_key = next((k for k in conflict.sides if record_id("ki", ref, k) == winner), None)
                if winner_key is None:
                    raise ApiError(400, "invalid_action", "accept_winner needs winner_id, one of its sides.")
            decision = {
                "action": action,
                "winner_id": winner_key,
                "notes": body.get("notes"),
                "decided_by": body.get("actor"),
                "decided_at": _now(),
            }
            status = "dismissed" if action == "dismiss" else "resolved"
            changed = replace(conflict, status=status, decision=decision)
            self._swap(ref, conflicts=tuple(changed if c.key == key else c for c in spec.conflicts))
            if winner_key is not None:
                loser = [k for k in conflict.sides if k != winner_key]
                self._items(ref, loser, status="Archived")
            self._record("resolve", conflict_id, body)
            return ref, key

    def reopen(self, conflict_id: str, body: dict[str, Any]) -> tuple[str, str]:
        with self.state.lock:
            ref, key = self._find("cf", conflict_id)
            spec = self.specs[ref]
            conflict = next(c for c in spec.conflicts if c.key == key)
            if conflict.status == "open":
                raise ApiError(409, "not_decided", "This disagreement is open; there is nothing to reopen.")
            if conflict.decision and conflict.decision.get("winner_id"):
                self._items(ref, list(conflict.sides), status="Disputed")
            changed = replace(conflict, status="open", decision=None)
            self._swap(ref, conflicts=tuple(changed if c.key == key else c for c in spec.conflicts))
            self._record("reopen", conflict_id, body)
            return ref, key

    def _items(self, ref: str, keys: list[str], **changes: Any) -> None:
        spec = self.specs[ref]
        self._swap(ref, items=tuple(replace(i, **changes) if i.key in keys else i for i in spec.items))

    # -- duplicates and merges ---------------------------------------------------------
    def decide(self, candidate_id: str, body: dict[str, Any], mentions: dict[str, int]) -> tuple[str, str]:
        with self.state.lock:
            ref, key = self._find("mc", candidate_id)
            spec = self.specs[ref]
            dup = next(d for d in spec.duplicates if d.key == key)
            if dup.status != "pending":
                raise ApiError(409, "already_decided", "This possible duplicate was already decided.")
            action = body.get("action")
            if action not in ("merge", "keep_apart"):
                raise ApiError(400, "invalid_action", "action is merge or keep_apart.")
            decided = replace(
                dup,
                status="accepted" if action == "merge" else "rejected",
                decided_by=body.get("actor"),
                decided_at=_now(),
                notes=body.get("notes"),
            )
            self._swap(ref, duplicates=tuple(decided if d.key == key else d for d in spec.duplicates))
            if action == "merge":
                a, b = dup.entity_a, dup.entity_b
                kept, away = (a, b) if mentions.get(a, 0) >= mentions.get(b, 0) else (b, a)
                self._merge(ref, kept, away, body.get("notes"))
            self._record(str(action), candidate_id, body)
            return ref, key

    def _merge(self, ref: str, kept: str, away: str, reason: str | None) -> None:
        spec = self.specs[ref]
        away_entity = next(e for e in spec.entities if e.key == away)

        def change(entity: EntitySpec) -> EntitySpec:
            if entity.key == away:
                return replace(entity, merged_into=kept, merge_reason=reason)
            if entity.key == kept:
                return replace(entity, aliases=(*entity.aliases, (away_entity.name, "name", 0.8)))
            return entity

        self._swap(ref, entities=tuple(change(e) for e in spec.entities))
        items = tuple(
            replace(i, entities=tuple(dict.fromkeys(kept if k == away else k for k in i.entities)))
            for i in self.specs[ref].items
        )
        self._swap(ref, items=items)

    def unmerge(self, entity_id: str, body: dict[str, Any]) -> tuple[str, str, str]:
        with self.state.lock:
            ref, key = self._find("ent", entity_id)
            spec = self.specs[ref]
            entity = next(e for e in spec.entities if e.key == key)
            if entity.merged_into is None:
                raise ApiError(400, "not_merged", "This entity is not merged into another.")
            winner_key = entity.merged_into

            def change(e: EntitySpec) -> EntitySpec:
                if e.key == key:
                    return replace(e, merged_into=None, merge_reason=None)
                if e.key == winner_key:
                    return replace(e, aliases=tuple(a for a in e.aliases if a[0] != entity.name))
                return e

            self._swap(ref, entities=tuple(change(e) for e in spec.entities))
            pair = {key, winner_key}
            duplicates = tuple(
                replace(d, status="rejected", decided_by=body.get("actor"), decided_at=_now(), notes=body.get("notes"))
                if {d.entity_a, d.entity_b} == pair
                else d
                for d in self.specs[ref].duplicates
            )
            if not any({d.entity_a, d.entity_b} == pair for d in duplicates):
                duplicates = (
                    *duplicates,
                    DuplicateSpec(
                        f"apart_{key}",
                        winner_key,
                        key,
                        1.0,
                        "Recorded as different when unmerged",
                        status="rejected",
                        decided_by=body.get("actor"),
                        decided_at=_now(),
                    ),
                )
            self._swap(ref, duplicates=duplicates)
            self._record("unmerge", entity_id, body)
            return ref, key, winner_key

    # -- statements --------------------------------------------------------------------
    def review(self, knowledge_id: str, body: dict[str, Any]) -> tuple[str, str]:
        with self.state.lock:
            ref, key = self._find("ki", knowledge_id)
            action = body.get("action")
            if action not in REVIEW_ACTIONS:
                raise ApiError(400, "invalid_action", f"action is one of {', '.join(REVIEW_ACTIONS)}.")
            item: ItemSpec = next(i for i in self.specs[ref].items if i.key == key)
            actor, notes, at = body.get("actor"), body.get("notes"), _now()
            if action == "mark_reviewed":
                changes: dict[str, Any] = {"review": ("reviewed", notes, actor, at)}
            elif action == "reject":
                changes = {"review": ("rejected", notes, actor, at), "status": "Archived"}
            else:
                changes = {"review": ("unreviewed", notes, actor, at), "status": "Active"}
            del item
            self._items(ref, [key], **changes)
            self._record("review", knowledge_id, body)
            return ref, key


def ledger(state: EngineState) -> CurationLedger:
    with state.lock:
        found = state.__dict__.get("_curation_ledger")
        if found is None:
            found = state.__dict__["_curation_ledger"] = CurationLedger(state)
        return found  # type: ignore[no-any-return]


def _body(request: Request) -> dict[str, Any]:
    body = request.json_object() if request.body.strip() else {}
    actor = body.get("actor")
    if not isinstance(actor, str) or not actor:
        raise ApiError(400, "bad_request", "actor is required.")
    notes = body.get("notes")
    if notes is not None and (not isinstance(notes, str) or len(notes) > NOTES_MAX):
        raise ApiError(400, "bad_request", f"notes must be text of at most {NOTES_MAX} characters.")
    if any(value is None for value in body.values()):
        raise ApiError(400, "bad_request", "A field with no value is left out, not sent as null.")
    return body


def api_routes(state: EngineState, reads: Any) -> list[tuple[str, str, Handler]]:
    """The curation routes; ``reads`` (a ``ReadsApi``) renders the records as the reads do."""
    book = ledger(state)

    def conflict_answer(ref: str, key: str) -> Response:
        records = reads.records[ref]
        conflict: ConflictSpec = next(c for c in records.spec.conflicts if c.key == key)
        return json_response(200, reads._conflict_row(records, conflict))

    def resolve(request: Request) -> Response:
        return conflict_answer(*book.resolve(request.params["id"], _body(request)))

    def reopen(request: Request) -> Response:
        return conflict_answer(*book.reopen(request.params["id"], _body(request)))

    def decide(request: Request) -> Response:
        body = _body(request)
        with state.lock:
            ref, _ = book._find("mc", request.params["id"])
            records = reads.records[ref]
            mentions = {e.key: len(reads._mentions(records, e)) for e in records.spec.entities}
        ref, key = book.decide(request.params["id"], body, mentions)
        records = reads.records[ref]
        dup = next(d for d in records.spec.duplicates if d.key == key)
        return json_response(200, {"duplicate": reads._duplicate_row(records, dup)})

    def unmerge(request: Request) -> Response:
        ref, key, winner = book.unmerge(request.params["id"], _body(request))
        records = reads.records[ref]
        return json_response(
            200,
            {
                "restored": reads._people_row(records, records.entity(key)),
                "winner": reads._people_row(records, records.entity(winner)),
            },
        )

    def review(request: Request) -> Response:
        ref, key = book.review(request.params["id"], _body(request))
        records = reads.records[ref]
        return json_response(200, reads._item_detail(records, records.item(key)))

    return [
        ("POST", rf"/api/conflicts/{ID}/resolve", resolve),
        ("POST", rf"/api/conflicts/{ID}/reopen", reopen),
        ("POST", rf"/api/duplicates/{ID}/decide", decide),
        ("POST", rf"/api/entities/{ID}/unmerge", unmerge),
        ("POST", rf"/api/knowledge/{ID}/review", review),
    ]
