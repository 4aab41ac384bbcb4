"""Every body route, every unreadable body: the caller's 400 naming what is wrong, never a 500.

Generated from the route catalog, so a body route added tomorrow is held here too: bodies
too deep, too large or holding a number too long (which Python's ``json`` turns into
``RecursionError`` and ``ValueError``); a JSON object sent as form encoding, as ``curl -d``
sends it; a body missing one required field at a time; and paths no route matches, whatever
their slashes.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, strategies as st

from knowledge_service.edge.body import (
    MAX_BODY_BYTES,
    MAX_DEPTH,
    MAX_NUMBER_CHARACTERS,
    UnreadableBody,
    as_json_request,
    read_json,
)
from knowledge_service.edge.catalog import RouteInfo, knowledge_routes
from knowledge_service.identity.principal import Permission, Principal
from knowledge_service.runtime import Runtime
from tests.authorization_matrix import request_for
from tests.conftest import ADMIN, Answer, Api, principal

BODY_ROUTES = [route for route in knowledge_routes() if route.body_model is not None]
ROUTE_IDS = {"ids": lambda r: f"{r.method} {r.path}"}
JSON = {"Content-Type": "application/json"}


def call(
    api: Api, route: RouteInfo, body: str, headers: dict[str, str] | None = None, who: Principal = ADMIN
) -> Answer:
    target, _ = request_for(route)
    path, _, query = target.partition("?")
    params = dict(pair.split("=", 1) for pair in query.split("&"))
    return api.call(route.method, path, who, body=body, query=params, resource=route.path, headers=headers)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


UNREADABLE = {
    "nested 990 deep": lambda: '{"a": ' + nested(990) + "}",
    "nested one past the bound": lambda: '{"a": ' + nested(MAX_DEPTH) + "}",
    "an integer of 5,000 digits": lambda: '{"a": ' + "1" * 5000 + "}",
    "an integer one digit past the bound": lambda: '{"a": ' + "9" * (MAX_NUMBER_CHARACTERS + 1) + "}",
    "a float too large": lambda: '{"a": 1e999}',
    "NaN": lambda: '{"a": NaN}',
    "larger than the bound": lambda: '{"a": "' + "x" * MAX_BODY_BYTES + '"}',
}


def test_the_walk_finds_every_body_route() -> None:
    assert {f"{r.method} {r.path}" for r in BODY_ROUTES} >= {
        "POST /settings",
        "POST /knowledge/project-map",
        "POST /knowledge/bases",
        "POST /knowledge/retrieve",
    }


@pytest.mark.parametrize("kind", sorted(UNREADABLE))
@pytest.mark.parametrize("route", BODY_ROUTES, **ROUTE_IDS)
def test_a_body_past_the_bounds_is_a_400_naming_the_body(
    api: Api, knowledge_on: Runtime, route: RouteInfo, kind: str
) -> None:
    answer = call(api, route, UNREADABLE[kind](), JSON)
    assert answer.status == 400, answer.raw
    assert answer.body["code"] == "bad_request"
    assert answer.body["message"].startswith("body: ")


@pytest.mark.parametrize("route", BODY_ROUTES, **ROUTE_IDS)
def test_a_body_past_the_bounds_from_a_caller_without_the_permission_is_still_403(
    api: Api, knowledge_on: Runtime, route: RouteInfo
) -> None:
    nobody = principal("nora")
    answer = call(api, route, UNREADABLE["nested 990 deep"](), JSON, who=nobody)
    assert answer.status == 403, answer.raw


@pytest.mark.parametrize("route", BODY_ROUTES, **ROUTE_IDS)
def test_a_key_given_twice_is_a_400_naming_the_key(api: Api, knowledge_on: Runtime, route: RouteInfo) -> None:
    """JSON's parsers disagree on which of two equal keys wins (issue 39: the last won, silently)."""
    answer = call(api, route, '{"project": "falcon", "project": "elsewhere"}', JSON)
    assert (answer.status, answer.body["code"]) == (400, "bad_request"), answer.raw
    assert answer.body["message"] == "project: is given twice in one object."


