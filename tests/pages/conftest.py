"""Pages through the in-process API Gateway: the authorizer first, then the pages function."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from devstack.gateway import Gateway
from devstack.lambdas import FunctionHost
from devstack.template import Template
from knowledge_service.domain.pages.tree import forget_walks
from knowledge_service.identity.principal import (
    Permission,
    Principal,
    PrincipalKind,
    ProjectRole,
    mint_token,
    token_hash,
)
from knowledge_service.runtime import Runtime

KB = "/api/v1/projects/falcon/kb"


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw) if self.raw else None


class Client:
    def __init__(self, gateway: Gateway, token: str | None):
        self.gateway = gateway
        self.token = token

    def call(
        self,
        method: str,
        target: str,
        *,
        json_body: Any = None,
        text: str | bytes | None = None,
        content_type: str | None = None,
        token: str | None = None,
    ) -> Answer:
        headers: list[tuple[str, str]] = []
        auth = token if token is not None else self.token
        if auth:
            headers.append(("Authorization", f"Bearer {auth}"))
        body = b""
        default = None
        if json_body is not None:
            body, default = json.dumps(json_body).encode(), "application/json"
        elif text is not None:
            body, default = (text.encode() if isinstance(text, str) else text), "text/markdown"
        media = content_type if content_type is not None else default
        if media:  # "" sends no Content-Type at all
            headers.append(("Content-Type", media))
        answer = self.gateway.handle(method, target, headers, body)
        return Answer(answer.status, {k.lower(): v for k, v in answer.headers}, answer.body)

    def put(self, path: str, content: str, **kwargs: Any) -> Answer:
        return self.call("PUT", f"{KB}/pages/{path}", json_body={"content": content, **kwargs})

    def get(self, target: str) -> Answer:
        return self.call("GET", target)


@dataclass
class Pages:
    runtime: Runtime
    gateway: Gateway
    tokens: dict[str, str]

    def as_(self, name: str) -> Client:
        return Client(self.gateway, self.tokens.get(name))


PRINCIPALS = {
    "admin": Principal(name="ada", permissions=frozenset(Permission), project_roles={"falcon": ProjectRole.ADMIN}),
    "owner": Principal(name="olga", permissions=frozenset(Permission), organizations=frozenset({"colony"})),
    "operator": Principal(
        name="otto", permissions=frozenset(Permission), project_roles={"falcon": ProjectRole.OPERATOR}
    ),
    "other-admin": Principal(
        name="eve", permissions=frozenset(Permission), project_roles={"elsewhere": ProjectRole.ADMIN}
    ),
    "agent": Principal(
        name="bot",
        kind=PrincipalKind.AGENT,
        permissions=frozenset(Permission),
        project_roles={"falcon": ProjectRole.ADMIN},
    ),
}


@pytest.fixture
def pages(aws: Runtime) -> Iterator[Pages]:
    forget_walks()
    aws.projects.create("falcon", "colony")
    aws.projects.create("elsewhere", "other-org")
    tokens = {}
    for key, principal in PRINCIPALS.items():
        token = mint_token()
        aws.principals.create(principal, token_hash(token))
        tokens[key] = token
    template = Template()
    yield Pages(aws, Gateway.from_template(template, FunctionHost(template).invoke), tokens)
    forget_walks()


@pytest.fixture
def admin(pages: Pages) -> Client:
    return pages.as_("admin")
