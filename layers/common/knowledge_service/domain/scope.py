"""Scope: which knowledge base a call reaches, resolved from ``?project=`` on every call.

A caller never names a knowledge base. ``?project=<anthill-project-id>`` is translated
through the project map; omitting it uses the console default; an unmapped project is
``not_found``, never a silent fallback. The settings, the binding and the project's record
come from one strongly consistent read (``ConfigStore.scope``): no cache can serve a stale
binding.

Standing in the named project:

- a **read** takes any role on the project, or ownership of its organization;
- an **operator-rank** act (review, curation, export download: the acts the platform gives a
  project's administrator and operator, never its viewer) takes the
  project's admin or operator role; its viewer, and an owner who holds no role, are refused;
- the console default (no project) is read with the route's permission alone; acted on at
  operator rank only by an owner of the installation's organization.

Standing before existence: a caller with no standing in a project (no role on it, not an owner
of its organization) is answered exactly what a missing project is answered
(:func:`no_such_project`, byte for byte), so project names cannot be probed; a viewer, or an
owner who holds no role, keeps the 403 an operator-rank act gives them.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TypeVar

from pydantic import ConfigDict

from knowledge_service.base_model import Model
from knowledge_service.domain import identifiers
from knowledge_service.domain.gate import require_enabled
from knowledge_service.environment import Environment
from knowledge_service.errors import InternalError, NotFound, PermissionDenied, UpstreamRefused
from knowledge_service.identity.principal import Principal, ProjectRole
from knowledge_service.models import DEFAULT_PROJECT, KnowledgeSettings
from knowledge_service.storage.config_store import ConfigStore, ScopeRecords

T = TypeVar("T")


class Standing(StrEnum):
    """What standing a route takes in the project a call names (``?project=`` or the body):
    the one name for it, declared on the route (``edge/access.py``) and held here."""

    INSTALLATION = "installation"  # the installation's configuration: no project standing
    READ = "read"  # any role on the project, or ownership of its organization
    OPERATOR = "operator"  # the project's operator or admin
    ADMIN = "admin"  # the project's admin (held by the domain, for admin routes)


SCOPED = frozenset({Standing.READ, Standing.OPERATOR})
"""The standings a route resolves a scope at (``resolve_scope``)."""


OPERATOR_ROLES = frozenset({ProjectRole.ADMIN, ProjectRole.OPERATOR})


class Scope(Model):
    """The resolved scope of one call."""

    model_config = ConfigDict(frozen=True)

    project: str  # "" for the console default
    knowledge_base: str
    settings: KnowledgeSettings


def resolve_scope(
    env: Environment, config: ConfigStore, principal: Principal, project: str | None, standing: Standing = Standing.READ
) -> Scope:
    """The knowledge base ``project`` reads, for ``principal`` at ``standing``.

    Refusals, in order: a malformed project id (400); a project that does not exist, or one the
    caller has no standing in (the same 404); too little standing (403); knowledge off (503); a
    project bound to nothing (404).
    """
    key = project or DEFAULT_PROJECT
    if key:
        identifiers.project_id(key, "project")
    return scope_from(env, config.scope(key), principal, key, standing)


def scope_from(
    env: Environment, records: ScopeRecords, principal: Principal, project: str, standing: Standing
) -> Scope:
    """:func:`resolve_scope`'s decision over records already read (one consistent read of
    ``project``'s settings, binding and record, which may have carried the principal too)."""
    if standing not in SCOPED:
        raise InternalError(f"A scope is resolved at read or operator standing, not {standing.value}.")
    key = project
    if key:
        identifiers.project_id(key, "project")
        if records.project is None:
            raise no_such_project(key)
        _require_standing(principal, key, records.project.organization, standing)
    elif standing is Standing.OPERATOR and not principal.owns(env.installation_organization):
        raise PermissionDenied("Acting on the console default takes ownership of the installation's organization.")
    require_enabled(records.settings, env)
    if records.binding is None:
        label = f"Project '{key}'" if key else "The console default"
        raise NotFound(f"{label} is not bound to a knowledge base.")
    return Scope(project=key, knowledge_base=records.binding.knowledge_base, settings=records.settings)


def no_such_project(project: str) -> NotFound:
    """What a project that does not exist is answered, and so a caller with no standing in one."""
    return NotFound(f"There is no project '{project}'.")


NOT_HELD = "The knowledge base this project reads is not one FORAGER holds."


def held(fetch: Callable[[], T]) -> T:
    """``fetch``, a call on the knowledge base a project reads; FORAGER's 404 for that base is
    the one answer every route gives when FORAGER does not hold it (:data:`NOT_HELD`)."""
    try:
        return fetch()
    except UpstreamRefused as refused:
        if refused.upstream_status == 404:
            raise NotFound(NOT_HELD) from None
        raise


def has_standing(principal: Principal, project: str, organization: str) -> bool:
    """Any role on the project, or ownership of its organization."""
    return principal.role_in(project) is not None or principal.owns(organization)


def _require_standing(principal: Principal, project: str, organization: str, standing: Standing) -> None:
    if not has_standing(principal, project, organization):
        raise no_such_project(project)
    if standing is Standing.OPERATOR and principal.role_in(project) not in OPERATOR_ROLES:
        raise PermissionDenied(f"This act takes the operator or admin role on project '{project}'.")
