"""GET /knowledge/status and GET /knowledge/engine: what the colony's knowledge is doing.

Status is the one route that answers usefully while knowledge is off: it tells *not
configured*, *unreachable* and *working* apart, and never shows the credential.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationError
from typing_extensions import TypeAliasType

from knowledge_service.base_model import Model
from knowledge_service.budget import finished, started
from knowledge_service.domain import workspace_paths
from knowledge_service.domain.connection import ForagerConnection
from knowledge_service.domain.gate import knowledge_enabled, why_disabled
from knowledge_service.domain.package import HOST_PACKAGE_VERSION, PackageAgreement, package_agreement
from knowledge_service.domain.settings import input_root_refusal
from knowledge_service.environment import GATE_ENV_VAR, Environment
from knowledge_service.errors import KnowledgeUnreachable, ServiceError, UpstreamTimeout
from knowledge_service.models import AutoStudy, KnowledgeSettings, RevisionStudy
from knowledge_service.storage.engine_supervisor import read_supervisor_state

MIN_ENGINE_VERSION = (0, 7, 0)
"""forager.engine's floor: FORAGER authenticates every /api route from 0.7.0 on."""

INPUT_ROOTS_KEY = "knowledge_forager_input_roots"
INPUT_ROOTS_VARIABLE = "FORAGER_ALLOWED_INPUT_ROOTS"
DEAD_LETTER_ESCALATION_DAYS = 180


class DeadLetterSummary(Model):
    scope: str = "colony"
    unresolved: int = 0
    escalated: int = 0
    unreachable: int = 0
    unreachable_escalated: int = 0
    escalation_days: int = DEAD_LETTER_ESCALATION_DAYS


class FeedCounts(Model):
    """Colony-wide counts from the change feed's tables.

    The feed's tables arrive with the change-feed work; until a colony follows a feed it
    reports zeros and is given no queue, as the specification says.
    """

    open_changes: int = 0
    dead_letters: DeadLetterSummary = Field(default_factory=DeadLetterSummary)


class RootsHanded(Model):
    roots: list[str]
    from_: str = Field(serialization_alias="from", validation_alias="from")


class RefusedRoot(Model):
    folder: str
    reason: str


class InputRoots(Model):
    key: str = INPUT_ROOTS_KEY
    variable: str = INPUT_ROOTS_VARIABLE
    managed: bool
    workspace: str
    setting: list[str]
    next: RootsHanded
    refused: list[RefusedRoot]
    running: RootsHanded
    waiting: bool


class KnowledgeStatus(Model):
    enabled: bool
    reachable: bool
    usable: bool
    version: str | None
    schema_version: int | None
    search_backend: str | None
    model_provider: str | None
    endpoint: str
    reason: str | None
    projects: list[str]
    configured_endpoint: str
    allow_remote: bool
    auto_study: AutoStudy
    revision_study: RevisionStudy
    revision_study_resolved: AutoStudy
    open_changes: int
    dead_letters: DeadLetterSummary
    gate_env_var: str
    gate_env_pinned: bool
    change_feed: bool | None
    package_version: int | None
    host_package_version: int
    package_agreement: PackageAgreement
    package_note: str | None
    input_roots: InputRoots


class AttachedEngine(Model):
    """A colony attached to a FORAGER its operator runs: ``managed: false`` and a note, nothing else."""

    managed: Literal[False] = False
    note: str


EngineState = Literal["disabled", "starting", "running", "backoff", "failed", "stopping"]


class ManagedEngine(Model):
    """What the engine this host supervises is doing (the local stack's)."""

    managed: Literal[True] = True
    state: EngineState
    endpoint: str
    instance_id: str | None
    generation: str | None
    version: str | None
    reason: str | None
    ready_since: str | None
    restarts_in_window: int


EngineAnswer = TypeAliasType("EngineAnswer", AttachedEngine | ManagedEngine)
"""What ``GET /knowledge/engine`` answers: the attached note, or the managed engine's state (one
name for the two, so the document and a generated client name it once)."""


def knowledge_status(
    env: Environment, settings: KnowledgeSettings, upstream: ForagerConnection, counts: FeedCounts | None = None
) -> KnowledgeStatus:
    counts = counts or FeedCounts()
    enabled = knowledge_enabled(settings, env)
    configured = upstream.configured_endpoint(settings)
    probe = _Probe()
    if not enabled:
        probe.reason = why_disabled(env)
    else:
        probe.run(upstream, settings)
    agreement, note = package_agreement(probe.package_version, asked=probe.capabilities_read)
    return KnowledgeStatus(
        enabled=enabled,
        reachable=probe.reachable,
        usable=probe.usable,
        version=probe.version,
        schema_version=probe.schema_version,
        search_backend=probe.search_backend,
        model_provider=probe.model_provider,
        endpoint=configured if enabled else "",
        reason=probe.reason,
        projects=probe.projects,
        configured_endpoint=configured,
        allow_remote=env.knowledge_forager_allow_remote,
        auto_study=settings.knowledge_auto_study,
        revision_study=settings.knowledge_revision_study,
        revision_study_resolved=settings.revision_study_resolved,
        open_changes=counts.open_changes,
        dead_letters=counts.dead_letters,
        gate_env_var=GATE_ENV_VAR,
        gate_env_pinned=env.gate_pinned,
        change_feed=probe.change_feed,
        package_version=probe.package_version,
        host_package_version=HOST_PACKAGE_VERSION,
        package_agreement=agreement,
        package_note=note,
        input_roots=input_roots(env, settings),
    )


