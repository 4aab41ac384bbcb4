"""Requests the edge cannot read are the caller's 400, after access is held, never a 500."""

from __future__ import annotations

import pytest

from knowledge_service.identity.principal import Permission, ProjectRole
from knowledge_service.runtime import Runtime
from tests.conftest import Api, principal


@pytest.mark.parametrize(
    ("content_type", "body", "field"),
    [
        ("application/x-www-form-urlencoded", "knowledge_auto_study=on", "Content-Type"),
        ("text/plain", "knowledge_auto_study: on", "Content-Type"),
        ("application/json", "{not json", "body"),
    ],
)
def test_an_unreadable_body_is_a_400_naming_what_is_wrong(
    api: Api, aws: Runtime, content_type: str, body: str, field: str
) -> None:
    answer = api.call("POST", "/settings", body=body, headers={"Content-Type": content_type})
    assert answer.status == 400, answer.raw
    assert answer.body["code"] == "bad_request"
    assert answer.body["message"].startswith(f"{field}:")


def test_an_unreadable_body_from_a_caller_without_the_permission_is_still_403(api: Api, aws: Runtime) -> None:
    reader = principal("rita", Permission.READ_STATUS)
    answer = api.call("POST", "/settings", reader, body="{not json", headers={"Content-Type": "application/json"})
    assert answer.status == 403


def test_an_unknown_field_that_is_not_a_name_is_not_echoed(api: Api, aws: Runtime) -> None:
    answer = api.call("POST", "/settings", body={"<script>alert(1)</script>": True})
    assert answer.status == 400
    assert "<script>" not in answer.raw
    assert answer.body["message"].startswith("body:")


def test_a_credential_that_cannot_travel_in_a_header_is_refused(api: Api, aws: Runtime) -> None:
    answer = api.call("POST", "/settings", body={"knowledge_forager_token": "naïve token"})
    assert answer.status == 400
    assert answer.body["message"].startswith("knowledge_forager_token:")
    assert "naïve" not in answer.raw
    assert aws.credentials.read() is None


def test_a_route_resolves_its_declared_standing_whichever_resolver_included_its_router_last(
    api: Api, knowledge_on: Runtime
) -> None:
    """A router belongs to the last resolver that included it (the OpenAPI document's, the
    matrix's); the function's own resolver must still give its routes their declaration."""
    from knowledge_service.edge.catalog import full_knowledge_api

    assert api.call("POST", "/knowledge/feed/sync", query={"project": "falcon"}).status == 200  # loads the function
    full_knowledge_api()  # then every router is included into another resolver
    answer = api.call("POST", "/knowledge/feed/sync", query={"project": "falcon"})
    assert answer.status == 200, answer.raw
    viewer = principal("vic", Permission.MANAGE_KNOWLEDGE, roles={"falcon": ProjectRole.VIEWER})
    refused = api.call("POST", "/knowledge/feed/sync", viewer, query={"project": "falcon"})
    assert refused.status == 403  # operator standing, as declared
