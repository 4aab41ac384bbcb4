"""Bearer tokens and what a principal may do."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from knowledge_service.identity.principal import (
    Permission,
    Principal,
    PrincipalKind,
    bearer_token,
    is_well_formed,
    mint_token,
    token_hash,
)


def test_a_minted_token_is_well_formed_and_unique() -> None:
    tokens = {mint_token() for _ in range(50)}
    assert len(tokens) == 50
    assert all(is_well_formed(t) for t in tokens)


def test_the_hash_is_what_is_stored_and_never_the_token() -> None:
    token = mint_token()
    assert token not in token_hash(token)
    assert len(token_hash(token)) == 64


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer  abc ", "abc"),
        ("Basic abc", None),
        ("Bearer", None),
        ("", None),
        (None, None),
        ("abc", None),
    ],
)
def test_bearer_header_parsing(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


@given(st.text(max_size=80))
def test_arbitrary_text_is_never_mistaken_for_a_token(text: str) -> None:
    assert not is_well_formed(text) or (text.startswith("ks_") and len(text) == 46)


def test_an_agent_never_holds_manage_permissions_whatever_its_record_says() -> None:
    agent = Principal(name="bot", kind=PrincipalKind.AGENT, permissions=frozenset(Permission))
    assert agent.holds(Permission.READ_KNOWLEDGE)
    assert not agent.holds(Permission.MANAGE_KNOWLEDGE)
    assert not agent.holds(Permission.MANAGE_SETTINGS)
