"""The change feed: a ledger of revisions, a per-project feed, receipts (docs/upstream-contract.md).

A revision is published when "a job completes": every ingestion job's last stage, and a
source added or changed through the control port (``POST /projects/{ref}/sources`` or
``Engine.put_source``: a job that reads it through the pipeline at once).
Every revision, and every export of one (an export completing, ``exports.py``; the control
port's ``POST /projects/{ref}/exports`` and ``Engine.publish_export`` build one at once), is an
envelope on the project's feed, numbered by ``sequence`` within the producer's generation.

The feed can be told to misbehave the ways the contract's recovery rules exist for
(``Engine.feed_fault(ref, kind)`` or ``POST /projects/{ref}/feed/faults``):

- ``skip``: the next envelope published skips one sequence number (a gap);
- ``expire``: every envelope so far leaves the replay window, so a read from before the
  head answers 409 ``cursor_expired``;
- ``ahead``: the producer is restored from a backup ``count`` envelopes older (default 1),
  in the same generation, so a cursor at the old head answers 409 ``cursor_ahead`` and its
  next publications reuse sequence numbers already read;
- ``generation``: a new producer generation, sequences restarting at 1; a read naming the
  old one answers 409 ``generation_changed``;
- ``redeliver``: the next read answers the whole feed from sequence 1, whatever ``after`` said;
- ``hide``: the next envelope published is left out of the next ``count`` reads that would
  answer it (default 1) — a short answer with a hole in it that a read again serves;
- ``lose``: the next envelope published is never served (its sequence is used, and an export's
  row is still in the export history) — a hole the producer can no longer serve.

And it can publish an envelope the consumer's door must refuse
(``Engine.publish_malformed(ref, kind)`` or ``POST /projects/{ref}/feed/malformed``), at the
next sequence: ``oversized`` (over 16 KiB), ``not_json`` and ``not_an_object`` (sent as text, the
way a producer forwards bytes it cannot vouch for), ``protocol`` (``protocol_version`` 2) and
``header`` (no ``occurred_at``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from local_engine.demo import corpus
from local_engine.ingestion import pipeline
from local_engine.search.queries import Knowledge
from local_engine.serving.routing import ApiError, Handler, Request, Response, json_response
from local_engine.serving.state import GENERATION, EngineState, IdempotencyConflict

PROTOCOL_VERSION = 1
STREAM = "knowledge"
REVISION_PUBLISHED = "knowledge.revision.published"
EXPORT_COMPLETED = "knowledge.export.completed"
FEED_FAULTS = ("skip", "expire", "ahead", "generation", "redeliver", "hide", "lose")
MALFORMED = ("oversized", "not_json", "not_an_object", "protocol", "header")
LIMIT_MAX = 1000
REF = r"(?P<ref>[a-z0-9_]{1,64})"
GENERATION_KEY = "feed_generation"
"""The store's ``meta`` row naming the feeds' producer generation."""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class ProjectFeed:
    generation: str = GENERATION
    envelopes: list[dict[str, Any]] = field(default_factory=list)
    next_sequence: int = 1
    revisions: list[dict[str, Any]] = field(default_factory=list)
    expired_through: int = 0
    redeliver: bool = False
    receipts: dict[str, dict[str, Any]] = field(default_factory=dict)
    hide_next: int = 0  # the next envelope published is left out of this many reads
    hidden: dict[int, int] = field(default_factory=dict)  # sequence -> reads it is still left out of
    lose_next: bool = False  # the next envelope published is never served
    stamps: dict[str, dict[str, Any]] = field(default_factory=dict)
    """revision id -> when and by which producer it was published (an ANTHILL package names them)."""
    published_by_job: dict[str, str] = field(default_factory=dict)
    """job id -> the revision its last stage published: a stage run again after a crash publishes none."""

    KEPT = ("generation", "envelopes", "next_sequence", "revisions", "expired_through", "receipts", "stamps")

    @property
    def head_sequence(self) -> int:
        return self.envelopes[-1]["sequence"] if self.envelopes else 0

    def kept(self) -> str:
        """What the store keeps of the feed (the test faults' one-shot switches aside)."""
        kept = {name: getattr(self, name) for name in self.KEPT}
        return json.dumps({**kept, "published_by_job": self.published_by_job})

    @classmethod
    def from_kept(cls, body: str) -> ProjectFeed:
        return cls(**json.loads(body))


class FeedLedger:
    """Per project: its revisions, its feed and the receipts the colony sent, kept in the store
    (``feeds``, written in the transaction that publishes), so a restart serves the same head, the
    same numbering and every envelope not yet read. A store that holds jobs but no feed (an older
    engine kept its feed in memory) starts a new generation, so a consumer sees the feed changed
    rather than numbers that start again under the name it knows."""

    def __init__(self, state: EngineState) -> None:
        self.state = state
        with state.lock:
            self.feeds = {
                str(row["ref"]): ProjectFeed.from_kept(str(row["body"]))
                for row in state.store.rows("SELECT ref, body FROM feeds")
            }
            generation = state.store.meta(GENERATION_KEY)
            if generation is None:
                demo = [pipeline.short_id("job", "demo", base.name) for base in corpus.bases()]
                marks = ",".join("?" * len(demo)) or "''"
                held = state.store.value(f"SELECT 1 FROM jobs WHERE job_id NOT IN ({marks}) LIMIT 1", *demo)  # noqa: S608
                lost = held is not None and not self.feeds
                generation = "gen_" + secrets.token_hex(4) if lost else self._generation()
                state.store.set_meta(GENERATION_KEY, generation)
            state.capabilities["generation"] = generation

    def reset(self) -> None:
        with self.state.lock:
            self.feeds = {}
            self.state.capabilities["generation"] = self.state.store.meta(GENERATION_KEY) or GENERATION

    def _keep(self, *refs: str) -> None:
        """The feeds of ``refs`` into the store, in one transaction (joining the caller's, if open)."""
        with self.state.store.transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO feeds (ref, body) VALUES (?, ?)", [(r, self.feeds[r].kept()) for r in refs]
            )

    def _feed(self, ref: str) -> ProjectFeed:
        if ref not in self.state.projects:
            raise ApiError(404, "not_found", f"There is no project '{ref}'.")
        return self.feeds.setdefault(ref, ProjectFeed(generation=self._generation()))

    def _generation(self) -> str:
        return str(self.state.capabilities.get("generation") or GENERATION)

    # -- publishing ------------------------------------------------------------------

    def put_source(self, ref: str, name: str, text: str, status: str = "complete") -> dict[str, Any]:
        """Add or change a source: a job reads it through every stage (at once, not on the job
        clock) and publishes a revision, ``partial`` when asked (as if a source had failed)."""
        if status not in ("complete", "partial"):
            raise ApiError(400, "bad_request", "status must be complete or partial.")
        with self.state.lock:
            self._feed(ref)
            job_id = pipeline.short_id("job", "control", ref, name, secrets.token_hex(4))
            folder = self.state.upload_root / "control" / job_id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "0").write_bytes(text.encode("utf-8"))
        work = pipeline.Work(job_id=job_id, ref=ref, kind="upload", inputs=[name], force=False, upload_dir=folder)
        for stage in list(pipeline.STAGE_WORK.values())[:-1]:
            stage(self.state.store, work)
        with self.state.lock:
            project = self.state.projects[ref]
            project.state = "ready"
            self.state.changed()
            return self.publish_revision(ref, status, 0 if status == "complete" else 1)

    def publish_revision(self, ref: str, status: str, failed_sources: int, job_id: str | None = None) -> dict[str, Any]:
        """A job's last stage: the knowledge base as it now stands, on the feed. Its
        ``logical_content_hash`` is over what the sources say (whitespace folded), so it moves
        only when the knowledge does; ``record_count`` is the statements it serves. A job
        publishes once: its stage run again (after a crash) answers the revision it published."""
        with self.state.lock:
            feed = self._feed(ref)
            if job_id is not None and job_id in feed.published_by_job:
                return self._envelope_of(feed, feed.published_by_job[job_id])
            hashes = sorted(
                str(r[0])
                for r in self.state.store.rows(
                    "SELECT logical_content_hash FROM sources WHERE ref = ? AND status = 'completed'", ref
                )
            )
            records = self.state.store.value(
                "SELECT COUNT(*) FROM statements WHERE ref = ? AND indexed = 1 AND status NOT IN"
                " ('Superseded', 'Archived')",
                ref,
            )
            revision = {
                "revision_id": "krev_" + secrets.token_hex(6),
                "publication_sequence": len(feed.revisions) + 1,
                "logical_content_hash": "sha256:" + hashlib.sha256("\n".join(hashes).encode()).hexdigest(),
                "publication_status": status,
                "record_count": int(records or 0),
                "failed_source_count": failed_sources,
            }
            feed.revisions.append(revision)
            if job_id is not None:
                feed.published_by_job[job_id] = str(revision["revision_id"])
            return self._published_revision(ref, feed, revision)

    def _published_revision(self, ref: str, feed: ProjectFeed, revision: dict[str, Any]) -> dict[str, Any]:
        envelope = self._publish(ref, feed, REVISION_PUBLISHED, dict(revision))
        feed.stamps[revision["revision_id"]] = {
            "producer_instance_id": envelope["producer_instance_id"],
            "producer_generation": envelope["producer_generation"],
            "published_at": envelope["occurred_at"],
        }
        self._keep(ref)
        return envelope

    @staticmethod
    def _envelope_of(feed: ProjectFeed, revision_id: str) -> dict[str, Any]:
        for envelope in feed.envelopes:
            if envelope.get("event_type") == REVISION_PUBLISHED and envelope["payload"]["revision_id"] == revision_id:
                return copy.deepcopy(envelope)
        revision = next(r for r in feed.revisions if r["revision_id"] == revision_id)
        return {"event_type": REVISION_PUBLISHED, "payload": copy.deepcopy(revision)}  # one a fault lost

    def package_revision(self, ref: str) -> dict[str, Any] | None:
        """The head revision as an ANTHILL package (version 7) names the one it was cut from:
        ``id``, ``publication_sequence``, ``logical_content_hash``, ``publication_status``,
        ``producer_instance_id``, ``producer_generation``, ``published_at``. None before the base
        published one."""
        with self.state.lock:
            feed = self._feed(ref)
            if not feed.revisions:
                return None
            head = feed.revisions[-1]
            stamp = feed.stamps.get(head["revision_id"]) or {
                "producer_instance_id": self.state.instance_id,
                "producer_generation": feed.generation,
                "published_at": None,
            }
            return {
                "id": head["revision_id"],
                "publication_sequence": head["publication_sequence"],
                "logical_content_hash": head["logical_content_hash"],
                "publication_status": head["publication_status"],
                **stamp,
            }

    def export_completed(
        self, ref: str, revision_id: str, export_id: str, export_format: str, sha256: str
    ) -> dict[str, Any]:
        """An export of ``revision_id`` completed: its envelope, naming the archive's digest."""
        with self.state.lock:
            feed = self._feed(ref)
            payload = {
                "revision_id": revision_id,
                "export_id": export_id,
                "export_format": export_format,
                "package_digest": f"sha256:{sha256}",
            }
            return self._publish(ref, feed, EXPORT_COMPLETED, payload)

    def _publish(self, ref: str, feed: ProjectFeed, event_type: str, payload: dict[str, Any]) -> dict[str, Any]:
        sequence = feed.next_sequence
        envelope = {
            "protocol_version": PROTOCOL_VERSION,
            "event_id": "evt_" + secrets.token_hex(8),
            "event_type": event_type,
            "sequence": sequence,
            "stream": STREAM,
            "producer_instance_id": self.state.instance_id,
            "producer_generation": feed.generation,
            "occurred_at": _now(),
            "payload": payload,
        }
        feed.next_sequence += 1
        if feed.lose_next:
            feed.lose_next = False
        else:
            if feed.hide_next:
                feed.hidden[sequence], feed.hide_next = feed.hide_next, 0
            feed.envelopes.append(envelope)
        self._keep(ref)
        return copy.deepcopy(envelope)

    def publish_malformed(self, ref: str, kind: str) -> dict[str, Any]:
        """Publish, at the next sequence, an envelope of the ``kind`` the door must refuse."""
        if kind not in MALFORMED:
            raise ApiError(400, "bad_request", f"kind must be one of {', '.join(MALFORMED)}.")
        with self.state.lock:
            feed = self._feed(ref)
            sequence = feed.next_sequence
            envelope: dict[str, Any] = {
                "protocol_version": PROTOCOL_VERSION,
                "event_id": "evt_" + secrets.token_hex(8),
                "event_type": REVISION_PUBLISHED,
                "sequence": sequence,
                "stream": STREAM,
                "producer_instance_id": self.state.instance_id,
                "producer_generation": feed.generation,
                "occurred_at": _now(),
                "payload": {"revision_id": "krev_" + secrets.token_hex(6)},
            }
            sent: dict[str, Any] | str
            if kind == "oversized":
                envelope["payload"]["padding"] = "x" * 17_000
                sent = envelope
            elif kind == "not_json":
                sent = '{"event_id": "evt_broken", "sequence": ' + str(sequence)
            elif kind == "not_an_object":
                sent = "[1, 2, 3]"
            elif kind == "protocol":
                envelope["protocol_version"] = 2
                sent = envelope
            else:
                del envelope["occurred_at"]
                sent = envelope
            feed.next_sequence += 1
            feed.envelopes.append({"sequence": sequence, "_sent": sent})
            self._keep(ref)
            return {"kind": kind, "sequence": sequence, "event_id": envelope["event_id"]}

    def fault(self, ref: str, kind: str, count: int = 1) -> dict[str, Any]:
        if kind not in FEED_FAULTS:
            raise ApiError(400, "bad_request", f"kind must be one of {', '.join(FEED_FAULTS)}.")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ApiError(400, "bad_request", "count must be a whole number of at least 1.")
        with self.state.lock:
            feed = self._feed(ref)
            if kind == "skip":
                feed.next_sequence += 1
            elif kind == "expire":
                feed.expired_through = feed.head_sequence
            elif kind == "ahead":
                del feed.envelopes[max(0, len(feed.envelopes) - count) :]
                feed.next_sequence = feed.head_sequence + 1
                kept = {
                    e["payload"]["revision_id"] for e in feed.envelopes if e.get("event_type") == REVISION_PUBLISHED
                }
                feed.revisions = [r for r in feed.revisions if r["revision_id"] in kept]
            elif kind == "generation":
                generation = "gen_" + secrets.token_hex(4)
                self.state.capabilities["generation"] = generation
                self.state.store.set_meta(GENERATION_KEY, generation)
                for other in self.feeds.values():
                    other.generation, other.envelopes, other.next_sequence = generation, [], 1
                    other.expired_through = 0
            elif kind == "hide":
                feed.hide_next = count
            elif kind == "lose":
                feed.lose_next = True
            else:
                feed.redeliver = True
            self._keep(*self.feeds)
            return {"kind": kind, "generation": feed.generation, "head_sequence": feed.head_sequence}

    # -- reading ---------------------------------------------------------------------

    def read(self, ref: str, generation: str | None, after: int, limit: int) -> tuple[int, dict[str, Any]]:
        with self.state.lock:
            feed = self._feed(ref)
            base = {"instance_id": self.state.instance_id, "generation": feed.generation, "stream": STREAM}
            head = feed.head_sequence
            refusal = {**base, "head_sequence": head, "earliest_sequence": feed.expired_through + 1}
            if generation and generation != feed.generation:
                return 409, _refusal("generation_changed", "The producer's generation changed.", refusal)
            if after > head:
                return 409, _refusal("cursor_ahead", f"The cursor {after} is past the head {head}.", refusal)
            if after < feed.expired_through:
                return 409, _refusal("cursor_expired", f"Sequence {after + 1} is out of the replay window.", refusal)
            if feed.redeliver:
                feed.redeliver = False
                after = 0
            page = [e for e in feed.envelopes if e["sequence"] > after][:limit]
            for envelope in [e for e in page if feed.hidden.get(e["sequence"], 0) > 0]:
                feed.hidden[envelope["sequence"]] -= 1
                page.remove(envelope)
            sent = [e.get("_sent", e) for e in page]
            return 200, {**base, "envelopes": copy.deepcopy(sent), "head_sequence": head}

    def head(self, ref: str) -> dict[str, Any] | None:
        with self.state.lock:
            feed = self._feed(ref)
            return copy.deepcopy(feed.revisions[-1]) if feed.revisions else None

    def receipt(self, ref: str, body: dict[str, Any]) -> dict[str, Any]:
        event_id, status = body.get("event_id"), body.get("status")
        if not isinstance(event_id, str) or status not in ("available", "failed"):
            raise ApiError(400, "bad_request", "event_id (text) and status (available|failed) are required.")
        with self.state.lock:
            feed = self._feed(ref)
            feed.receipts[event_id] = {
                "event_id": event_id,
                "status": status,
                "detail": str(body.get("detail", "")),
                "synthesized": bool(body.get("synthesized", False)),
            }
            self._keep(ref)
            return {"event_id": event_id, "status": status}

    def receipts(self, ref: str) -> list[dict[str, Any]]:
        with self.state.lock:
            return copy.deepcopy(list(self._feed(ref).receipts.values()))


