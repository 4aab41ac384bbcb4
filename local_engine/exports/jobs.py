"""Exports: real archives of a knowledge base, built in the background, streamed from disk
(docs/upstream-contract.md, "Exports").

``POST /api/projects/{ref}/exports`` answers at once with the export ``running`` and starts a
thread of its own that reads the base from the store, renders and writes the archive
(``archives.py``: an obsidian vault, a JSONL stream or an ANTHILL package) to a file under the
engine's data folder (``<data>/exports/``), hashing each byte as it is written. The export is
``completed`` when the archive is on disk and its ``build_seconds`` have passed (the control port's
pace, for a test that watches it run), with the file's SHA-256, size and what it holds (``stats``)
recorded; ``failed`` (with FORAGER's sentence in ``error``) when the build raised. Completing
publishes ``knowledge.export.completed`` on the base's change feed (``feed.py``), naming the revision
it was cut from and ``package_digest`` ``sha256:<the archive's SHA-256>``; a base that has published
no revision has nothing to name, so its exports complete with ``revision_id`` null and no envelope.

A download streams the file a block at a time. The export history is not kept across a restart,
so the exports folder is emptied when the engine starts and on a reset.

The control port paces exports (``build_seconds``), adds **padding** (``padding_bytes``: a stored
entry of that many bytes in the next archives, for a test that needs a GiB download without a GiB
of knowledge), expires an archive or marks it written into a folder (either removes its file),
injects download faults (``corrupt``, ``truncate``, ``extend``, ``wrong_digest``, ``wrong_record``)
and tells how many downloads began and how many archive bytes were sent.
"""

from __future__ import annotations

import copy
import hashlib
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_engine.exports import archives, records
from local_engine.exports.archives import FORMATS
from local_engine.serving import feed
from local_engine.serving.routing import ApiError, Handler, Request, Response, json_response
from local_engine.serving.state import EngineState, IdempotencyConflict

REF = r"(?P<ref>[a-z0-9_]{1,64})"
EXPORT_ID = r"(?P<id>exp_[0-9a-f]{16})"
BOOLEAN_OPTIONS = records.FLAGS
VAULT_NAME_MAX = 80
SEND_BLOCK = 64 * 1024
DEFAULT_BUILD_SECONDS = 0.2
FAULT_KINDS = ("corrupt", "truncate", "extend", "wrong_digest", "wrong_record")
FEED_FORMATS = {"anthill": "anthill_package", "obsidian": "obsidian", "jsonl": "jsonl"}
"""``export_format`` on the feed: the specification's ``anthill_package``, the others by name."""
SETTINGS = ("build_seconds", "padding_bytes")
SETTLE_SECONDS = 60.0
"""How long the control port's expire and folder wait for a running export to finish building."""


@dataclass
class Export:
    export_id: str
    project_ref: str
    format: str
    options: dict[str, Any]
    created: float
    ready_at: float  # completed no earlier than this (the control port's build_seconds)
    padding_bytes: int = 0
    status: str = "running"  # running | completed | failed
    size: int | None = None
    sha256: str | None = None
    stats: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    finished: float | None = None
    path: Path | None = None
    revision_id: str | None = None  # the revision it was cut from (None: the base published none)
    envelope: dict[str, Any] | None = None  # the knowledge.export.completed it published
    archive_expired_at: str | None = None
    written_to_folder: bool = False
    faults: list[str] = field(default_factory=list)
    downloads: int = 0  # archive downloads begun, and the archive bytes sent in them (tests count them)
    served_bytes: int = 0
    done: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    def file_name(self) -> str:
        vault = str(self.options.get("vault_name") or self.project_ref)
        return f"{vault} export {self.export_id[4:12]}{FORMATS[self.format]}"

    def to_json(self) -> dict[str, Any]:
        completed = self.completed
        kept = completed and not self.written_to_folder
        return {
            "export_id": self.export_id,
            "project_ref": self.project_ref,
            "format": self.format,
            "status": self.status,
            "file_name": self.file_name() if completed else None,
            "size_bytes": self.size if kept else None,
            "stats": dict(self.stats) if completed else {},
            "error": self.error,
            "sha256": self.sha256 if kept else None,
            "revision_id": self.revision_id,
            "retry_of": None,
            "archive_expired_at": self.archive_expired_at,
            "created_at": _iso(self.created),
            "finished_at": _iso(self.finished) if self.finished is not None else None,
            "downloadable": kept and self.archive_expired_at is None,
            "written_to_folder": self.written_to_folder,
        }


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f"{at % 1:.6f}"[1:] + "Z"


