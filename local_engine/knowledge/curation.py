"""Curation: what a person decides in FORAGER's own application (docs/upstream-contract.md).

Every decision changes the records in the store, in one transaction with its line in the
``curation`` trail (FORAGER's audit: a reopened decision stays there), and so changes what the
reads answer: a statement a decision archives is served only with ``include_historical``, a
rejected one never; a merged entity's mentions count for the one it was merged into.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any, Protocol

from local_engine.ingestion.pipeline import short_id
from local_engine.knowledge import disagreements, people
from local_engine.serving.routing import ApiError, Handler, Request, Response, json_response
from local_engine.store.database import Store


class HoldsStore(Protocol):
    """What the routes need of the engine's state: its store."""

    store: Store


ID = r"(?P<id>[a-z]+_[0-9a-f]{16})"
NOTES_MAX = 2000
CONFLICT_ACTIONS = {
    "contradiction": ("accept_winner", "keep_both", "dismiss"),
    "duplicate": ("archive_duplicates", "keep_both", "dismiss"),
}
REVIEW_ACTIONS = ("mark_reviewed", "reject", "restore")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _one(db: sqlite3.Connection, sql: str, record: str) -> sqlite3.Row:
    row: sqlite3.Row | None = db.execute(sql, (record,)).fetchone()
    if row is None:
        raise ApiError(404, "not_found", f"No record {record}.")
    return row


class Curation:
    """The decisions, each one transaction of the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def _trail(self, db: sqlite3.Connection, ref: str, act: str, record: str, body: dict[str, Any]) -> None:
        db.execute(
            "INSERT INTO curation (ref, act, record, actor, at) VALUES (?, ?, ?, ?, ?)",
            (ref, act, record, body.get("actor"), _now()),
        )

    def _sides(self, db: sqlite3.Connection, conflict_id: str) -> list[str]:
        return [
            str(r[0])
            for r in db.execute(
                "SELECT knowledge_id FROM conflict_sides WHERE conflict_id = ? ORDER BY position", (conflict_id,)
            )
        ]

    # -- disagreements ----------------------------------------------------------------------

    def resolve(self, conflict_id: str, body: dict[str, Any]) -> str:
        with self.store.transaction() as db:
            conflict = _one(db, "SELECT * FROM conflicts WHERE conflict_id = ?", conflict_id)
            if conflict["status"] != "open":
                raise ApiError(409, "already_decided", "This disagreement was already decided; reopen it first.")
            action = body.get("action")
            if action not in CONFLICT_ACTIONS.get(conflict["type"], ()):
                raise ApiError(400, "invalid_action", f"A {conflict['type']} is not resolved with {action!r}.")
            sides = self._sides(db, conflict_id)
            winner = None
            if action == "accept_winner":
                winner = body.get("winner_id")
                if winner not in sides:
                    raise ApiError(400, "invalid_action", "accept_winner needs winner_id, one of its sides.")
            decision = {
                "action": action,
                "winner_id": winner,
                "notes": body.get("notes"),
                "decided_by": body.get("actor"),
                "decided_at": _now(),
            }
            db.execute(
                "UPDATE conflicts SET status = ?, decision = ? WHERE conflict_id = ?",
                ("dismissed" if action == "dismiss" else "resolved", json.dumps(decision), conflict_id),
            )
            marks = ",".join("?" * len(sides)) or "''"
            if action == "archive_duplicates":
                for knowledge_id in sides[1:]:
                    db.execute("UPDATE statements SET status = 'Archived' WHERE knowledge_id = ?", (knowledge_id,))
            elif winner is None:  # kept both, or dismissed: no side is disputed any more
                db.execute(
                    f"UPDATE statements SET status = 'Active' WHERE status = 'Disputed' AND knowledge_id IN ({marks})",
                    sides,
                )
            disagreements.settle(db, conflict_id)
            self._trail(db, conflict["ref"], "resolve", conflict_id, body)
            return str(conflict["ref"])

    def reopen(self, conflict_id: str, body: dict[str, Any]) -> str:
        with self.store.transaction() as db:
            conflict = _one(db, "SELECT * FROM conflicts WHERE conflict_id = ?", conflict_id)
            if conflict["status"] == "open":
                raise ApiError(409, "not_decided", "This disagreement is open; there is nothing to reopen.")
            decision = json.loads(conflict["decision"] or "{}")
            sides = self._sides(db, conflict_id)
            if decision.get("winner_id") or decision.get("action") == "archive_duplicates":
                marks = ",".join("?" * len(sides)) or "''"
                db.execute(
                    f"UPDATE statements SET status = 'Active' WHERE status = 'Archived' AND review_status != 'rejected'"
                    f" AND knowledge_id IN ({marks})",
                    sides,
                )
            db.execute("UPDATE conflicts SET status = 'open', decision = NULL WHERE conflict_id = ?", (conflict_id,))
            disagreements.settle(db, conflict_id)
            self._trail(db, conflict["ref"], "reopen", conflict_id, body)
            return str(conflict["ref"])

    # -- possible duplicates and merges -------------------------------------------------------------

    def decide(self, candidate_id: str, body: dict[str, Any]) -> str:
        with self.store.transaction() as db:
            candidate = _one(db, "SELECT * FROM candidates WHERE candidate_id = ?", candidate_id)
            if candidate["status"] != "pending":
                raise ApiError(409, "already_decided", "This possible duplicate was already decided.")
            action = body.get("action")
            if action not in ("merge", "keep_apart"):
                raise ApiError(400, "invalid_action", "action is merge or keep_apart.")
            at = _now()
            db.execute(
                "UPDATE candidates SET status = ?, decided_by = ?, decided_at = ?, notes = ? WHERE candidate_id = ?",
                (
                    "accepted" if action == "merge" else "rejected",
                    body.get("actor"),
                    at,
                    body.get("notes"),
                    candidate_id,
                ),
            )
            if action == "merge":
                a, b = candidate["entity_a"], candidate["entity_b"]
                kept, away = (a, b) if mention_count(db, a) >= mention_count(db, b) else (b, a)
                people.merge(db, kept, away, body.get("notes") or candidate["reason"], body.get("actor"), at)
            self._trail(db, candidate["ref"], str(action), candidate_id, body)
            return str(candidate["ref"])

    def unmerge(self, entity_id: str, body: dict[str, Any]) -> tuple[str, str]:
        with self.store.transaction() as db:
            entity = _one(db, "SELECT * FROM entities WHERE entity_id = ?", entity_id)
            if entity["merged_into"] is None:
                raise ApiError(400, "not_merged", "This entity is not merged into another.")
            winner = people.unmerge(db, entity_id)
            at = _now()
            pair = people.pair_id(short_id, entity["ref"], winner, entity_id)
            held = db.execute(
                "SELECT candidate_id FROM candidates"
                " WHERE (entity_a = ? AND entity_b = ?) OR (entity_a = ? AND entity_b = ?)",
                (winner, entity_id, entity_id, winner),
            ).fetchone()
            if held is not None:
                db.execute(
                    "UPDATE candidates SET status = 'rejected', decided_by = ?, decided_at = ?, notes = ?"
                    " WHERE candidate_id = ?",
                    (body.get("actor"), at, body.get("notes"), held[0]),
                )
            else:
                db.execute(
                    "INSERT INTO candidates (candidate_id, ref, entity_a, entity_b, confidence, reason, status,"
                    " decided_by, decided_at, notes, created_at) VALUES (?, ?, ?, ?, 1.0, ?, 'rejected', ?, ?, ?, ?)",
                    (pair, entity["ref"], winner, entity_id, "Recorded as different when unmerged",
                     body.get("actor"), at, body.get("notes"), at),
                )  # fmt: skip
            self._trail(db, entity["ref"], "unmerge", entity_id, body)
            return str(entity["ref"]), winner

    # -- statements ---------------------------------------------------------------------------------

    def review(self, knowledge_id: str, body: dict[str, Any]) -> str:
        with self.store.transaction() as db:
            item = _one(db, "SELECT * FROM statements WHERE knowledge_id = ?", knowledge_id)
            action = body.get("action")
            if action not in REVIEW_ACTIONS:
                raise ApiError(400, "invalid_action", f"action is one of {', '.join(REVIEW_ACTIONS)}.")
            review, status = {
                "mark_reviewed": ("reviewed", item["status"]),
                "reject": ("rejected", "Archived"),
                "restore": ("unreviewed", "Active"),
            }[str(action)]
            db.execute(
                "UPDATE statements SET status = ?, review_status = ?, review_notes = ?, reviewed_by = ?,"
                " reviewed_at = ? WHERE knowledge_id = ?",
                (status, review, body.get("notes"), body.get("actor"), _now(), knowledge_id),
            )
            if action == "restore":  # back in play: an open disagreement disputes it again
                for (conflict_id,) in db.execute(
                    "SELECT conflict_id FROM conflict_sides WHERE knowledge_id = ?", (knowledge_id,)
                ).fetchall():
                    disagreements.settle(db, conflict_id)
            self._trail(db, item["ref"], "review", knowledge_id, body)
            return str(item["ref"])


def mention_count(db: sqlite3.Connection, entity_id: str) -> int:
    """An entity's mentions, with those of every entity merged into it."""
    return int(
        db.execute(
            "SELECT COUNT(*) FROM mentions WHERE entity_id = ? OR entity_id IN"
            " (SELECT entity_id FROM entities WHERE merged_into = ?)",
            (entity_id, entity_id),
        ).fetchone()[0]
    )


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


