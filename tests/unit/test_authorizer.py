"""The Lambda authorizer: one answer for every bad token, the principal for a good one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devstack.lambdas import FakeLambdaContext, load_handler
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
METHOD_ARN = "arn:aws:execute-api:us-east-1:123456789012:localapi/v1/GET/knowledge/status"


def authorize(authorization: str | None) -> dict[str, Any]:
    function = TEMPLATE.functions()["AuthorizerFunction"]["Properties"]
    handler = load_handler(TEMPLATE.path.parent / function["CodeUri"], function["Handler"], "lambda_AuthorizerFunction")
    headers = {} if authorization is None else {"Authorization": authorization}
    event = {
        "type": "REQUEST",
        "methodArn": METHOD_ARN,
        "resource": "/knowledge/status",
        "path": "/knowledge/status",
        "httpMethod": "GET",
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {"accountId": "123456789012", "apiId": "localapi", "stage": "v1"},
    }
    return handler(event, FakeLambdaContext("AuthorizerFunction"))


@pytest.fixture
def alice(aws: Runtime) -> str:
    token = mint_token()
    aws.projects.create("falcon", "colony")
    aws.principals.create(
        Principal(
            name="alice",
            permissions=frozenset({Permission.READ_KNOWLEDGE}),
            project_roles={"falcon": ProjectRole.VIEWER},
        ),
        token_hash(token),
    )
    return token


def test_a_valid_token_is_allowed_with_its_principal_in_the_context(alice: str) -> None:
    answer = authorize(f"Bearer {alice}")
    assert answer["principalId"] == "alice"
    statement = answer["policyDocument"]["Statement"][0]
    assert statement["Effect"] == "Allow"
    principal = Principal.model_validate(json.loads(answer["context"]["principal"]))
    assert principal.role_in("falcon") is ProjectRole.VIEWER
    assert alice not in json.dumps(answer)


@pytest.mark.parametrize(
    "header", [None, "", "Bearer", "Basic abc", "Bearer not-a-token", "Bearer ks_" + "A" * 43, "Bearer ks_" + "A" * 44]
)
def test_every_bad_token_is_the_same_unauthorized(alice: str, header: str | None) -> None:
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        authorize(header)


def test_a_revoked_token_is_unauthorized_on_its_next_request(aws: Runtime, alice: str) -> None:
    assert authorize(f"Bearer {alice}")["principalId"] == "alice"
    aws.principals.revoke("alice")
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        authorize(f"Bearer {alice}")


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
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        authorize(f"Bearer {look_alike}")


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
