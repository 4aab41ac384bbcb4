"""The Lambda authorizer's decision: a bearer token in, a principal (or nothing) out."""

from __future__ import annotations

from knowledge_service.identity.principal import Principal, bearer_token, is_well_formed, token_hash
from knowledge_service.storage.principals import PrincipalStore


def principal_for(authorization: str | None, principals: PrincipalStore) -> Principal | None:
    """The active principal the header's token stands for, or None (one answer for every failure)."""
    token = bearer_token(authorization)
    if token is None or not is_well_formed(token):
        return None
    record = principals.by_token_hash(token_hash(token))
    if record is None or not record.active:
        return None
    return record.principal()
