"""A request the pages or verbs surface has no route for is refused in that surface's shape.

API Gateway's own answer to a method or a path no resource answers is one static template
(``MISSING_AUTHENTICATION_TOKEN``: the ``/knowledge`` envelope) on every surface. So that a
pages client reads problem+json and a verbs client ``{error, code}`` there too, every resource
of those two surfaces also takes ``ANY`` (an exact method still wins) and each surface's root
has a greedy catch-all, all sent to the surface's own function, whose resolver answers the
miss before any access check. Called through the in-process gateway built from
``template.yaml``, as a deployed API routes them.
"""

from __future__ import annotations

import pytest

from devstack.template import Template
from tests.pages.conftest import KB, Client

SURFACES = {"PagesFunction": "/api/v1/projects/{id}/kb", "VerbsFunction": "/v"}


def _resources(function: str) -> set[str]:
    return {route.path for route in Template().routes() if route.function == function and route.method != "ANY"}


@pytest.mark.parametrize("function", sorted(SURFACES))
def test_every_resource_of_the_surface_takes_any_method_to_its_own_function(function: str) -> None:
    any_method = {route.path for route in Template().routes() if route.method == "ANY" and route.function == function}
    root = SURFACES[function]
    assert any_method == _resources(function) | {root, f"{root}/{{proxy+}}"}


@pytest.mark.parametrize(
    ("method", "target"),
    [
        ("PATCH", f"{KB}/pages/a.md"),
        ("POST", f"{KB}/pages"),
        ("PUT", f"{KB}/stats"),
        ("POST", f"{KB}/search"),
        ("DELETE", f"{KB}/promote"),
        ("GET", KB),
        ("GET", f"{KB}/unknown"),
        ("POST", f"{KB}/unknown/deeper/still"),
    ],
)
@pytest.mark.parametrize("token", ["admin", None])
def test_a_pages_miss_is_problem_json_not_found_before_any_access_check(
    admin: Client, method: str, target: str, token: str | None
) -> None:
    answer = admin.call(method, target, token=None if token else "")
    assert answer.status == 404, answer.body
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.body["code"] == "not_found"
    assert answer.body["status"] == 404


@pytest.mark.parametrize(
    ("method", "target"),
    [
        ("GET", "/v/knowledge.get"),
        ("DELETE", "/v/knowledge.publish"),
        ("POST", "/v"),
        ("POST", "/v/knowledge.unknown"),
        ("GET", "/v/capture.create/extra"),
    ],
)
@pytest.mark.parametrize("token", ["admin", None])
def test_a_verbs_miss_is_error_code_not_found_before_any_access_check(
    admin: Client, method: str, target: str, token: str | None
) -> None:
    answer = admin.call(method, target, json_body={}, token=None if token else "")
    assert answer.status == 404, answer.body
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.body == {"error": "No such verb.", "code": "NotFound"}


def test_a_knowledge_miss_keeps_the_gateways_envelope(admin: Client) -> None:
    answer = admin.call("DELETE", "/knowledge/status")
    assert answer.status == 404
    assert answer.body == {"success": False, "message": "No such route.", "data": None, "code": "not_found"}
