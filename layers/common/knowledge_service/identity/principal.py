"""A principal: the caller a bearer token stands for.

A principal carries its installation permissions, its role on each ANTHILL project, the
organizations it owns, and (for the ``knowledge.*`` verbs) its workspace roles and
autonomy. The authorizer hands it to the functions as JSON in the request context; the
functions never read the principals table themselves.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping
from enum import StrEnum

from pydantic import ConfigDict, Field

from knowledge_service.base_model import Model

TOKEN_PREFIX = "ks_"  # noqa: S105 - a prefix, not a secret
_TOKEN_SHAPE = re.compile(r"^ks_[A-Za-z0-9_-]{43}$")


class Permission(StrEnum):
    READ_STATUS = "read_status"
    READ_KNOWLEDGE = "read_knowledge"
    WRITE_KNOWLEDGE = "write_knowledge"  # the knowledge.write verbs (an agent may hold it)
    MANAGE_KNOWLEDGE = "manage_knowledge"
    MANAGE_SETTINGS = "manage_settings"


class ProjectRole(StrEnum):
    ADMIN = "admin"
    OPERATOR = "operator"
    VIEWER = "viewer"


class PrincipalKind(StrEnum):
    HUMAN = "human"
    AGENT = "agent"


# An agent may read; deciding scope, settings or spending is an operator's act, never a
# model's (the specification: "an agent may never choose scope").
AGENT_FORBIDDEN = frozenset({Permission.MANAGE_KNOWLEDGE, Permission.MANAGE_SETTINGS})


class Principal(Model):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: PrincipalKind = PrincipalKind.HUMAN
    permissions: frozenset[Permission] = frozenset()
    project_roles: dict[str, ProjectRole] = Field(default_factory=dict)
    organizations: frozenset[str] = frozenset()
    workspace_roles: dict[str, str] = Field(default_factory=dict)
    autonomy: str | None = None

    def holds(self, permission: Permission) -> bool:
        if self.kind is PrincipalKind.AGENT and permission in AGENT_FORBIDDEN:
            return False
        return permission in self.permissions

    def role_in(self, project_id: str) -> ProjectRole | None:
        return self.project_roles.get(project_id)

    def owns(self, organization: str) -> bool:
        return organization in self.organizations


def mint_token() -> str:
    """A new bearer token: 256 random bits, shown once and stored only as a hash."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def is_well_formed(token: str) -> bool:
    return bool(_TOKEN_SHAPE.match(token))


def token_hash(token: str) -> str:
    """SHA-256 of the token. Tokens carry 256 random bits, so a fast hash is enough."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def header(headers: Mapping[str, str] | None, name: str) -> str | None:
    """A request header's value, its name matched as HTTP matches names (case-insensitively)."""
    found = headers or {}
    value = found.get(name)
    if value is None:
        lowered = name.lower()
        value = next((v for k, v in found.items() if k.lower() == lowered), None)
    return value


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()