class ExportBook:
    """The engine's exports: the history (in memory), the archives (files under ``root``)."""

    def __init__(self, state: EngineState) -> None:
        self.state = state
        self.exports: dict[str, Export] = {}
        self.processing: set[str] = set()
        self.build_seconds = DEFAULT_BUILD_SECONDS
        self.padding_bytes = 0
        self._root: Path | None = None

    @property
    def root(self) -> Path:
        """Where archives are written: the engine's ``<data>/exports`` (a temporary folder for a
        state no engine gave one)."""
        with self.state.lock:
            if self._root is None:
                self._root = Path(tempfile.mkdtemp(prefix="engine-exports-"))
            return self._root

    def use_root(self, root: Path) -> None:
        """Keep archives under ``root``, emptied first: the history that named what was there is
        not kept across a restart."""
        with self.state.lock:
            self._root = root
            _empty(root)

    def reset(self) -> None:
        with self.state.lock:
            self.exports = {}
            self.processing = set()
            self.build_seconds = DEFAULT_BUILD_SECONDS
            self.padding_bytes = 0
            if self._root is not None:
                _empty(self._root)

    def get(self, export_id: str) -> Export:
        with self.state.lock:
            found = self.exports.get(export_id)
        if found is None:
            raise ApiError(404, "not_found", f"No export {export_id}.")
        return found

    def wait(self, export_id: str, timeout: float = SETTLE_SECONDS) -> Export:
        """The export once it is no longer running (or after ``timeout``, as it then is)."""
        export = self.get(export_id)
        export.done.wait(timeout)
        return export

    def start(self, ref: str, fmt: str, options: dict[str, Any], *, background: bool = True) -> Export:
        """A new export of ``ref``, ``running``; built by a thread of its own, or (``background``
        False) in the caller's, at once and whatever the pace, before this returns."""
        export = self.new(ref, fmt, options, background=background)
        self.run(export, background=background)
        return export

    def new(self, ref: str, fmt: str, options: dict[str, Any], *, background: bool = True) -> Export:
        """The export in the history, ``running``, not yet built (:meth:`run` builds it)."""
        now = time.time()
        with self.state.lock:
            if ref in self.processing:
                raise ApiError(
                    409,
                    "project_processing",
                    "This knowledge base is being processed; an export taken now would mix old and new results.",
                )
            head = feed.ledger(self.state).package_revision(ref)
            export = Export(
                export_id=f"exp_{secrets.token_hex(8)}",
                project_ref=ref,
                format=fmt,
                options=dict(options),
                created=now,
                ready_at=now + (self.build_seconds if background else 0.0),
                padding_bytes=self.padding_bytes,
                revision_id=head["id"] if head else None,
            )
            self.exports[export.export_id] = export
            return export

    def run(self, export: Export, *, background: bool = True) -> None:
        if background:
            threading.Thread(target=self._build, args=(export,), name=f"export-{export.export_id}", daemon=True).start()
        else:
            self._build(export)

    def publish_now(self, ref: str) -> dict[str, Any]:
        """An ANTHILL export of the head revision, built now; its completion's envelope (the
        control port's ``POST /projects/{ref}/exports``, ``Engine.publish_export``)."""
        if feed.ledger(self.state).head(ref) is None:
            raise ApiError(409, "not_ready", f"Project '{ref}' has published no revision to export.")
        export = self.start(ref, "anthill", {}, background=False)
        if export.envelope is None:
            raise ApiError(500, "internal_error", export.error or "The export published nothing.")
        return copy.deepcopy(export.envelope)

    def _current(self, export: Export) -> bool:
        return self.exports.get(export.export_id) is export

    def _build(self, export: Export) -> None:
        """Read, render and write the archive; then, its pace kept, completed and published."""
        try:
            with self.state.lock:  # the revision and the rows in one cut; the rest outside the lock
                if not self._current(export):
                    return
                project = self.state.get_project(export.project_ref)
                revision = feed.ledger(self.state).package_revision(export.project_ref)
                rows = records.fetch(self.state.store, export.project_ref, export.options)
                export.revision_id = revision["id"] if revision else None
                path = self.root / f"{export.export_id}{FORMATS[export.format]}"
            name = project.name if project else export.project_ref
            base = records.assemble(export.project_ref, name, rows, export.options)
            written = archives.build(export.format, base, export.options, revision, path, export.padding_bytes)
        except Exception as exc:  # any failure of the build is the export's, told in its row
            with self.state.lock:
                export.status, export.error, export.finished = (
                    "failed",
                    f"The archive could not be built: {exc}",
                    time.time(),
                )
            export.done.set()
            return
        wait = export.ready_at - time.time()
        if wait > 0 and self.state.stopping.wait(wait):
            return
        with self.state.lock:
            if not self._current(export):  # reset while it was built
                path.unlink(missing_ok=True)
                return
            export.path, export.size, export.sha256 = path, written.size, written.sha256
            export.stats = base.stats()
            export.status, export.finished = "completed", time.time()
            if export.written_to_folder or export.archive_expired_at is not None:
                path.unlink(missing_ok=True)
            if export.revision_id is not None:
                export.envelope = feed.ledger(self.state).export_completed(
                    export.project_ref, export.revision_id, export.export_id, FEED_FORMATS[export.format],
                    written.sha256,
                )  # fmt: skip
        export.done.set()

    def other_archive(self, fmt: str) -> tuple[Path, str, int]:
        """Another archive of the format (an empty knowledge base's): the ``wrong_record`` fault's."""
        path = self.root / f"other{FORMATS[fmt]}"
        written = archives.build(fmt, records.Base(ref="other", name="Another knowledge base"), {}, None, path)
        return path, written.sha256, written.size


