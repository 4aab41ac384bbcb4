"""The verbs' authorization matrix: Member, Admin, Owner × each verb, agents at L0, L1, L2,
through the function as API Gateway calls it (the in-process gateway), as tokens arrive.

Generated from the verb catalogue: a verb added tomorrow is covered. "Allowed" means the
call got past the front door: any answer but 401, 403 or a 5xx (the bodies here are empty,
so an allowed call is answered 400, never written).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from devstack.gateway import Gateway
from devstack.lambdas import FunctionHost
from devstack.template import Template
from knowledge_service.domain.verbs.catalogue import VERBS, Autonomy, Verb, WorkspaceRole
from knowledge_service.identity.principal import (
    AGENT_FORBIDDEN,
    Permission,
    Principal,
    PrincipalKind,
    ProjectRole,
    mint_token,
    token_hash,
)
from knowledge_service.runtime import Runtime

WORKSPACE = "falcon"  # organization colony
HUMAN = frozenset({Permission.READ_KNOWLEDGE, Permission.WRITE_KNOWLEDGE, Permission.MANAGE_KNOWLEDGE})
AGENT = HUMAN - AGENT_FORBIDDEN


@dataclass(frozen=True)
class Row:
    name: str
    role: WorkspaceRole | None
    autonomy: Autonomy | None = None  # None: a human
    token: bool = True

    def principal(self) -> Principal:
        roles = {}
        if self.role is WorkspaceRole.MEMBER:
            roles = {WORKSPACE: ProjectRole.VIEWER}
        elif self.role is WorkspaceRole.ADMIN:
            roles = {WORKSPACE: ProjectRole.ADMIN}
        agent = self.autonomy is not None
        return Principal(
            name=self.name,
            kind=PrincipalKind.AGENT if agent else PrincipalKind.HUMAN,
            permissions=AGENT if agent else HUMAN,
            project_roles=roles,
            organizations=frozenset({"colony"}) if self.role is WorkspaceRole.OWNER else frozenset(),
            autonomy=self.autonomy.name if agent and self.autonomy is not None else None,
        )


ROWS = [
    Row("no-token", None, token=False),
    Row("stranger", None),
    Row("member", WorkspaceRole.MEMBER),
    Row("admin", WorkspaceRole.ADMIN),
    Row("owner", WorkspaceRole.OWNER),
    *(Row(f"agent-{level.name}", WorkspaceRole.ADMIN, level) for level in Autonomy),
]


def expected(verb: Verb, row: Row) -> str:
    if not row.token:
        return "401"
    if row.role is None or row.role < verb.permission:
        return "403"
    agent_refused = row.autonomy is not None and (
        verb.installation_permission in AGENT_FORBIDDEN or row.autonomy < verb.risk.autonomy
    )
    if agent_refused:
        return "403"
    return "allowed"


def outcome(status: int) -> str:
    return {401: "401", 403: "403"}.get(status, "allowed" if status < 500 else f"failed {status}")


@pytest.fixture
def gateway(aws: Runtime) -> tuple[Gateway, dict[str, str]]:
    aws.projects.create(WORKSPACE, "colony")
    tokens = {}
    for row in ROWS:
        if row.token:
            token = mint_token()
            aws.principals.create(row.principal(), token_hash(token))
            tokens[row.name] = token
    template = Template()
    return Gateway.from_template(template, FunctionHost(template).invoke), tokens


@pytest.mark.parametrize("verb", sorted(VERBS.values(), key=lambda v: v.name), ids=lambda v: v.name)
def test_every_caller_gets_what_the_verb_declares(gateway: tuple[Gateway, dict[str, str]], verb: Verb) -> None:
    app, tokens = gateway
    mismatches = []
    for row in ROWS:
        headers = [("Content-Type", "application/json")]
        if row.name in tokens:
            headers.append(("Authorization", f"Bearer {tokens[row.name]}"))
        status = app.handle("POST", f"/v/{verb.name}?workspace={WORKSPACE}", headers, b"{}").status
        if outcome(status) != expected(verb, row):
            mismatches.append(f"{row.name}: expected {expected(verb, row)}, answered {status}")
    assert mismatches == []


def test_the_matrix_holds_the_issues_rows() -> None:
    assert {r.name for r in ROWS} >= {"member", "admin", "owner", "agent-L0", "agent-L1", "agent-L2"}
    assert expected(VERBS["knowledge.distil"], Row("agent-L0", WorkspaceRole.ADMIN, Autonomy.L0)) == "403"
    assert expected(VERBS["knowledge.publish"], Row("member", WorkspaceRole.MEMBER)) == "403"
