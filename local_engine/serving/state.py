"""The engine's state: its knowledge bases, capabilities, idempotency records and what was asked of it.

Pure Python and thread-safe: every read and write goes through ``EngineState.lock``
(re-entrant, so a method may call another). Readers get copies, never live objects,
except through the dataclass fields themselves, which in-process tests may inspect.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import secrets
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_engine.demo import corpus as demo
from local_engine.ingestion.workers import Workers
from local_engine.search.queries import Knowledge
from local_engine.store.database import Store

ENGINE_VERSION = "0.8.0"
SCHEMA_VERSION = 1
SEARCH_BACKEND = "sqlite-fts5+wordllama"
MODEL_PROVIDER = "none (deterministic mode)"
GENERATION = "gen_01"
ANTHILL_PACKAGE_VERSION = 7

PROJECT_STATES = ("empty", "processing", "ready")

REQUESTS_KEPT = 1000
"""The recorded requests kept (the newest): a long-running engine's memory stays flat."""

PERSISTED_FORMAT = 1


@dataclass
class Project:
    """A knowledge base, as ``GET /api/projects`` lists it."""

    project_ref: str
    name: str
    description: str = ""
    source_count: int = 0
    knowledge_count: int = 0
    open_conflict_count: int = 0
    state: str = "empty"

    def to_json(self) -> dict[str, Any]:
        return {
            "project_ref": self.project_ref,
            "name": self.name,
            "description": self.description,
            "source_count": self.source_count,
            "knowledge_count": self.knowledge_count,
            "open_conflict_count": self.open_conflict_count,
            "state": self.state,
        }


def demo_projects() -> dict[str, Project]:
    """The demo corpus every engine starts with (and returns to on reset)."""
    projects = [
        Project(
            project_ref="falcon",
            name="Project Falcon",
            description="Launch planning for Project Falcon",
            state="ready",
        ),
        Project(
            project_ref="harbour",
            name="Harbour handbook",
            description="What the harbour team wrote down",
            state="ready",
        ),
    ]
    return {project.project_ref: project for project in projects}


def new_instance_id() -> str:
    return "fgi_" + secrets.token_hex(4)


def new_project_ref() -> str:
    return "proj_" + secrets.token_hex(6)


def default_status() -> dict[str, Any]:
    return {
        "version": ENGINE_VERSION,
        "schema_version": SCHEMA_VERSION,
        "search_backend": SEARCH_BACKEND,
        "model_provider": MODEL_PROVIDER,
    }


def default_capabilities(instance_id: str) -> dict[str, Any]:
    return {
        "instance_id": instance_id,
        "generation": GENERATION,
        "change_feed": True,
        "exports": {"anthill": {"package_version": ANTHILL_PACKAGE_VERSION}},
    }