def _empty(root: Path) -> None:
    if root.exists():
        shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)


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
            answer = [e.to_json() for e in rows]
        return json_response(200, {"exports": answer})

    def start_export(request: Request) -> Response:
        ref = project(request)
        body = request.json_object()
        fmt, options = _options(body)

        def create() -> tuple[int, Any]:
            export = exports.new(ref, fmt, options)
            row = export.to_json()  # the answer is the export as it starts: running, however fast it builds
            exports.run(export)
            return 202, row

        key = request.idempotency_key or ""
        try:
            status, payload = state.idempotent(key, request.method, request.path, body, create, lambda s: s)
        except IdempotencyConflict:
            raise ApiError(
                409, "idempotency_key_reused", "This Idempotency-Key was used for another request."
            ) from None
        return json_response(status, payload)

    def get_export(request: Request) -> Response:
        export = exports.get(request.params["id"])
        with state.lock:
            return json_response(200, export.to_json())

    def download(request: Request) -> Response:
        export = exports.get(request.params["id"])
        with state.lock:
            if not export.completed:
                raise ApiError(409, "not_ready", "This export is still being built.")
            if export.written_to_folder:
                raise ApiError(409, "written_to_folder", "This export was written into a folder; there is no archive.")
            if export.archive_expired_at is not None or export.path is None or not export.path.exists():
                raise ApiError(410, "archive_expired", "This export's archive is no longer kept.")
            fault = export.faults.pop(0) if export.faults else None
            path, size, digest = export.path, int(export.size or 0), str(export.sha256)
            handle = path.open("rb")  # opened now: an expiry after this answer began does not cut it short
            export.downloads += 1
        if fault == "wrong_record":
            handle.close()
            other, digest, size = exports.other_archive(export.format)
            handle = other.open("rb")
        chunks, size, digest = _faulted(_blocks(handle), size, digest, fault)
        headers = [
            ("X-Export-Sha256", digest),
            ("Content-Disposition", f'attachment; filename="{export.file_name()}"'),
        ]
        return Response(
            status=200,
            headers=headers,
            content_type="application/octet-stream",
            declared_length=size,
            stream=_counted(chunks, export, state),
        )

    return [
        ("GET", rf"/api/projects/{REF}/exports", list_exports),
        ("POST", rf"/api/projects/{REF}/exports", start_export),
        ("GET", rf"/api/exports/{EXPORT_ID}", get_export),
        ("GET", rf"/api/exports/{EXPORT_ID}/download", download),
    ]


