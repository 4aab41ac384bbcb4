"""Exports: built in the background, digests kept, archives streamed (docs/upstream-contract.md).

An export is ``running`` until its build time has passed, then ``completed`` with the
SHA-256 and size of its archive recorded. Archives are deterministic bytes made on demand
from the export id (never stored, so a 2 GiB archive costs no memory): a 1 MiB block drawn
from a seeded generator, rotated by each block's index. The control port can expire an
archive, mark an export written into a folder, corrupt, truncate or extend the next
downloads, and tell how many downloads began and how many archive bytes were sent.
"""

from __future__ import annotations

import hashlib
import random
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .routing import ApiError, Handler, Request, Response, json_response
from .state import EngineState, IdempotencyConflict

REF = r"(?P<ref>[a-z0-9_]{1,64})"
EXPORT_ID = r"(?P<id>exp_[0-9a-f]{16})"
FORMATS = {"obsidian": ".zip", "jsonl": ".jsonl.gz", "anthill": ".anthill.tar.gz"}
BOOLEAN_OPTIONS = (
    "include_sources",
    "include_chunks",
    "include_superseded",
    "include_general_learning",
    "include_mission_fixtures",
)
VAULT_NAME_MAX = 80
BLOCK = 1024 * 1024
DEFAULT_BUILD_SECONDS = 0.2
DEFAULT_ARCHIVE_BYTES = 180_000
FAULT_KINDS = ("corrupt", "truncate", "extend", "wrong_digest", "wrong_record")


def archive_chunks(seed: str, size: int, chunk: int = BLOCK) -> Iterator[bytes]:
    """The archive of ``seed``: ``size`` deterministic bytes, in chunks of at most ``chunk``."""
    base = random.Random(seed).randbytes(BLOCK)  # noqa: S311 - deterministic test bytes, not a secret
    sent = 0
    index = 0
    while sent < size:
        shift = (index * 7919) % BLOCK
        block = base[shift:] + base[:shift]
        for start in range(0, BLOCK, chunk):
            piece = block[start : start + chunk][: size - sent]
            if not piece:
                break
            sent += len(piece)
            yield piece
        index += 1


def archive_digest(seed: str, size: int) -> str:
    digest = hashlib.sha256()
    for piece in archive_chunks(seed, size):
        digest.update(piece)
    return digest.hexdigest()


@dataclass
class Export:
    export_id: str
    project_ref: str
    format: str
    options: dict[str, Any]
    created: float
    ready_at: float
    size: int
    sha256: str | None = None
    archive_expired_at: str | None = None
    written_to_folder: bool = False
    faults: list[str] = field(default_factory=list)
    revision_id: str | None = None  # the revision it was cut from, when the feed published it
    downloads: int = 0  # archive downloads begun, and the archive bytes sent in them (tests count them)
    served_bytes: int = 0

    @property
    def completed(self) -> bool:
        return time.time() >= self.ready_at

    def file_name(self) -> str:
        vault = str(self.options.get("vault_name") or self.project_ref)
        return f"{vault} export {self.export_id[4:12]}{FORMATS[self.format]}"

    def to_json(self) -> dict[str, Any]:
        completed = self.completed
        if completed and self.sha256 is None and not self.written_to_folder:
            self.sha256 = archive_digest(self.export_id, self.size)
        return {
            "export_id": self.export_id,
            "project_ref": self.project_ref,
            "format": self.format,
            "status": "completed" if completed else "running",
            "file_name": self.file_name() if completed else None,
            "size_bytes": self.size if completed and not self.written_to_folder else None,
            "stats": {"statements": 8, "entities": 5, "sources": 4} if completed else {},
            "error": None,
            "sha256": self.sha256 if completed else None,
            "revision_id": self.revision_id or f"rev_{self.project_ref}_head",
            "retry_of": None,
            "archive_expired_at": self.archive_expired_at,
            "created_at": _iso(self.created),
            "finished_at": _iso(self.ready_at) if completed else None,
            "downloadable": completed and self.archive_expired_at is None and not self.written_to_folder,
            "written_to_folder": self.written_to_folder,
        }


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f"{at % 1:.6f}"[1:] + "Z"