def test_a_key_given_twice_deep_in_a_body_is_named_and_one_that_is_no_name_is_not_echoed() -> None:
    with pytest.raises(UnreadableBody) as nested:
        read_json('{"files": [{"name": "a", "size_bytes": 1, "name": "b"}]}')
    assert nested.value.field == "name"
    with pytest.raises(UnreadableBody) as odd:
        read_json('{"\\u0000x": 1, "\\u0000x": 2}')
    assert odd.value.field == "body"


def test_equal_keys_in_different_objects_are_read() -> None:
    assert read_json('{"a": {"k": 1}, "b": {"k": 2}}') == {"a": {"k": 1}, "b": {"k": 2}}


def test_a_body_at_the_bounds_is_read() -> None:
    body = '{"a": ' + nested(MAX_DEPTH - 1) + ', "b": ' + "9" * MAX_NUMBER_CHARACTERS + "}"
    assert read_json(body)["b"] == int("9" * MAX_NUMBER_CHARACTERS)


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = json.dumps({"q": "[" * 500 + '\\"{' * 100})
    assert read_json(text) == json.loads(text)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=30,
    )
)
def test_any_json_within_the_bounds_reads_as_json_loads_reads_it(value: object) -> None:
    text = json.dumps(value)
    assert read_json(text) == json.loads(text)


@given(st.integers(min_value=MAX_DEPTH + 1, max_value=3000))
def test_any_depth_past_the_bound_is_refused_never_a_recursion_error(depth: int) -> None:
    with pytest.raises(UnreadableBody, match=r"^body: is nested deeper than"):
        read_json(nested(depth))


# ------------------------------------------------------------------ content type


@pytest.mark.parametrize(
    "content_type",
    [None, "application/x-www-form-urlencoded", "text/plain", "multipart/form-data", "application/json; charset=utf-8"],
)
def test_a_json_object_is_read_as_json_whatever_type_it_declares(
    api: Api, knowledge_on: Runtime, content_type: str | None
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    answer = api.call("POST", "/settings", body='{"knowledge_auto_study": "suggest"}', headers=headers)
    assert answer.status == 200, answer.raw
    assert answer.body["data"]["knowledge_auto_study"] == "suggest"


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/x-www-form-urlencoded", "knowledge_auto_study=suggest"),
        ("multipart/form-data; boundary=x", '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--x--\r\n'),
        ("text/plain", "knowledge_auto_study: suggest"),
    ],
)
def test_a_body_that_is_not_json_under_another_type_is_a_400_naming_the_content_type(
    api: Api, knowledge_on: Runtime, content_type: str, body: str
) -> None:
    answer = api.call("POST", "/settings", body=body, headers={"Content-Type": content_type})
    assert answer.status == 400, answer.raw
    assert answer.body["message"] == "Content-Type: must be application/json."


def test_only_a_body_that_is_a_json_object_is_declared_json() -> None:
    form = {"body": "a=b", "headers": {"content-type": "application/x-www-form-urlencoded"}}
    assert as_json_request(form) is form
    curl = {"body": ' {"a": 1}', "headers": {"content-type": "application/x-www-form-urlencoded"}}
    assert as_json_request(curl)["headers"] == {"Content-Type": "application/json"}
    assert curl["headers"] == {"content-type": "application/x-www-form-urlencoded"}  # the event is not changed


# ------------------------------------------------------------------ a refusal names its field


def required_fields() -> list[tuple[RouteInfo, str]]:
    cases = []
    for route in BODY_ROUTES:
        assert route.body_model is not None
        cases += [(route, name) for name, field in route.body_model.model_fields.items() if field.is_required()]
    return cases


REQUIRED = required_fields()


def test_the_walk_finds_the_required_fields_of_every_body() -> None:
    assert {(r.path, name) for r, name in REQUIRED} >= {
        ("/knowledge/retrieve", "query"),
        ("/knowledge/project-map", "knowledge_base"),
        ("/knowledge/bases", "name"),
    }


@pytest.mark.parametrize(("route", "field"), REQUIRED, ids=lambda c: c if isinstance(c, str) else c.path)
def test_a_body_missing_one_required_field_is_refused_naming_that_field(
    api: Api, knowledge_on: Runtime, route: RouteInfo, field: str
) -> None:
    _, sample = request_for(route)
    assert sample is not None
    body = json.loads(sample)
    del body[field]
    answer = call(api, route, json.dumps(body), JSON)
    assert answer.status == 400, answer.raw
    assert answer.body["message"].startswith(f"{field}: "), answer.raw