def _blocks(handle: Any) -> Iterator[bytes]:
    """The file's bytes, a block at a time; closed at the end or when the answer is dropped."""
    with handle:
        while piece := handle.read(SEND_BLOCK):
            yield piece


def _faulted(chunks: Iterator[bytes], size: int, digest: str, fault: str | None) -> tuple[Iterator[bytes], int, str]:
    """The archive's bytes, their length and the digest sent beside them, with the download's
    fault (if any) applied."""
    if fault == "corrupt":
        chunks = _corrupt(chunks, size // 2)
    elif fault == "truncate":
        size = max(0, size - max(1, size // 3))
        chunks = _limit(chunks, size)
    elif fault == "extend":
        extra = b"trailing bytes FORAGER never recorded"
        chunks = _extend(chunks, extra)
        size += len(extra)
    elif fault == "wrong_digest":
        digest = hashlib.sha256(digest.encode()).hexdigest()
    return chunks, size, digest


def _counted(chunks: Iterator[bytes], export: Export, state: EngineState) -> Iterator[bytes]:
    """The archive's chunks, each counted into ``export.served_bytes`` as it is handed to the socket."""
    try:
        for piece in chunks:
            with state.lock:
                export.served_bytes += len(piece)
            yield piece
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


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
        unknown = sorted(set(body) - set(SETTINGS))
        if unknown:
            raise ApiError(
                400,
                "bad_request",
                f"Unknown setting(s): {', '.join(unknown)}; the settings are {', '.join(SETTINGS)} (archives are "
                "built from the knowledge base: padding_bytes adds a stored entry of that size).",
            )
        try:
            build_seconds = float(body.get("build_seconds", exports.build_seconds))
            padding_bytes = int(body.get("padding_bytes", exports.padding_bytes))
        except (TypeError, ValueError):
            raise ApiError(400, "bad_request", "build_seconds and padding_bytes are numbers.") from None
        if build_seconds < 0 or padding_bytes < 0:
            raise ApiError(400, "bad_request", "build_seconds and padding_bytes are at least 0.")
        with state.lock:
            exports.build_seconds, exports.padding_bytes = build_seconds, padding_bytes
            answer = {"build_seconds": exports.build_seconds, "padding_bytes": exports.padding_bytes}
        return json_response(200, answer)

    def describe(request: Request) -> Response:
        """The export as FORAGER describes it, and how many downloads began and archive bytes were sent."""
        export = exports.get(request.params["id"])
        with state.lock:
            return json_response(
                200, {**export.to_json(), "downloads": export.downloads, "served_bytes": export.served_bytes}
            )

    def expire(request: Request) -> Response:
        export = exports.wait(request.params["id"])
        with state.lock:
            export.archive_expired_at = _iso(time.time())
            if export.path is not None:
                export.path.unlink(missing_ok=True)
            return json_response(200, export.to_json())

    def folder(request: Request) -> Response:
        export = exports.wait(request.params["id"])
        with state.lock:
            export.written_to_folder = True
            if export.path is not None:
                export.path.unlink(missing_ok=True)
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

    def publish(request: Request) -> Response:
        return json_response(200, exports.publish_now(request.params["ref"]))

    return [
        ("PUT", r"/exports/settings", settings),
        ("GET", rf"/exports/{EXPORT_ID}", describe),
        ("POST", rf"/exports/{EXPORT_ID}/expire", expire),
        ("POST", rf"/exports/{EXPORT_ID}/folder", folder),
        ("POST", rf"/exports/{EXPORT_ID}/download-faults", download_faults),
        ("POST", rf"/projects/{REF}/processing", processing),
        ("POST", rf"/projects/{REF}/exports", publish),
    ]
