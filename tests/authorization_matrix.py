"""The authorization matrix, generated from the route table (``edge.catalog``).

Every route is called by every kind of caller, and the status is held to what the route
declares (``x-permission``, ``x-project-access``): a route added tomorrow is covered
without anyone remembering to. "Allowed" means the call got past access control — any
answer but 401, 403 or a 5xx (a failure is never an access decision).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from devstack.samples import PROJECT, request_for  # noqa: F401 - re-exported for the tests
from knowledge_service.edge.access import Standing
from knowledge_service.edge.catalog import RouteInfo
from knowledge_service.identity.principal import (
    Permission,
    Principal,
    PrincipalKind,
    ProjectRole,
    mint_token,
    token_hash,
)
from knowledge_service.runtime import Runtime
from tests.conftest import written_once

OTHER_PROJECT = "elsewhere"  # another organization's project
OTHER_ORGANIZATION = "other-org"  # elsewhere's organization
INSTALLATION_ORGANIZATION = "colony"  # the installation's organization (and falcon's)
CONSOLE_DEFAULT_SETTINGS = frozenset({("POST", "/knowledge/project-map")})
"""Admin-rank routes whose console default is held to ``manage_settings`` (the ruling "Binding is a
project's own setting"), not to ownership of the installation's organization."""
MANAGE = {Permission.MANAGE_KNOWLEDGE.value, Permission.MANAGE_SETTINGS.value}
SIGN_IN = ("POST", "/knowledge/session")


class Expect(StrEnum):
    UNAUTHENTICATED = "401"
    DENIED = "403"
    HIDDEN = "404 as a missing project"  # no standing in it: the answer a missing project gets, byte for byte
    ALLOWED = "allowed"


@dataclass(frozen=True)
class Caller:
    """One row of the matrix: a token state, or a principal with permissions and roles."""

    name: str
    token: str = "valid"  # valid | none | malformed | revoked
    kind: PrincipalKind = PrincipalKind.HUMAN
    permissions: frozenset[Permission] = frozenset(Permission)
    roles: dict[str, ProjectRole] = field(default_factory=dict)
    owns: frozenset[str] = frozenset()


def callers() -> list[Caller]:
    admin = {PROJECT: ProjectRole.ADMIN}
    rows = [
        Caller("no-token", token="none"),
        Caller("malformed-token", token="malformed"),
        Caller("revoked-token", token="revoked", roles=admin),
        Caller("project-admin", roles=admin),
        Caller("project-operator", roles={PROJECT: ProjectRole.OPERATOR}),
        Caller("project-viewer", roles={PROJECT: ProjectRole.VIEWER}),
        Caller("admin-of-another-project", roles={OTHER_PROJECT: ProjectRole.ADMIN}),
        Caller("roleless-owner", owns=frozenset({INSTALLATION_ORGANIZATION})),
        Caller("project-admin-and-owner", roles=admin, owns=frozenset({INSTALLATION_ORGANIZATION})),
        Caller("owner-of-another-organization", owns=frozenset({OTHER_ORGANIZATION})),
        # every power there is, in another organization: the probe's cross-organization caller (issue 39)
        Caller(
            "admin-and-owner-of-another-organization",
            roles={OTHER_PROJECT: ProjectRole.ADMIN},
            owns=frozenset({OTHER_ORGANIZATION}),
        ),
        Caller("agent", kind=PrincipalKind.AGENT, roles=admin),
    ]
    rows += [Caller(f"lacks-{p.value}", permissions=frozenset(Permission) - {p}, roles=admin) for p in Permission]
    return rows


def expectation(route: RouteInfo, caller: Caller, *, project: str | None = PROJECT) -> Expect:
    """What ``caller`` gets from ``route`` naming ``project`` (None: the console default)."""
    if caller.token != "valid":
        return Expect.UNAUTHENTICATED
    permission = Permission(str(route.permission))
    if permission not in caller.permissions:
        return Expect.DENIED
    if caller.kind is PrincipalKind.AGENT and permission.value in MANAGE:
        return Expect.DENIED
    if caller.kind is PrincipalKind.AGENT and (route.method, route.path) == SIGN_IN:
        return Expect.DENIED  # the ruling: "the browser holds a console session" — a person's, never an agent's
    role = caller.roles.get(PROJECT)
    needed = Standing(str(route.project_access))
    if needed is Standing.INSTALLATION:
        return Expect.ALLOWED
    owner = INSTALLATION_ORGANIZATION in caller.owns
    if project is None:
        # The console default: read with the route's permission alone; acted on at operator rank,
        # or given a new knowledge base (admin rank), only by an owner of the installation's
        # organization.
        if (route.method, route.path) in CONSOLE_DEFAULT_SETTINGS:
            # manage_settings and ownership of the installation's organization (the ruling
            # "Binding is a project's own setting": the console default is the owner's act)
            return Expect.ALLOWED if Permission.MANAGE_SETTINGS in caller.permissions and owner else Expect.DENIED
        if needed in (Standing.OPERATOR, Standing.ADMIN):
            return Expect.ALLOWED if owner else Expect.DENIED
        return Expect.ALLOWED
    if role is None and not owner:
        return Expect.HIDDEN  # standing before existence: no role, no ownership
    if needed is Standing.READ:
        return Expect.ALLOWED
    if needed is Standing.OPERATOR:
        return Expect.ALLOWED if role in (ProjectRole.ADMIN, ProjectRole.OPERATOR) else Expect.DENIED
    return Expect.ALLOWED if role is ProjectRole.ADMIN else Expect.DENIED


def outcome(status: int, body: bytes = b"", missing: bytes | None = None) -> Expect | None:
    """What an answer says of access; ``missing`` is what a missing project is answered (a 404
    with exactly those bytes is the project hidden from the caller)."""
    if status == 401:
        return Expect.UNAUTHENTICATED
    if status == 403:
        return Expect.DENIED
    if status == 404 and missing is not None and body == missing:
        return Expect.HIDDEN
    if status < 500:
        return Expect.ALLOWED
    return None  # a failure is not an access decision: always a mismatch


def principal_of(row: Caller) -> Principal:
    return Principal(
        name=row.name, kind=row.kind, permissions=row.permissions, project_roles=row.roles, organizations=row.owns
    )


def enrolled(rt: Runtime) -> dict[str, str]:
    """A token for every caller that sends one: each principal enrolled (and revoked, where its
    row says so) through the principals store, once a process (``written_once``)."""

    def enrol_every_caller() -> dict[str, str]:
        tokens: dict[str, str] = {}
        for row in callers():
            if row.token == "none":
                continue
            if row.token == "malformed":
                tokens[row.name] = "not-a-token"
                continue
            token = mint_token()
            rt.principals.create(principal_of(row), token_hash(token))
            if row.token == "revoked":
                rt.principals.revoke(row.name)
            tokens[row.name] = token
        return tokens

    return written_once("authorization matrix callers", rt.env.principals_table, enrol_every_caller)
