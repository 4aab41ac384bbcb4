"""What each verb is: capability, risk class, minimum permission, MCP tier, idempotency.

The table is the specification's (spec 003), plus this project's two capture verbs. The
front door reads it for every call; ``GET /v/`` reports it, so an MCP server can learn
which verbs to advertise (tier 1 always, tier 2 on demand, ``null`` never).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum

from knowledge_service.identity.principal import Permission


class Capability(StrEnum):
    READ = "knowledge.read"
    WRITE = "knowledge.write"
    ADMIN = "knowledge.admin"


# The installation permission a capability takes. knowledge.admin is manage_knowledge, which
# an agent never holds: review and retire are an operator's acts, never a model's.
CAPABILITY_PERMISSION = {
    Capability.READ: Permission.READ_KNOWLEDGE,
    Capability.WRITE: Permission.WRITE_KNOWLEDGE,
    Capability.ADMIN: Permission.MANAGE_KNOWLEDGE,
}


class Autonomy(IntEnum):
    """An agent's autonomy level; a verb's risk class names the least it takes."""

    L0 = 0
    L1 = 1
    L2 = 2


class RiskClass(StrEnum):
    READ = "read"
    WRITE = "write"
    SENSITIVE = "sensitive"

    @property
    def autonomy(self) -> Autonomy:
        return {RiskClass.READ: Autonomy.L0, RiskClass.WRITE: Autonomy.L1, RiskClass.SENSITIVE: Autonomy.L2}[self]


class WorkspaceRole(IntEnum):
    """Standing in a workspace (an ANTHILL project), in rank order."""

    MEMBER = 1  # any role on the project
    ADMIN = 2  # the project's admin role
    OWNER = 3  # owner of the project's organization


class Availability(StrEnum):
    CORE = "core"  # always on: MCP tier 1
    ON_DEMAND = "on_demand"  # MCP tier 2
    ADMIN_ONLY = "admin_only"  # CLI and HTTP only, never advertised over MCP


MCP_TIER = {Availability.CORE: 1, Availability.ON_DEMAND: 2, Availability.ADMIN_ONLY: None}


@dataclass(frozen=True)
class Verb:
    name: str
    capability: Capability
    risk: RiskClass
    permission: WorkspaceRole
    availability: Availability
    idempotent: bool
    budget_gated: bool = False
    summary: str = ""

    @property
    def mcp_tier(self) -> int | None:
        return MCP_TIER[self.availability]

    @property
    def installation_permission(self) -> Permission:
        return CAPABILITY_PERMISSION[self.capability]


_R, _W, _S = RiskClass.READ, RiskClass.WRITE, RiskClass.SENSITIVE
_MEMBER, _ADMIN = WorkspaceRole.MEMBER, WorkspaceRole.ADMIN
_CORE, _DEMAND, _ADMIN_ONLY = Availability.CORE, Availability.ON_DEMAND, Availability.ADMIN_ONLY

VERBS: dict[str, Verb] = {
    v.name: v
    for v in (
        Verb(
            "knowledge.distil",
            Capability.WRITE,
            _W,
            _MEMBER,
            _ADMIN_ONLY,
            idempotent=False,
            budget_gated=True,
            summary="Store a DISTILLED assertion whose evidence quote is an exact substring of its capture",
        ),
        Verb("knowledge.get", Capability.READ, _R, _MEMBER, _CORE, False, summary="An assertion with its evidence"),
        Verb("knowledge.list", Capability.READ, _R, _MEMBER, _CORE, False, summary="Assertions by status"),
        Verb(
            "knowledge.propose",
            Capability.WRITE,
            _W,
            _MEMBER,
            _ADMIN_ONLY,
            False,
            summary="Store a DISTILLED assertion marked as proposed for review",
        ),
        Verb("knowledge.publish", Capability.WRITE, _S, _ADMIN, _DEMAND, True, summary="DISTILLED to PUBLISHED"),
        Verb("knowledge.retire", Capability.ADMIN, _S, _ADMIN, _ADMIN_ONLY, False, summary="PUBLISHED to RETIRED"),
        Verb("knowledge.review", Capability.ADMIN, _S, _ADMIN, _ADMIN_ONLY, False, summary="Approve or reject"),
        Verb(
            "knowledge.supersede",
            Capability.WRITE,
            _S,
            _ADMIN,
            _ADMIN_ONLY,
            False,
            summary="Point an assertion at its successor",
        ),
        Verb(
            "capture.create",
            Capability.WRITE,
            _W,
            _MEMBER,
            _ADMIN_ONLY,
            False,
            summary="Store a source document (this project's addition)",
        ),
        Verb("capture.get", Capability.READ, _R, _MEMBER, _ADMIN_ONLY, False, summary="A source document"),
    )
}