class ExportBook:
    def __init__(self, state: EngineState) -> None:
        self.state = state
        self.exports: dict[str, Export] = {}
        self.processing: set[str] = set()
        self.build_seconds = DEFAULT_BUILD_SECONDS
        self.archive_bytes = DEFAULT_ARCHIVE_BYTES

    def reset(self) -> None:
        with self.state.lock:
            self.exports = {}
            self.processing = set()
            self.build_seconds = DEFAULT_BUILD_SECONDS
            self.archive_bytes = DEFAULT_ARCHIVE_BYTES

    def get(self, export_id: str) -> Export:
        with self.state.lock:
            found = self.exports.get(export_id)
        if found is None:
            raise ApiError(404, "not_found", f"No export {export_id}.")
        return found

    def start(self, ref: str, fmt: str, options: dict[str, Any]) -> Export:
        now = time.time()
        with self.state.lock:
            if ref in self.processing:
                raise ApiError(
                    409,
                    "project_processing",
                    "This knowledge base is being processed; an export taken now would mix old and new results.",
                )
            export = Export(
                export_id=f"exp_{secrets.token_hex(8)}",
                project_ref=ref,
                format=fmt,
                options=options,
                created=now,
                ready_at=now + self.build_seconds,
                size=self.archive_bytes,
            )
            self.exports[export.export_id] = export
            return export


def record_published(state: EngineState, ref: str, export_id: str, revision_id: str) -> None:
    """An export the feed published (``Engine.publish_export``) is in the export history too,
    completed, so the history and the feed tell one story (a gap's reconciliation reads both)."""
    exports = book(state)
    now = time.time()
    with state.lock:
        exports.exports[export_id] = Export(
            export_id=export_id,
            project_ref=ref,
            format="anthill",
            options={},
            created=now,
            ready_at=now,
            size=exports.archive_bytes,
            revision_id=revision_id,
        )


def book(state: EngineState) -> ExportBook:
    with state.lock:
        found = state.__dict__.get("_export_book")
        if found is None:
            found = state.__dict__["_export_book"] = ExportBook(state)
        return found  # type: ignore[no-any-return]