def engine(env: Environment) -> EngineAnswer:
    """The supervisor's word where this host manages its engine (the local stack); otherwise an
    attached colony's answer: a serverless host supervises no engine process."""
    if env.devstack_engine_file:
        said = read_supervisor_state(env.devstack_engine_file) or {}
        try:
            return ManagedEngine.model_validate({**said, "managed": True})
        except ValidationError:
            return ManagedEngine(
                state="failed",
                endpoint=str(said.get("endpoint") or ""),
                instance_id=None,
                generation=None,
                version=None,
                reason="The supervisor's state cannot be read.",
                ready_since=None,
                restarts_in_window=0,
            )
    return AttachedEngine(
        note="This colony is attached to a FORAGER its operator runs: a serverless host has no supervisor, "
        "so there is no engine process here to start, watch or restart. GET /knowledge/status says "
        "whether the engine answers.",
    )


class _Probe:
    """Asks FORAGER what it is: status, capabilities and projects at once, under the request's
    budget (so the probe takes as long as its slowest ask, never the sum), read in that order
    up to the first failure."""

    def __init__(self) -> None:
        self.reachable = False
        self.usable = False
        self.reason: str | None = None
        self.version: str | None = None
        self.schema_version: int | None = None
        self.search_backend: str | None = None
        self.model_provider: str | None = None
        self.projects: list[str] = []
        self.change_feed: bool | None = None
        self.package_version: int | None = None
        self.capabilities_read = False

    def run(self, upstream: ForagerConnection, settings: KnowledgeSettings) -> None:
        reason = upstream.why_not_connectable(settings)
        if reason:
            self.reason = reason
            return
        client = upstream.client(settings)
        status_asked = started(client.status)
        capabilities_asked = started(client.capabilities)
        projects_asked = started(client.projects)
        finished(status_asked, capabilities_asked, projects_asked)
        try:
            status = status_asked.result()
            self.reachable = True
            self.version, self.schema_version = status.version, status.schema_version
            self.search_backend, self.model_provider = status.search_backend, status.model_provider
            capabilities = capabilities_asked.result()
            self.capabilities_read = True
            self.change_feed = capabilities.change_feed
            self.package_version = capabilities.package_version
            self.projects = [project.project_ref for project in projects_asked.result()]
        except ServiceError as error:
            self.reachable = self.reachable or not isinstance(error, (KnowledgeUnreachable, UpstreamTimeout))
            self.reason = error.message
            return
        if _version_tuple(status.version) < MIN_ENGINE_VERSION:
            floor = ".".join(map(str, MIN_ENGINE_VERSION))
            self.reason = f"FORAGER {status.version} is older than {floor}, the oldest engine this host can use."
            return
        self.usable = True


def _version_tuple(version: str) -> tuple[int, ...]:
    numbers = []
    for part in version.split("-", maxsplit=1)[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        numbers.append(int(digits) if digits else 0)
    return tuple(numbers)


def input_roots(env: Environment, settings: KnowledgeSettings) -> InputRoots:
    """What an import by path may read on the engine this colony runs (K2).

    The validation is the same whoever runs the engine: every folder the setting names is
    held to the workspace fence, and one that has fallen outside since it was written (the
    workspace moved) is listed in ``refused`` with the reason. What is handed over depends on
    who runs it: a FORAGER an operator runs (``managed: false``, always so on a serverless
    host, where no engine is started from here) reads its own allowed folders, so nothing
    is handed from here and nothing waits for a restart. A managed engine is handed the
    setting's contained folders (``from: colony``), or FORAGER_ALLOWED_INPUT_ROOTS from the
    colony's own environment while the setting is empty (``environment``). What it runs with is
    its supervisor's word (the local stack's, ``DEVSTACK_ENGINE_FILE``: the folders it started
    the running engine with, ``from: supervisor``); a handed list that differs waits for the
    engine's next start.
    """
    root = workspace_paths.normalized_root(env.knowledge_workspace_root)
    setting = list(settings.knowledge_forager_input_roots)
    refused: list[RefusedRoot] = []
    accepted: list[str] = []
    for folder in setting:
        reason = input_root_refusal(folder, root)
        if reason is None:
            accepted.append(workspace_paths.resolve(folder, root).absolute)
        else:
            refused.append(RefusedRoot(folder=folder, reason=reason))
    none = RootsHanded(roots=[], **{"from": "none"})
    handed = none
    if env.knowledge_forager_managed:
        if setting:
            handed = RootsHanded(roots=accepted, **{"from": "colony"})
        elif env.forager_allowed_input_roots:
            inside = [r for r in env.forager_allowed_input_roots if input_root_refusal(r, root) is None]
            handed = RootsHanded(roots=inside, **{"from": "environment"})
    running = _running_roots(env) if env.knowledge_forager_managed else none
    return InputRoots(
        managed=env.knowledge_forager_managed,
        workspace=root,
        setting=setting,
        next=handed,
        refused=refused,
        running=running,
        waiting=bool(handed.roots) and sorted(handed.roots) != sorted(running.roots),
    )


def _running_roots(env: Environment) -> RootsHanded:
    """The folders the managed engine runs with, as its supervisor started it (none while it is
    not running, or on a host without a supervisor)."""
    said = read_supervisor_state(env.devstack_engine_file) if env.devstack_engine_file else None
    roots = (said or {}).get("input_roots")
    if not said or said.get("state") != "running" or not isinstance(roots, list):
        return RootsHanded(roots=[], **{"from": "none"})
    return RootsHanded(roots=[str(r) for r in roots], **{"from": "supervisor"})