# ------------------------------------------------------------------ a route that takes no body
FORM_BODIES = {("POST", "/knowledge/upload"), ("POST", "/knowledge/preflight")}
OPTIONAL_BODY = {("POST", "/knowledge/entities/{id}/unmerge")}  # `{notes?}` or none
NO_BODY_ROUTES = [
    r
    for r in knowledge_routes()
    if r.body_model is None and (r.method, r.path) not in FORM_BODIES | OPTIONAL_BODY and r.path != "/console"
]
DEEP = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"


def test_the_walk_finds_the_routes_that_take_no_body() -> None:
    named = {("POST", p) for p in ("/knowledge/session", "/knowledge/seed", "/knowledge/feed/sync")}
    assert named | {("POST", "/knowledge/changes/scan")} <= {(r.method, r.path) for r in NO_BODY_ROUTES}


@pytest.mark.parametrize("body", ['{"a": 1}', "[]", "null", "x", DEEP], ids=["object", "array", "null", "text", "deep"])
@pytest.mark.parametrize("route", NO_BODY_ROUTES, **ROUTE_IDS)
def test_a_route_that_takes_no_body_refuses_one(api: Api, knowledge_on: Runtime, route: RouteInfo, body: str) -> None:
    """Issue 39: POST /knowledge/session, seed, feed/sync and changes/scan took any body, 100k deep included."""
    answer = call(api, route, body, JSON)
    assert (answer.status, answer.body["code"]) == (400, "bad_request"), answer.raw
    assert answer.body["message"].startswith("body: is not taken by this route"), answer.raw


@pytest.mark.parametrize("route", [r for r in NO_BODY_ROUTES if r.method == "POST"], **ROUTE_IDS)
def test_an_empty_object_or_nothing_is_no_body(api: Api, knowledge_on: Runtime, route: RouteInfo) -> None:
    for body in ("", "{}", " { } "):
        answer = call(api, route, body, JSON)
        assert not (answer.status == 400 and "not taken" in answer.raw), (body, answer.raw)


def test_a_body_sent_to_a_route_that_takes_none_is_still_403_without_the_permission(
    api: Api, knowledge_on: Runtime
) -> None:
    route = next(r for r in NO_BODY_ROUTES if r.path == "/knowledge/seed")
    answer = call(api, route, DEEP, JSON, who=principal("rita", Permission.READ_KNOWLEDGE))
    assert answer.status == 403, answer.raw


# ------------------------------------------------------------------ paths no route matches


def unmatched_paths() -> list[tuple[str, str]]:
    """Every route's path with one slash doubled, at each place."""
    paths = []
    for route in knowledge_routes():
        concrete = re.sub(r"\{[^}]+\}", "ki_7f2e2c7987cafc54", route.path)
        slashes = [i for i, ch in enumerate(concrete) if ch == "/"]
        paths += [(route.method, concrete[:i] + "/" + concrete[i:]) for i in slashes]
    return paths


@pytest.mark.parametrize(("method", "path"), unmatched_paths())
def test_a_path_no_route_matches_is_not_found_whatever_its_slashes(
    api: Api, knowledge_on: Runtime, method: str, path: str
) -> None:
    resource = next(
        r.path
        for r in knowledge_routes()
        if r.method == method and re.sub(r"/+", "/", path) == re.sub(r"\{[^}]+\}", "ki_7f2e2c7987cafc54", r.path)
    )
    answer = api.call(
        method, path, resource=resource, query={"project": "falcon"}, body="{}" if method == "POST" else None
    )
    assert answer.status == 404, answer.raw
    assert answer.body == {"success": False, "message": "No such route.", "data": None, "code": "not_found"}


def test_an_unmatched_path_is_not_found_for_a_caller_without_any_permission(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call("GET", "/knowledge//status", principal("nora"), resource="/knowledge/status")
    assert answer.status == 404, answer.raw


def test_a_matched_route_still_refuses_a_caller_without_its_permission(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call("GET", "/knowledge/status", principal("rita", Permission.READ_KNOWLEDGE))
    assert answer.status == 403
