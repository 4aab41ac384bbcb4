"""A page path is decided on the bytes the caller sent: percent-encoding that is not UTF-8,
or that encodes a surrogate, is ``invalid_argument`` (never folded into U+FFFD, where two
spellings would name one page); an empty component inside the page path resolves like ``.``
(seed 001, Paths) while the route's fixed part with one stays a 404 (the "Doubled slashes"
ruling)."""

from __future__ import annotations

import pytest

from tests.pages.conftest import KB, Client
from tests.pages.test_pages_routes import problem_of


@pytest.mark.parametrize("spelling", ["%C0%AE/collide.md", "%FF%FE/collide.md", "%ED%B0%80/collide.md", "a%80.md"])
def test_a_path_that_is_not_utf_8_is_invalid_argument_on_every_page_route(admin: Client, spelling: str) -> None:
    target = f"{KB}/pages/{spelling}"
    problem_of(admin.call("PUT", target, json_body={"content": "x"}), 400, "invalid_argument")
    problem_of(admin.get(target), 400, "invalid_argument")
    problem_of(admin.call("DELETE", target), 400, "invalid_argument")
    problem_of(admin.call("POST", f"{target}/review", json_body={}), 400, "invalid_argument")
    problem_of(admin.call("POST", f"{target}/revert", json_body={"version": "v"}), 400, "invalid_argument")


def test_the_replacement_character_spelled_in_utf_8_is_a_page_of_its_own(admin: Client) -> None:
    written = admin.call("PUT", f"{KB}/pages/%EF%BF%BD%EF%BF%BD/collide.md", json_body={"content": "mine"})
    assert written.status == 200, written.body
    assert written.body["path"] == "/fs/\ufffd\ufffd/collide.md"
    problem_of(admin.get(f"{KB}/pages/%FF%FE/collide.md"), 400, "invalid_argument")


@pytest.mark.parametrize("spelling", ["notes//b.md", "notes///b.md", "/notes/b.md", "notes/./b.md", "notes/b.md/"])
def test_an_empty_component_inside_a_page_path_resolves_like_a_dot(admin: Client, spelling: str) -> None:
    assert admin.put("notes/b.md", "# B\n").status == 200
    answer = admin.get(f"{KB}/pages/{spelling}")
    assert answer.status == 200, answer.body
    assert answer.body["path"] == "/fs/notes/b.md"
    deleted = admin.call("DELETE", f"{KB}/pages/{spelling}")
    assert deleted.status == 200 and deleted.body["path"] == "/fs/notes/b.md"


@pytest.mark.parametrize(
    "target",
    [
        "/api/v1/projects/falcon/kb//pages/a.md",
        "/api/v1//projects/falcon/kb/pages/a.md",
        "//api/v1/projects/falcon/kb/pages/a.md",
        "/api/v1/projects/falcon//kb/stats",
    ],
)
def test_an_empty_component_in_the_routes_fixed_part_is_still_no_route(admin: Client, target: str) -> None:
    assert admin.get(target).status == 404
