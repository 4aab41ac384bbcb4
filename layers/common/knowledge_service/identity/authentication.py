"""Authentication: a bearer token in, an active principal (or one refusal) out.

Every function authenticates its own request (there is no API Gateway authorizer: see
docs/architecture.md). A header that carries no well-formed token is refused before any
read; a well-formed one is looked up by its SHA-256 with a strongly consistent read, so a
revoked token fails on its very next request. Every failure is the same answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from knowledge_service.identity.principal import Principal, bearer_token, header, is_well_formed, token_hash


def presented_token_hash(headers: Mapping[str, str] | None) -> str | None:
    """The hash of the well-formed bearer token ``Authorization`` carries, or None."""
    token = bearer_token(header(headers, "Authorization"))
    if token is None or not is_well_formed(token):
        return None
    return token_hash(token)


class _Record(Protocol):
    @property
    def active(self) -> bool: ...

    def principal(self) -> Principal: ...


class _Principals(Protocol):
    def by_token_hash(self, token_hash: str) -> _Record | None: ...


def principal_for(authorization: str | None, principals: _Principals) -> Principal | None:
    """The active principal the header's token stands for, or None (one answer for every failure)."""
    hashed = presented_token_hash({"Authorization": authorization} if authorization is not None else None)
    record = principals.by_token_hash(hashed) if hashed is not None else None
    if record is None or not record.active:
        return None
    return record.principal()