def _options(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    unknown = sorted(set(body) - {"format", "options"})
    if unknown:
        raise ApiError(400, "bad_request", f"Unknown field(s): {', '.join(unknown)}.")
    fmt = body.get("format")
    if fmt not in FORMATS:
        raise ApiError(400, "bad_request", f"format is one of {', '.join(FORMATS)}.")
    options = body.get("options") or {}
    if not isinstance(options, dict):
        raise ApiError(400, "bad_request", "options must be an object.")
    for name, value in options.items():
        if name in BOOLEAN_OPTIONS:
            if not isinstance(value, bool):
                raise ApiError(400, "bad_request", f"{name} must be true or false.")
        elif name == "vault_name":
            if not isinstance(value, str) or not 1 <= len(value) <= VAULT_NAME_MAX:
                raise ApiError(400, "bad_request", f"vault_name must be 1 to {VAULT_NAME_MAX} characters.")
        else:
            raise ApiError(400, "bad_request", f"Unknown option {name}.")
    return fmt, options


def api_routes(state: EngineState) -> list[tuple[str, str, Handler]]:
    exports = book(state)

    def project(request: Request) -> str:
        ref = request.params["ref"]
        if state.get_project(ref) is None:
            raise ApiError(404, "not_found", f"No project {ref}.")
        return ref

    def list_exports(request: Request) -> Response:
        ref = project(request)
        with state.lock:
            rows = [e for e in exports.exports.values() if e.project_ref == ref]
        rows.sort(key=lambda e: e.created, reverse=True)
        return json_response(200, {"exports": [e.to_json() for e in rows]})

    def start_export(request: Request) -> Response:
        ref = project(request)
        body = request.json_object()
        fmt, options = _options(body)

        def create() -> tuple[int, Any]:
            return 202, exports.start(ref, fmt, options).to_json()

        key = request.idempotency_key or ""
        try:
            status, payload = state.idempotent(key, request.method, request.path, body, create, lambda s: s)
        except IdempotencyConflict:
            raise ApiError(
                409, "idempotency_key_reused", "This Idempotency-Key was used for another request."
            ) from None
        return json_response(status, payload)

    def get_export(request: Request) -> Response:
        return json_response(200, exports.get(request.params["id"]).to_json())

    def download(request: Request) -> Response:
        export = exports.get(request.params["id"])
        row = export.to_json()
        if row["status"] != "completed":
            raise ApiError(409, "not_ready", "This export is still being built.")
        if export.written_to_folder:
            raise ApiError(409, "written_to_folder", "This export was written into a folder; there is no archive.")
        if export.archive_expired_at is not None:
            raise ApiError(410, "archive_expired", "This export's archive is no longer kept.")
        with state.lock:
            fault = export.faults.pop(0) if export.faults else None
        chunks, size, digest = _archive(export.export_id, export.size, str(row["sha256"]), fault)
        with state.lock:
            export.downloads += 1
        chunks = _counted(chunks, export, state)
        headers = [
            ("X-Export-Sha256", digest),
            ("Content-Disposition", f'attachment; filename="{export.file_name()}"'),
        ]
        return Response(
            status=200,
            headers=headers,
            content_type="application/octet-stream",
            declared_length=size,
            stream=chunks,
        )

    return [
        ("GET", rf"/api/projects/{REF}/exports", list_exports),
        ("POST", rf"/api/projects/{REF}/exports", start_export),
        ("GET", rf"/api/exports/{EXPORT_ID}", get_export),
        ("GET", rf"/api/exports/{EXPORT_ID}/download", download),
    ]


def _archive(seed: str, size: int, digest: str, fault: str | None) -> tuple[Iterator[bytes], int, str]:
    """The archive's bytes, their length and the digest sent beside them, with the export's
    next download fault (if any) applied."""
    if fault == "wrong_record":
        seed = seed + "-other"
        digest = archive_digest(seed, size)
    chunks = archive_chunks(seed, size, 64 * 1024)
    if fault == "corrupt":
        chunks = _corrupt(chunks, size // 2)
    elif fault == "truncate":
        size = max(0, size - max(1, size // 3))
        chunks = _limit(chunks, size)
    elif fault == "extend":
        chunks = _extend(chunks, b"trailing bytes FORAGER never recorded")
        size += len(b"trailing bytes FORAGER never recorded")
    elif fault == "wrong_digest":
        digest = hashlib.sha256(digest.encode()).hexdigest()
    return chunks, size, digest


def _counted(chunks: Iterator[bytes], export: Export, state: EngineState) -> Iterator[bytes]:
    """The archive's chunks, each counted into ``export.served_bytes`` as it is handed to the socket."""
    for piece in chunks:
        with state.lock:
            export.served_bytes += len(piece)
        yield piece


def _corrupt(chunks: Iterator[bytes], at: int) -> Iterator[bytes]:
    sent = 0
    for piece in chunks:
        out = piece
        if sent <= at < sent + len(piece):
            offset = at - sent
            out = piece[:offset] + bytes([piece[offset] ^ 0xFF]) + piece[offset + 1 :]
        sent += len(out)
        yield out


def _limit(chunks: Iterator[bytes], size: int) -> Iterator[bytes]:
    sent = 0
    for piece in chunks:
        out = piece[: size - sent]
        if not out:
            return
        sent += len(out)
        yield out


def _extend(chunks: Iterator[bytes], extra: bytes) -> Iterator[bytes]:
    yield from chunks
    yield extra


def control_routes(state: EngineState) -> list[tuple[str, str, Handler]]:
    exports = book(state)

    def settings(request: Request) -> Response:
        body = request.json_object()
        with state.lock:
            if "build_seconds" in body:
                exports.build_seconds = float(body["build_seconds"])
            if "archive_bytes" in body:
                exports.archive_bytes = int(body["archive_bytes"])
            answer = {"build_seconds": exports.build_seconds, "archive_bytes": exports.archive_bytes}
        return json_response(200, answer)

    def describe(request: Request) -> Response:
        """The export as FORAGER describes it (its digest computed on the first call, as ``GET
        /api/exports/{id}`` does), and how many downloads began and archive bytes were sent."""
        export = exports.get(request.params["id"])
        row = export.to_json()
        with state.lock:
            return json_response(200, {**row, "downloads": export.downloads, "served_bytes": export.served_bytes})

    def expire(request: Request) -> Response:
        export = exports.get(request.params["id"])
        with state.lock:
            export.archive_expired_at = _iso(time.time())
        return json_response(200, export.to_json())

    def folder(request: Request) -> Response:
        export = exports.get(request.params["id"])
        with state.lock:
            export.written_to_folder = True
        return json_response(200, export.to_json())

    def download_faults(request: Request) -> Response:
        export = exports.get(request.params["id"])
        body = request.json_object()
        kind = body.get("kind")
        if kind not in FAULT_KINDS:
            raise ApiError(400, "bad_request", f"kind is one of {', '.join(FAULT_KINDS)}.")
        times = int(body.get("times", 1))
        with state.lock:
            export.faults.extend([kind] * times)
            pending = list(export.faults)
        return json_response(200, {"faults": pending})

    def processing(request: Request) -> Response:
        body = request.json_object()
        with state.lock:
            if body.get("processing"):
                exports.processing.add(request.params["ref"])
            else:
                exports.processing.discard(request.params["ref"])
        return json_response(200, {"processing": request.params["ref"] in exports.processing})

    return [
        ("PUT", r"/exports/settings", settings),
        ("GET", rf"/exports/{EXPORT_ID}", describe),
        ("POST", rf"/exports/{EXPORT_ID}/expire", expire),
        ("POST", rf"/exports/{EXPORT_ID}/folder", folder),
        ("POST", rf"/exports/{EXPORT_ID}/download-faults", download_faults),
        ("POST", rf"/projects/{REF}/processing", processing),
    ]