def _refusal(code: str, message: str, extra: dict[str, Any]) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


def ledger(state: EngineState) -> FeedLedger:
    """The state's ledger, made on first use (it survives nothing that resets the state)."""
    with state.lock:
        found = state.__dict__.get("_feed_ledger")
        if found is None:
            found = state.__dict__["_feed_ledger"] = FeedLedger(state)
        return found  # type: ignore[no-any-return]


# ---------------------------------------------------------------------- the API port
def api_routes(state: EngineState) -> list[tuple[str, str, Handler]]:
    book = ledger(state)

    def get_feed(request: Request) -> Response:
        query = _query(request)
        try:
            after = int(query.get("after", "0"))
            limit = min(int(query.get("limit", "500")), LIMIT_MAX)
        except ValueError:
            raise ApiError(400, "bad_request", "after and limit must be whole numbers.") from None
        if after < 0 or limit < 1:
            raise ApiError(400, "bad_request", "after must be at least 0 and limit at least 1.")
        status, payload = book.read(request.params["ref"], query.get("generation") or None, after, limit)
        return json_response(status, payload)

    def get_head(request: Request) -> Response:
        head = book.head(request.params["ref"])
        if head is None:
            raise ApiError(404, "not_found", "This project has published no revision.")
        return json_response(200, head)

    def post_receipt(request: Request) -> Response:
        body = request.json_object()
        ref = request.params["ref"]
        key = request.idempotency_key or ""
        try:
            status, payload = state.idempotent(
                key, request.method, request.path, body, lambda: (200, book.receipt(ref, body))
            )
        except IdempotencyConflict:
            raise ApiError(409, "idempotency_key_reused", "This Idempotency-Key was already used.") from None
        return json_response(status, payload)

    def get_sources(request: Request) -> Response:
        ref = request.params["ref"]
        with state.lock:
            if ref not in state.projects:
                raise ApiError(404, "not_found", f"There is no project '{ref}'.")
        sources = Knowledge(state.store).sources(ref)
        return json_response(200, {"sources": sources})

    return [
        ("GET", rf"/api/projects/{REF}/feed", get_feed),
        ("GET", rf"/api/projects/{REF}/revisions/head", get_head),
        ("POST", rf"/api/projects/{REF}/feed/receipts", post_receipt),
        # The read routes serve this too; whichever registers first answers (same shape).
        ("GET", rf"/api/projects/{REF}/sources", get_sources),
    ]


