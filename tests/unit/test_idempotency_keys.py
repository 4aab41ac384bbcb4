"""The key a caller's Idempotency-Key stands for: scoped to the caller and the route."""

from __future__ import annotations

import re

from hypothesis import given, strategies as st

from knowledge_service.domain.idempotency import scoped_key

ROUTE = "POST /knowledge/bases"


def test_one_caller_one_key_is_always_the_same_scoped_key() -> None:
    assert scoped_key("ada", ROUTE, "k-1") == scoped_key("ada", ROUTE, "k-1")


def test_the_scoped_key_is_visible_ascii_within_foragers_limit_and_hides_the_callers_key() -> None:
    key = scoped_key("ada", ROUTE, "my-secretish-key")
    assert re.fullmatch(r"ks1-[0-9a-f]{64}", key)
    assert "my-secretish-key" not in key


def test_two_callers_one_key_are_two_scoped_keys() -> None:
    assert scoped_key("ada", ROUTE, "k-1") != scoped_key("bea", ROUTE, "k-1")


def test_one_caller_one_key_on_two_routes_are_two_scoped_keys() -> None:
    assert scoped_key("ada", ROUTE, "k-1") != scoped_key("ada", "POST /knowledge/jobs", "k-1")


def test_a_separator_in_a_name_or_key_cannot_make_two_callers_meet() -> None:
    assert scoped_key("a:b", ROUTE, "c") != scoped_key("a", ROUTE, "b:c")
    assert scoped_key('a","b', ROUTE, "c") != scoped_key("a", ROUTE, 'b","c')


@given(st.tuples(st.text(), st.text()), st.tuples(st.text(), st.text()))
def test_different_callers_or_keys_never_share_a_scoped_key(first: tuple[str, str], second: tuple[str, str]) -> None:
    if first != second:
        assert scoped_key(first[0], ROUTE, first[1]) != scoped_key(second[0], ROUTE, second[1])
