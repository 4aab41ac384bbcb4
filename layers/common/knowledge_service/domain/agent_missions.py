"""Agent missions: intake of ``agent.mission.started`` / ``agent.mission.ended``, the mission
credential, and the ambient scope a tool call runs in.

A mission is an EventBridge event carrying the project, the agent's role and its autonomy;
the event id is the mission id. Whoever starts a mission draws the credential's 256 random
bits and puts only their SHA-256 in the event (``credential_sha256``): the credential never
travels on the bus and is never stored, exactly as principal tokens are kept. Intake binds
that hash to the one project, the role's tool list (copied from the role contract at
intake, so a later contract change does not widen a running mission), the autonomy and an
expiry, and records it once per event id.

Every MCP call resolves its scope from the credential alone: an unknown, ended or expired
credential is 401; nothing a tool's arguments say can name another project.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from knowledge_service.base_model import Model
from knowledge_service.domain import identifiers
from knowledge_service.domain.verbs.catalogue import VERBS, Autonomy, RiskClass
from knowledge_service.errors import BadRequest, NotFound, Unauthenticated
from knowledge_service.identity.principal import Permission, Principal, PrincipalKind
from knowledge_service.storage.agent_missions import AgentMissionStore, MissionRecord, RoleContract
from knowledge_service.storage.page_store import PageStore
from knowledge_service.storage.projects import ProjectStore

MISSION_SOURCE = "knowledge-service.agent-missions"
STARTED = "agent.mission.started"
ENDED = "agent.mission.ended"
CREDENTIAL_PREFIX = "km_"
_CREDENTIAL_SHAPE = re.compile(r"^km_[A-Za-z0-9_-]{43}$")
_SHA256 = r"^[0-9a-f]{64}$"
AUTONOMY_LEVELS = ("L0", "L1", "L2")


@dataclass(frozen=True)
class ToolInfo:
    """A tool's risk class (the least autonomy it takes) and MCP tier (1 listed, 2 on demand)."""

    risk: RiskClass
    tier: int = 1


KNOWLEDGE_TOOLS = (
    "knowledge_search",
    "knowledge_retrieve",
    "knowledge_item",
    "knowledge_evidence",
    "knowledge_entities",
    "knowledge_statements",
    "knowledge_conflicts",
    "knowledge_sources",
)
BRAIN_READS = ("brain_get", "brain_list", "brain_history", "brain_search")
BRAIN_WRITES = ("brain_put", "brain_delete", "brain_promote", "brain_revert")
DISCOVER_TOOL = "tools_discover"
"""Always listed, in no contract: it reveals the tier 2 tools the mission's role lists."""

TOOLS: dict[str, ToolInfo] = {
    **{name: ToolInfo(RiskClass.READ) for name in KNOWLEDGE_TOOLS + BRAIN_READS},
    **{name: ToolInfo(RiskClass.WRITE) for name in BRAIN_WRITES},
    **{v.name: ToolInfo(v.risk, v.mcp_tier) for v in VERBS.values() if v.mcp_tier is not None},
}
"""Every tool a role contract may list: the knowledge reads, the seven brain tools, and the
verbs the catalogue offers over MCP (tier 1 and 2; admin-only verbs are never tools)."""


def writes(tools: tuple[str, ...] | list[str]) -> bool:
    return any(name in TOOLS and TOOLS[name].risk is not RiskClass.READ for name in tools)


def autonomy(level: str) -> Autonomy:
    return Autonomy[level] if level in AUTONOMY_LEVELS else Autonomy.L0


class MissionStarted(Model):
    """The ``detail`` of ``agent.mission.started``."""

    model_config = ConfigDict(extra="forbid")

    project: str = Field(max_length=63, pattern=identifiers.PROJECT_OR_DEFAULT_PATTERN, min_length=1)
    role: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,62}$")
    autonomy: str = Field(default="L0", pattern=r"^L[012]$")
    credential_sha256: str = Field(pattern=_SHA256)
    expires_in_seconds: int | None = Field(default=None, ge=60, le=7 * 24 * 3600)


class MissionEnded(Model):
    """The ``detail`` of ``agent.mission.ended``."""

    model_config = ConfigDict(extra="forbid")

    mission_id: str = Field(min_length=1, max_length=128)


def mint_credential() -> str:
    """A new mission credential: 256 random bits, shown once, kept only as a hash."""
    return CREDENTIAL_PREFIX + secrets.token_urlsafe(32)