def _query(request: Request) -> dict[str, str]:
    return dict(parse_qsl(request.query, keep_blank_values=True))


# ---------------------------------------------------------------------- the control port
def control_routes(state: EngineState) -> list[tuple[str, str, Handler]]:
    book = ledger(state)

    def put_source(request: Request) -> Response:
        body = request.json_object()
        name, text = body.get("name"), body.get("text")
        if not isinstance(name, str) or not name or not isinstance(text, str):
            raise ApiError(400, "bad_request", "name and text are required text.")
        status = str(body.get("status", "complete"))
        return json_response(200, book.put_source(request.params["ref"], name, text, status))

    def post_fault(request: Request) -> Response:
        body = request.json_object()
        return json_response(200, book.fault(request.params["ref"], str(body.get("kind")), body.get("count", 1)))

    def post_malformed(request: Request) -> Response:
        body = request.json_object()
        return json_response(200, book.publish_malformed(request.params["ref"], str(body.get("kind"))))

    def get_receipts(request: Request) -> Response:
        return json_response(200, {"receipts": book.receipts(request.params["ref"])})

    return [
        ("POST", rf"/projects/{REF}/sources", put_source),
        ("POST", rf"/projects/{REF}/feed/faults", post_fault),
        ("POST", rf"/projects/{REF}/feed/malformed", post_malformed),
        ("GET", rf"/projects/{REF}/feed/receipts", get_receipts),
    ]
