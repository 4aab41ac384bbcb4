"""The Lambda authorizer's decision: a bearer token in, a principal (or nothing) out."""

from __future__ import annotations

from functools import lru_cache

from knowledge_service.environment import current_environment
from knowledge_service.identity.principal import Principal, bearer_token, is_well_formed, token_hash
from knowledge_service.storage import aws
from knowledge_service.storage.principals import PrincipalStore


@lru_cache(maxsize=1)
def principal_store() -> PrincipalStore:
    """The one store the authorizer reads, built without the rest of the runtime: the
    authorizer cold-starts in front of every first request, so it imports only this."""
    return PrincipalStore(aws.dynamodb(), current_environment().principals_table)


def principal_for(authorization: str | None, principals: PrincipalStore) -> Principal | None:
    """The active principal the header's token stands for, or None (one answer for every failure)."""
    token = bearer_token(authorization)
    if token is None or not is_well_formed(token):
        return None
    record = principals.by_token_hash(token_hash(token))
    if record is None or not record.active:
        return None
    return record.principal()
