"""The project map: which FORAGER project (knowledge base) each ANTHILL project reads.

``POST /knowledge/project-map`` binds, rebinds and unbinds; ``POST /knowledge/bases`` makes
a knowledge base in FORAGER and binds it in the same request. The map is the
installation's configuration and is read again on every call.

Binding is a project's own setting (the ruling in ``shared/spec/README.md``, issue 39): binding
a named project takes ``manage_knowledge`` and that project's admin role, as making a knowledge
base for it does (a caller with no standing in the project is answered what a missing project
is, byte for byte; an owner of its organization who holds no role, or a lesser role, is refused
403); the console default takes ``manage_knowledge`` and ``manage_settings``.

A knowledge base belongs to the organization that made it (``POST /knowledge/bases``: the
project's organization, or the installation's for the console default), bound or not; a base made
before ownership was recorded belongs to the first organization that binds it. A base of an
organization the caller has no standing in (it owns the organization or holds a role on one of
its projects) is hidden from the caller (:func:`hidden_knowledge_bases`): not listed
(``GET /knowledge/projects``, ``status.projects``) and not bindable (the ``404`` a knowledge base
FORAGER does not hold gets). A base with no owner yet is hidden as before: when it is bound to a
project of an organization the caller has no standing in, and to none it does stand in.
Every answer that echoes the map echoes it as ``GET /knowledge/project-map`` filters it.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from aws_lambda_powertools import Logger
from pydantic import AfterValidator, ConfigDict, Field

from knowledge_service.base_model import Model
from knowledge_service.domain import identifiers
from knowledge_service.domain.connection import ForagerConnection
from knowledge_service.domain.scope import has_standing, no_such_project
from knowledge_service.errors import BindingFailed, NotFound, PermissionDenied
from knowledge_service.identity.principal import Permission, Principal, ProjectRole
from knowledge_service.models import DEFAULT_PROJECT
from knowledge_service.storage.conditions import WriteFailed
from knowledge_service.storage.config_store import ConfigStore
from knowledge_service.storage.event_log import EventLog, new_event
from knowledge_service.storage.projects import ProjectStore
from knowledge_service.upstream.models import ForagerProject

logger = Logger(child=True)


class ProjectMapRequest(Model):
    """Bind ``project`` to ``knowledge_base``.

    An empty ``knowledge_base`` unbinds; an empty ``project`` is the console default. Both
    fields are required, so a body that misspells one is refused rather than read as an
    unbind.
    """

    model_config = ConfigDict(extra="forbid")

    project: Annotated[str, Field(max_length=63, pattern=identifiers.PROJECT_OR_DEFAULT_PATTERN)]
    knowledge_base: Annotated[str, Field(max_length=64, pattern=identifiers.KNOWLEDGE_BASE_OR_UNBIND_PATTERN)]


class ProjectMapView(Model):
    project_map: dict[str, str]
    default_project: str


class BindingRow(Model):
    """One project's binding: the knowledge base it reads, who bound it and when."""

    project: str
    knowledge_base: str
    bound_by: str | None
    bound_at: datetime | None


class ConsoleDefault(Model):
    """What a call naming no project reads: the console default's binding."""

    knowledge_base: str
    bound_by: str | None
    bound_at: datetime | None


class BindingList(Model):
    """``GET /knowledge/project-map``: the bindings the caller may see, and the console default
    (``null`` while it is bound to nothing)."""

    bindings: list[BindingRow]
    console_default: ConsoleDefault | None


def _trimmed(value: str) -> str:
    return value.strip(identifiers.BLANK)


class KnowledgeBaseRequest(Model):
    """Make a knowledge base in FORAGER and bind ``project`` (or the console default) to it."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[
        str, Field(min_length=1, max_length=120, pattern=identifiers.NOT_BLANK_PATTERN), AfterValidator(_trimmed)
    ]
    description: Annotated[str, Field(max_length=2000), AfterValidator(_trimmed)] = ""
    project: Annotated[str, Field(max_length=63, pattern=identifiers.PROJECT_OR_DEFAULT_PATTERN)] = DEFAULT_PROJECT


class KnowledgeBaseCreated(Model):
    knowledge_base: ForagerProject
    project: str
    bound: bool
    project_map: dict[str, str]
    default_project: str


def project_map_view(config: ConfigStore, projects: ProjectStore, principal: Principal) -> ProjectMapView:
    """The map as ``principal`` may see it: the rows of :func:`visible_bindings`, and the
    console default's knowledge base (``""`` while it is bound to nothing)."""
    visible = visible_bindings(config, projects, principal)
    return ProjectMapView(
        project_map={row.project: row.knowledge_base for row in visible.bindings},
        default_project=visible.console_default.knowledge_base if visible.console_default else "",
    )