def credential_hash(credential: str) -> str:
    return hashlib.sha256(credential.encode("utf-8")).hexdigest()


def is_credential(value: str) -> bool:
    return bool(_CREDENTIAL_SHAPE.match(value))


def intake(
    store: AgentMissionStore, projects: ProjectStore, pages: PageStore, event: dict[str, Any]
) -> MissionRecord | None:
    """Record what one bus event says; the same event twice records once.

    Returns the mission (started or ended), or None for an event that names no mission
    intake knows (logged by the caller, never retried: retrying would not make it known).
    """
    kind = event.get("detail-type")
    detail = event.get("detail") or {}
    if kind == STARTED:
        return _start(store, projects, pages, str(event["id"]), MissionStarted.model_validate(detail))
    if kind == ENDED:
        ended = MissionEnded.model_validate(detail)
        mission = store.by_id(ended.mission_id)
        if mission is None:
            return None
        store.end(mission)
        pages.end_session(mission.mission_id)  # its session brain dies with it
        return store.by_id(mission.mission_id)
    return None


def _start(
    store: AgentMissionStore, projects: ProjectStore, pages: PageStore, mission_id: str, started: MissionStarted
) -> MissionRecord | None:
    recorded = store.by_id(mission_id)
    if recorded is not None:
        return recorded  # delivered twice: the first delivery recorded it
    identifiers.project_id(started.project)
    if projects.get(started.project) is None:
        raise NotFound(f"There is no project '{started.project}'.")
    role = store.role(started.role)
    if role is None:
        raise NotFound(f"There is no role contract '{started.role}'.")
    now = datetime.now(UTC)
    seconds = min(started.expires_in_seconds or role.mission_seconds, role.mission_seconds)
    mission = MissionRecord(
        mission_id=mission_id,
        project=started.project,
        role=role.name,
        tools=role.tools,
        project_role=role.project_role,
        autonomy=started.autonomy,
        credential_hash=started.credential_sha256,
        started_at=now,
        expires_at=now + timedelta(seconds=seconds),
    )
    pages.create_session(mission_id, started.project, f"mission {mission_id} ({role.name})", mission.expires_at)
    store.record(mission)
    return store.by_id(mission_id)


def authenticate(store: AgentMissionStore, authorization: str | None, now: datetime | None = None) -> MissionRecord:
    """The live mission a ``Bearer km_…`` header stands for; one 401 for every failure."""
    scheme, _, credential = (authorization or "").strip().partition(" ")
    credential = credential.strip()
    refused = Unauthenticated("A live mission credential is required (Authorization: Bearer km_…).")
    if scheme.lower() != "bearer" or not is_credential(credential):
        raise refused
    mission = store.by_credential_hash(credential_hash(credential))
    if mission is None or not mission.live(now or datetime.now(UTC)):
        raise refused
    return mission


def principal_of(mission: MissionRecord) -> Principal:
    """The agent a mission stands for: one project, the role's standing, the mission's autonomy.

    ``write_knowledge`` only when the role lists a tool that writes; never a manage_*.
    """
    permissions = {Permission.READ_KNOWLEDGE}
    if writes(mission.tools):
        permissions.add(Permission.WRITE_KNOWLEDGE)
    return Principal(
        name=f"mission:{mission.mission_id}",
        kind=PrincipalKind.AGENT,
        permissions=frozenset(permissions),
        project_roles={mission.project: mission.project_role},
        autonomy=mission.autonomy,
    )


def role_contract(name: str, tools: list[str], project_role: str, mission_seconds: int | None) -> RoleContract:
    """A role contract an operator typed, held to the tools that exist (and are offered over MCP)."""
    unknown = sorted(set(tools) - set(TOOLS))
    if unknown:
        raise BadRequest("tools", f"{', '.join(unknown)} is not an MCP tool (known: {', '.join(sorted(TOOLS))}).")
    try:
        return RoleContract.model_validate(
            {
                "name": name,
                "tools": tuple(dict.fromkeys(tools)),
                "project_role": project_role,
                **({"mission_seconds": mission_seconds} if mission_seconds else {}),
            }
        )
    except ValidationError as invalid:
        first = invalid.errors()[0]
        raise BadRequest(".".join(str(p) for p in first["loc"]) or "role", str(first["msg"])) from None
