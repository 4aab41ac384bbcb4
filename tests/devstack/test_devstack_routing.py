"""The local gateway's resource matching: API Gateway's rules, on the template's routes."""

from __future__ import annotations

from pathlib import Path

import pytest

from devstack.gateway import RouteTable
from devstack.template import Route, Template


def route(method: str, path: str, function: str = "Fn") -> Route:
    return Route(function, method, path, Path("."), "app.lambda_handler")


TABLE = RouteTable(
    [
        route("GET", "/knowledge/items/{id}", "Item"),
        route("GET", "/knowledge/items/latest", "Latest"),
        route("GET", "/knowledge/items/{id}/versions/{version}", "Version"),
        route("GET", "/files/{proxy+}", "Files"),
        route("GET", "/files/readme", "Readme"),
        route("ANY", "/anything/{proxy+}", "AnyGreedy"),
        route("DELETE", "/anything/{proxy+}", "DeleteGreedy"),
        route("GET", "/", "Root"),
    ]
)


def test_every_template_route_matches_its_own_path_and_method() -> None:
    template = Template()
    table = RouteTable(template.routes())
    for declared in template.routes():
        concrete = declared.path.replace("{proxy+}", "a/b").replace("{", "").replace("}", "")
        matched = table.match(declared.method, concrete)
        assert matched is not None, declared
        assert matched.route == declared


def test_a_path_parameter_is_one_segment_decoded() -> None:
    matched = TABLE.match("GET", "/knowledge/items/a%20b")
    assert matched is not None
    assert matched.route.function == "Item"
    assert matched.path_parameters == {"id": "a b"}


def test_a_static_segment_beats_a_parameter() -> None:
    matched = TABLE.match("GET", "/knowledge/items/latest")
    assert matched is not None
    assert matched.route.function == "Latest"


def test_several_parameters_are_all_captured() -> None:
    matched = TABLE.match("GET", "/knowledge/items/k1/versions/3")
    assert matched is not None
    assert (matched.route.function, matched.path_parameters) == ("Version", {"id": "k1", "version": "3"})


@pytest.mark.parametrize(
    ("path", "proxy"),
    [("/files/a", "a"), ("/files/a/b/c.txt", "a/b/c.txt"), ("/files/dir/with%2Fslash", "dir/with/slash")],
)
def test_a_greedy_parameter_takes_every_remaining_segment(path: str, proxy: str) -> None:
    matched = TABLE.match("GET", path)
    assert matched is not None
    assert (matched.route.function, matched.path_parameters) == ("Files", {"proxy": proxy})


def test_a_greedy_parameter_needs_at_least_one_segment() -> None:
    assert TABLE.match("GET", "/files") is None
    assert TABLE.match("GET", "/files/") is None


def test_a_static_route_beats_a_greedy_one() -> None:
    matched = TABLE.match("GET", "/files/readme")
    assert matched is not None
    assert matched.route.function == "Readme"


def test_any_matches_every_method_but_an_exact_method_wins() -> None:
    assert TABLE.match("PATCH", "/anything/x").route.function == "AnyGreedy"  # type: ignore[union-attr]
    assert TABLE.match("DELETE", "/anything/x").route.function == "DeleteGreedy"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/knowledge/items/1"), ("GET", "/knowledge"), ("GET", "/knowledge/items/1/extra"), ("GET", "/nowhere")],
)
def test_no_route_for_a_wrong_method_or_path(method: str, path: str) -> None:
    assert TABLE.match(method, path) is None


def test_a_trailing_slash_and_the_root() -> None:
    assert TABLE.match("GET", "/knowledge/items/latest/").route.function == "Latest"  # type: ignore[union-attr]
    assert TABLE.match("GET", "/").route.function == "Root"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("path", "proxy"), [("/files/a//b.txt", "a//b.txt"), ("/files//a.txt", "/a.txt"), ("/files/a///b/", "a///b")]
)
def test_an_empty_segment_inside_a_greedy_parameter_is_the_parameters_own(path: str, proxy: str) -> None:
    matched = TABLE.match("GET", path)
    assert matched is not None
    assert (matched.route.function, matched.path_parameters) == ("Files", {"proxy": proxy})


@pytest.mark.parametrize(
    "path", ["/knowledge//items/1", "//knowledge/items/1", "/knowledge/items//1", "//files/a", "/files//"]
)
def test_an_empty_segment_in_a_routes_fixed_part_is_no_route(path: str) -> None:
    assert TABLE.match("GET", path) is None