def hidden_knowledge_bases(config: ConfigStore, projects: ProjectStore, principal: Principal) -> frozenset[str]:
    """The knowledge bases ``principal`` may neither list nor bind: each owned by an organization
    it has no standing in (it owns none of them and holds a role on none of their projects); and
    of the bases with no owner recorded, each bound to a project of such an organization and to
    no project of an organization it does stand in. A binding whose project record is gone, and
    the console default's, hide nothing of an unowned base."""
    owners = config.owners()
    bound = [b for b in config.bindings() if b.project != DEFAULT_PROJECT and b.knowledge_base not in owners]
    if not owners and not bound:
        return frozenset()
    records = projects.many({b.project for b in bound} | set(principal.project_roles))
    standing = set(principal.organizations) | {
        records[project].organization for project in principal.project_roles if project in records
    }
    owned_elsewhere = {ref for ref, organization in owners.items() if organization not in standing}
    foreign = {
        b.knowledge_base for b in bound if b.project in records and records[b.project].organization not in standing
    }
    own = {b.knowledge_base for b in bound if b.project in records and records[b.project].organization in standing}
    return frozenset(owned_elsewhere | (foreign - own))


def listed_knowledge_bases(
    config: ConfigStore, projects: ProjectStore, principal: Principal, held: list[ForagerProject]
) -> list[ForagerProject]:
    """``held`` (what FORAGER lists) without the knowledge bases hidden from ``principal``."""
    hidden = hidden_knowledge_bases(config, projects, principal)
    return [p for p in held if p.project_ref not in hidden]


def visible_bindings(config: ConfigStore, projects: ProjectStore, principal: Principal) -> BindingList:
    """Every binding of the installation ``principal`` may see, by project.

    A project's binding shows where the caller has standing in the project (any role on it, or
    ownership of its organization: the standing of the reads), so the list never tells a caller
    which projects it cannot see exist; the console default shows to anyone who may read
    knowledge, as a read naming no project does. A binding whose project record is gone shows to
    no one but a role holder."""
    rows = config.bindings()
    default = next((b for b in rows if b.project == DEFAULT_PROJECT), None)
    bound = [b for b in rows if b.project != DEFAULT_PROJECT]
    unknown = {b.project for b in bound if principal.role_in(b.project) is None}
    records = projects.many(unknown) if unknown and principal.organizations else {}
    visible = [
        BindingRow(project=b.project, knowledge_base=b.knowledge_base, bound_by=b.bound_by, bound_at=b.bound_at)
        for b in sorted(bound, key=lambda b: b.project)
        if b.project not in unknown
        or (b.project in records and has_standing(principal, b.project, records[b.project].organization))
    ]
    console_default = (
        None
        if default is None
        else ConsoleDefault(knowledge_base=default.knowledge_base, bound_by=default.bound_by, bound_at=default.bound_at)
    )
    return BindingList(bindings=visible, console_default=console_default)


def set_binding(
    config: ConfigStore,
    projects: ProjectStore,
    upstream: ForagerConnection,
    request: ProjectMapRequest,
    actor: Principal,
    installation_organization: str,
    events: EventLog | None = None,
) -> ProjectMapView:
    """Bind, rebind or unbind; persists at once, with its event log row in the same
    transaction (``knowledge_project_bound`` / ``knowledge_project_unbound``) when ``events``
    is given.

    Access first, before any answer that depends on stored state: a named project held to its
    admin (no standing in it: the missing project's 404), the console default to a holder of
    ``manage_settings`` who owns the installation's organization. A knowledge base hidden from
    the caller is answered as one FORAGER does not hold; one with no owner yet becomes the
    binding organization's. The answer is the map as the caller may see it."""
    organization = _binding_organization(projects, request.project, actor, installation_organization)
    client = upstream.client(config.settings())
    if request.knowledge_base:
        identifiers.knowledge_base(request.knowledge_base)
        listed = listed_knowledge_bases(config, projects, actor, client.projects())
        held = request.knowledge_base in {p.project_ref for p in listed}
        if not held or config.claim(request.knowledge_base, organization, actor.name) != organization:
            raise NotFound(
                f"FORAGER holds no knowledge base '{request.knowledge_base}' "
                "(GET /knowledge/projects lists the ones it holds)."
            )
        if events is None:
            config.bind(request.project, request.knowledge_base, actor.name)
        else:
            bound = new_event(
                "knowledge_project_bound",
                actor.name,
                {"project": request.project, "knowledge_base": request.knowledge_base},
            )
            config.bind_logged(request.project, request.knowledge_base, actor.name, bound, events)
    else:
        client.status()  # knowledge must be usable for every route but status, unbinding included
        if events is None:
            config.unbind(request.project)
        else:
            unbound = new_event("knowledge_project_unbound", actor.name, {"project": request.project})
            config.unbind_logged(request.project, unbound, events)
    return project_map_view(config, projects, actor)