def request_fingerprint(method: str, path: str, body: Any) -> str:
    """What "the same request" means for an Idempotency-Key: route and canonical body."""
    canonical = json.dumps([method.upper(), path, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class IdempotencyConflict(Exception):
    """The key was already used for a different request."""


@dataclass(frozen=True)
class IdempotencyRecord:
    key: str
    method: str
    path: str
    fingerprint: str
    status: int
    payload: Any
    created_at: float


@dataclass
class EngineState:
    """Everything the engine holds. ``instance_id`` survives :meth:`reset`."""

    instance_id: str = field(default_factory=new_instance_id)
    projects: dict[str, Project] = field(default_factory=demo_projects)
    status: dict[str, Any] = field(default_factory=default_status)
    capabilities: dict[str, Any] = field(init=False)
    idempotency: dict[str, IdempotencyRecord] = field(default_factory=dict)
    requests: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=REQUESTS_KEPT))
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)
    on_change: Callable[[], None] | None = field(default=None, repr=False, compare=False)
    request_count: int = 0  # every request recorded since the start or the last reset (requests keeps the newest)
    store: Store = field(default_factory=lambda: Store(None, threading.RLock()), repr=False, compare=False)
    upload_root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="engine-uploads-")), repr=False)
    allowed_roots: tuple[Path, ...] = ()  # FORAGER_ALLOWED_INPUT_ROOTS: none, every path
    stopping: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)
    """Set when the engine stops: a running stage ends between two sources."""
    stage_seconds: float = 0.0  # the pace's clock (a test's control): 0, as fast as the work goes
    workers: Workers = field(default_factory=Workers, repr=False, compare=False)
    vectors: bool = True  # statements get vectors and search ranks by meaning (LOCAL_ENGINE_VECTORS at start)
    """Where the stages' pure work runs (``workers.py``): in place unless the engine was given workers."""

    def __post_init__(self) -> None:
        self.capabilities = default_capabilities(self.instance_id)
        self.lock = self.store.lock  # one lock: the state and the database it writes
        demo.ensure(self.store)

    # -- whole state -------------------------------------------------------------

    def reset(self) -> None:
        """Back to the demo corpus: no extra projects, keys or requests."""
        with self.lock:
            self.projects = demo_projects()
            self.status = default_status()
            self.capabilities = default_capabilities(self.instance_id)
            self.idempotency = {}
            self.requests = deque(maxlen=REQUESTS_KEPT)
            self.request_count = 0
            self.store.clear()
            demo.load(self.store)
            self.changed()

    def snapshot(self) -> dict[str, Any]:
        """The whole state as JSON-ready data (the control port's ``GET /state``)."""
        with self.lock:
            return {
                "instance_id": self.instance_id,
                "projects": [self._counted(p).to_json() for p in self.projects.values()],
                "status": copy.deepcopy(self.status),
                "capabilities": copy.deepcopy(self.capabilities),
                "idempotency_keys": [
                    {
                        "key": r.key,
                        "method": r.method,
                        "path": r.path,
                        "status": r.status,
                    }
                    for r in self.idempotency.values()
                ],
                "requests": copy.deepcopy(list(self.requests)),
            }

    # -- what survives a restart ---------------------------------------------------

    def persisted(self) -> dict[str, Any]:
        """What a restart keeps: the instance id, every knowledge base and its sources, the
        idempotency keys (a retried create replays). Not the requests, the fault or the feed."""
        with self.lock:
            return {
                "format": PERSISTED_FORMAT,
                "instance_id": self.instance_id,
                "projects": [p.to_json() for p in self.projects.values()],
                "idempotency": [dataclasses.asdict(record) for record in self.idempotency.values()],
            }

    def load_persisted(self, data: dict[str, Any]) -> None:
        """Put back what :meth:`persisted` wrote. A knowledge base's counts are the store's, never
        the file's (a file an older engine wrote may carry its own)."""
        if data.get("format") != PERSISTED_FORMAT:
            raise ValueError(f"engine state format {data.get('format')!r}; this engine reads {PERSISTED_FORMAT}")
        with self.lock:
            self.instance_id = str(data["instance_id"])
            self.capabilities = default_capabilities(self.instance_id)
            for project in data.get("projects", []):
                counts = {"source_count": 0, "knowledge_count": 0, "open_conflict_count": 0}
                self.projects[project["project_ref"]] = Project(**{**project, **counts})
            for record in data.get("idempotency", []):
                self.idempotency[record["key"]] = IdempotencyRecord(**record)

    def changed(self) -> None:
        """Tell the owner (the persisting engine) that what a restart keeps has changed."""
        if self.on_change is not None:
            self.on_change()

    # -- engine description ------------------------------------------------------

    def get_status(self) -> dict[str, Any]:
        with self.lock:
            return copy.deepcopy(self.status)

    def get_capabilities(self) -> dict[str, Any]:
        with self.lock:
            return copy.deepcopy(self.capabilities)

    def set_capabilities(self, capabilities: dict[str, Any]) -> None:
        """Replace what ``GET /api/capabilities`` answers, wholesale."""
        if not isinstance(capabilities, dict):
            raise TypeError("capabilities must be a dict")
        with self.lock:
            self.capabilities = copy.deepcopy(capabilities)

    # -- projects ----------------------------------------------------------------

    def list_projects(self) -> list[dict[str, Any]]:
        with self.lock:
            return [self._counted(p).to_json() for p in self.projects.values()]

    def get_project(self, project_ref: str) -> Project | None:
        """The knowledge base as it was made (its counts are the listing's: counting a large
        base's statements is a pass over them, which a read that only asks whether it exists
        must not pay)."""
        with self.lock:
            project = self.projects.get(project_ref)
            return None if project is None else copy.copy(project)

    def _counted(self, project: Project) -> Project:
        """The project with what the pipeline stored added to its counts and state."""
        sources, statements, busy = Knowledge(self.store).counts(project.project_ref)
        counted = copy.copy(project)
        counted.source_count += sources
        counted.knowledge_count += statements
        counted.open_conflict_count += int(
            self.store.value("SELECT COUNT(*) FROM conflicts WHERE ref = ? AND status = 'open'", project.project_ref)
            or 0
        )
        if busy:
            counted.state = "processing"
        elif counted.source_count and counted.state == "empty":
            counted.state = "ready"
        return counted

    def create_project(self, name: str, description: str = "") -> Project:
        with self.lock:
            ref = new_project_ref()
            while ref in self.projects:
                ref = new_project_ref()
            project = Project(project_ref=ref, name=name, description=description)
            self.projects[ref] = project
            self.changed()
            return copy.copy(project)

    # -- idempotency -------------------------------------------------------------

    def idempotent(
        self,
        key: str,
        method: str,
        path: str,
        body: Any,
        create: Callable[[], tuple[int, Any]],
        replay_status: Callable[[int], int] = lambda status: status,
    ) -> tuple[int, Any]:
        """Run ``create`` once per key; replay its answer for the same request.

        The same key with a different route or body raises
        :class:`IdempotencyConflict`. ``replay_status`` maps the first answer's status
        to the replay's (``201`` → ``200`` for a project).
        """
        fingerprint = request_fingerprint(method, path, body)
        with self.lock:
            record = self.idempotency.get(key)
            if record is not None:
                if record.fingerprint != fingerprint:
                    raise IdempotencyConflict(key)
                return replay_status(record.status), copy.deepcopy(record.payload)
            status, payload = create()
            self.idempotency[key] = IdempotencyRecord(
                key=key,
                method=method.upper(),
                path=path,
                fingerprint=fingerprint,
                status=status,
                payload=copy.deepcopy(payload),
                created_at=time.time(),
            )
            self.changed()
            return status, payload

    # -- recorded requests -------------------------------------------------------

    def record_request(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Append a request record; the returned dict is the live record."""
        with self.lock:
            entry.setdefault("status", None)
            self.requests.append(entry)
            self.request_count += 1
            return entry

    def set_request_status(self, entry: dict[str, Any], status: int) -> None:
        with self.lock:
            entry["status"] = status

    def requests_snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return copy.deepcopy(list(self.requests))


def read_state_file(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def write_state_file(path: Path, data: dict[str, Any]) -> None:
    """``data`` to ``path`` atomically (a temporary file, fsync, rename), mode 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