def api_routes(state: HoldsStore, reads: Any) -> list[tuple[str, str, Handler]]:
    """The curation routes; ``reads`` (a ``ReadsApi``) renders the records as the reads do."""
    book = Curation(state.store)
    index = reads.index

    def resolve(request: Request) -> Response:
        book.resolve(request.params["id"], _body(request))
        return json_response(200, index.conflict_row(request.params["id"]))

    def reopen(request: Request) -> Response:
        book.reopen(request.params["id"], _body(request))
        return json_response(200, index.conflict_row(request.params["id"]))

    def decide(request: Request) -> Response:
        book.decide(request.params["id"], _body(request))
        return json_response(200, {"duplicate": index.duplicate_row(request.params["id"])})

    def unmerge(request: Request) -> Response:
        _, winner = book.unmerge(request.params["id"], _body(request))
        return json_response(
            200, {"restored": index.people_row(request.params["id"]), "winner": index.people_row(winner)}
        )

    def review(request: Request) -> Response:
        book.review(request.params["id"], _body(request))
        row = index.item(request.params["id"])
        assert row is not None
        return json_response(200, index.item_detail(row))

    return [
        ("POST", rf"/api/conflicts/{ID}/resolve", resolve),
        ("POST", rf"/api/conflicts/{ID}/reopen", reopen),
        ("POST", rf"/api/duplicates/{ID}/decide", decide),
        ("POST", rf"/api/entities/{ID}/unmerge", unmerge),
        ("POST", rf"/api/knowledge/{ID}/review", review),
    ]