def _binding_organization(
    projects: ProjectStore, project: str, actor: Principal, installation_organization: str
) -> str:
    """The organization a binding of ``project`` acts for, once ``actor`` may bind it: the named
    project's (held to its admin) or, for the console default, the installation's (held to
    ``manage_settings`` and ownership of that organization)."""
    if project:
        organization = _existing_project(projects, project)
        if not has_standing(actor, project, organization):
            raise no_such_project(project)
        if actor.role_in(project) is not ProjectRole.ADMIN:
            raise PermissionDenied(f"Binding project '{project}' takes that project's admin role.")
        return organization
    if not actor.holds(Permission.MANAGE_SETTINGS):
        raise PermissionDenied("Binding the console default takes the manage_settings permission.")
    if not actor.owns(installation_organization):
        raise PermissionDenied("Binding the console default takes ownership of the installation's organization.")
    return installation_organization


def create_knowledge_base(
    config: ConfigStore,
    projects: ProjectStore,
    upstream: ForagerConnection,
    events: EventLog,
    request: KnowledgeBaseRequest,
    actor: Principal,
    idempotency_key: str,
    installation_organization: str,
) -> KnowledgeBaseCreated:
    """The ordered sequence of the specification, after permission and commercial gate.

    The body; the named project held to its admin (a caller with no standing in it answered as
    if it did not exist), the console default to an owner of the installation's organization;
    knowledge usable; then, under one lock, a
    project already bound is refused before anything is made; FORAGER makes the project
    under the caller's Idempotency-Key; the binding and its event are saved together.
    """
    organization = installation_organization
    if request.project:
        organization = _existing_project(projects, request.project)
        if not has_standing(actor, request.project, organization):
            raise no_such_project(request.project)
        if actor.role_in(request.project) is not ProjectRole.ADMIN:
            raise PermissionDenied(f"Making a knowledge base for '{request.project}' takes that project's admin role.")
    elif not actor.owns(installation_organization):
        raise PermissionDenied(
            "Making a knowledge base for the console default takes ownership of the installation's organization."
        )
    client = upstream.client(config.settings())
    client.status()  # knowledge usable, before anything is locked

    owner = uuid.uuid4().hex
    config.reserve(request.project, owner)
    try:
        made = client.create_project(request.name, request.description, idempotency_key=idempotency_key)
    except BaseException:
        config.release(request.project, owner)
        raise
    config.claim(made.project_ref, organization, actor.name)  # the maker's, before anyone can see it bound
    event = new_event(
        "knowledge_base_created",
        actor.name,
        {
            "project": request.project,
            "knowledge_base": made.project_ref,
            "name": made.name,
        },
    )
    try:
        config.complete_reservation(request.project, owner, made.project_ref, actor.name, event, events)
    except WriteFailed as failure:
        logger.exception("binding not saved", extra={"knowledge_base": made.project_ref, "why": str(failure)})
        config.release(request.project, owner)
        raise BindingFailed(
            f"FORAGER made knowledge base '{made.project_ref}' ({made.name}) but the colony could not save the "
            f"binding; bind it from the list (POST /knowledge/project-map with knowledge_base "
            f"'{made.project_ref}')."
        ) from failure
    view = project_map_view(config, projects, actor)
    return KnowledgeBaseCreated(
        knowledge_base=made,
        project=request.project,
        bound=True,
        project_map=view.project_map,
        default_project=view.default_project,
    )


def _existing_project(projects: ProjectStore, project_id: str) -> str:
    """The organization of ``project_id``; a project that does not exist is not found."""
    identifiers.project_id(project_id)
    record = projects.get(project_id)
    if record is None:
        raise no_such_project(project_id)
    return record.organization
