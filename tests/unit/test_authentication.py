"""Authentication in the function: one answer for every bad token, the caller for a good one.

There is no API authorizer: each function reads the caller's principal itself (for a read,
in the same BatchGetItem as its scope), so these call the functions as API Gateway would.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, strategies as st

from devstack.events import rest_event
from devstack.lambdas import FakeLambdaContext, load_handler
from devstack.metering import aws_calls
from devstack.template import Template
from knowledge_service.identity.principal import (
    Permission,
    Principal,
    ProjectRole,
    is_well_formed,
    mint_token,
    token_hash,
)
from knowledge_service.runtime import Runtime

TEMPLATE = Template()


class Refused(Exception):
    """The function answered the envelope's 401 unauthenticated."""


def call(authorization: str | None, function: str, path: str, query: dict[str, str] | None = None) -> Any:
    props = TEMPLATE.functions()[function]["Properties"]
    handler = load_handler(TEMPLATE.path.parent / props["CodeUri"], props["Handler"], f"lambda_{function}")
    headers = {} if authorization is None else {"Authorization": authorization}
    event = rest_event("GET", path, resource=path, headers=headers, query=query)
    response = handler(event, FakeLambdaContext(function))
    body = json.loads(response["body"])
    if response["statusCode"] == 401:
        assert body == {
            "success": False,
            "message": "A valid bearer token is required.",
            "data": None,
            "code": "unauthenticated",
        }
        raise Refused
    return response["statusCode"], body


def search(authorization: str | None) -> tuple[int, Any]:
    """A read: its principal comes in the same BatchGetItem as its scope."""
    result: tuple[int, Any] = call(
        authorization, "ReadsFunction", "/knowledge/search", {"q": "launch", "project": "falcon"}
    )
    return result


def engine(authorization: str | None) -> tuple[int, Any]:
    """An installation route: its principal is read alone."""
    result: tuple[int, Any] = call(authorization, "StatusFunction", "/knowledge/engine")
    return result


@pytest.fixture
def alice(knowledge_on: Runtime) -> str:
    token = mint_token()
    knowledge_on.principals.create(
        Principal(
            name="alice",
            permissions=frozenset({Permission.READ_KNOWLEDGE}),
            project_roles={"falcon": ProjectRole.VIEWER},
        ),
        token_hash(token),
    )
    return token


def test_given_a_valid_token_when_it_reads_then_it_is_answered_as_its_principal(alice: str) -> None:
    status, body = search(f"Bearer {alice}")
    assert status == 200, body
    assert alice not in json.dumps(body)
    status, body = engine(f"Bearer {alice}")  # alice holds no read_status: known, and refused as such
    assert (status, body["code"]) == (403, "permission_denied")


BAD_HEADERS = [None, "", "Bearer", "Basic abc", "Bearer not-a-token", "Bearer ks_" + "A" * 43, "Bearer ks_" + "A" * 44]


@pytest.mark.parametrize("header", BAD_HEADERS)
@pytest.mark.parametrize("route", [search, engine], ids=["read", "installation"])
def test_every_bad_token_is_the_same_unauthenticated(alice: str, header: str | None, route: Any) -> None:
    with pytest.raises(Refused):
        route(header)


@pytest.mark.parametrize("header", [None, "", "Basic abc", "Bearer not-a-token"])
def test_a_request_without_a_well_formed_token_is_refused_before_any_read(alice: str, header: str | None) -> None:
    with aws_calls() as counts, pytest.raises(Refused):
        search(header)
    assert counts == {}


@pytest.mark.parametrize("route", [search, engine], ids=["read", "installation"])
def test_a_revoked_token_is_unauthenticated_on_its_next_request(aws: Runtime, alice: str, route: Any) -> None:
    assert route(f"Bearer {alice}")[0] in {200, 403}
    aws.principals.revoke("alice")
    with pytest.raises(Refused):
        route(f"Bearer {alice}")


def test_a_read_authenticates_in_the_same_dynamodb_request_as_its_scope(alice: str) -> None:
    search(f"Bearer {alice}")  # warm: the credential is cached
    with aws_calls() as counts:
        assert search(f"Bearer {alice}")[0] == 200
    assert counts == {"dynamodb:BatchGetItem": 1}


def test_only_the_hash_is_stored(aws: Runtime, alice: str) -> None:
    (record,) = aws.principals.all()
    assert record.token_hash == token_hash(alice)
    assert alice not in record.model_dump_json()


def _one_character_changed(token: str, position: int) -> str:
    """A well-formed token equal to ``token`` everywhere but at ``position``."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    replacement = next(c for c in alphabet if c != token[position])
    return token[:position] + replacement + token[position + 1 :]


@pytest.mark.parametrize("position", [3, 20, 30, 44, 45])
def test_a_well_formed_token_sharing_a_long_prefix_with_a_valid_one_is_unauthorized(alice: str, position: int) -> None:
    look_alike = _one_character_changed(alice, position)
    assert look_alike != alice and is_well_formed(look_alike)
    with pytest.raises(Refused):
        search(f"Bearer {look_alike}")


@given(position=st.integers(min_value=3, max_value=45), data=st.data())
def test_the_hash_covers_every_character_of_the_token(position: int, data: st.DataObject) -> None:
    token = mint_token()
    changed = data.draw(
        st.sampled_from(
            [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" if c != token[position]]
        )
    )
    other = token[:position] + changed + token[position + 1 :]
    assert is_well_formed(other)
    assert token_hash(other) != token_hash(token)


@pytest.mark.parametrize("body", ["{", "[" * 100 + "]" * 100, '{"project": "falcon", "query": 1e999999}'])
@pytest.mark.parametrize("token", [None, "valid"])
def test_an_unreadable_body_is_told_after_authentication(alice: str, body: str, token: str | None) -> None:
    """The hook looks into a JSON body for the project to read with the principal; a body
    it cannot read is the route's 400, and only for a caller who is authenticated."""
    props = TEMPLATE.functions()["ReadsFunction"]["Properties"]
    handler = load_handler(TEMPLATE.path.parent / props["CodeUri"], props["Handler"], "lambda_ReadsFunction")
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {alice}"
    event = rest_event("POST", "/knowledge/retrieve", resource="/knowledge/retrieve", headers=headers, body=body)
    response = handler(event, FakeLambdaContext("ReadsFunction"))
    assert response["statusCode"] == (400 if token else 401), response["body"]
