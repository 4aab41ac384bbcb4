"""``edge/answer_headers.py``'s rules on the proxy answer itself (no gateway, which merges the two
header maps and always adds ``X-Forwarded-Proto``): where a header lands, what is kept, and when
a request came over HTTPS. Written for issue 39's mutation round of the module."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge_service.edge.answer_headers import HSTS, REFUSAL_POLICY, standard_headers

API = {"path": "/knowledge/status"}


def test_an_answer_with_no_headers_gets_a_map_of_them() -> None:
    answer = standard_headers(API, {"statusCode": 200, "body": "{}"})
    assert answer["headers"] == {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}


def test_an_answer_in_multi_value_headers_gets_them_there_as_lists() -> None:
    answer = standard_headers(API, {"statusCode": 200, "multiValueHeaders": {"Set-Cookie": ["a=b"]}})
    assert answer["multiValueHeaders"] == {
        "Set-Cookie": ["a=b"],
        "X-Content-Type-Options": ["nosniff"],
        "Cache-Control": ["no-store"],
    }
    assert "headers" not in answer


def test_a_header_the_answer_names_in_either_map_in_any_case_is_kept() -> None:
    answer: dict[str, Any] = {
        "headers": {"cache-control": "no-cache"},
        "multiValueHeaders": {"Cache-Control": ["no-cache"], "x-content-type-options": ["nosniff"]},
    }
    standard_headers(API, answer)
    assert answer["headers"] == {"cache-control": "no-cache"}
    assert answer["multiValueHeaders"] == {"Cache-Control": ["no-cache"], "x-content-type-options": ["nosniff"]}


def test_a_console_answer_gets_the_policy_and_no_cache_rule() -> None:
    answer = standard_headers({"path": "".join(["/con", "sole"])}, {"headers": {}})  # a path as read, not a literal
    assert answer["headers"] == {
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": REFUSAL_POLICY,
        "Referrer-Policy": "no-referrer",
    }
    assert standard_headers({"path": "/consoles"}, {"headers": {}})["headers"]["Cache-Control"] == "no-store"


@pytest.mark.parametrize(
    ("event", "hsts"),
    [
        ({}, False),
        ({"headers": None}, False),
        ({"headers": {"X-Forwarded-Proto": "https"}}, True),
        ({"headers": {"x-forwarded-proto": "HTTPS"}}, True),
        ({"headers": {"X-Forwarded-Proto": "https, http"}}, True),  # the first hop's
        ({"headers": {"X-Forwarded-Proto": "http, https"}}, False),
        ({"headers": {"Accept": "https", "X-Forwarded-Proto": "http"}}, False),
        ({"headers": {"Zed": "https", "X-Forwarded-Proto": "http"}}, False),
        ({"headers": {"X-Forwarded-Proto": "wss"}}, False),
        ({"headers": None, "multiValueHeaders": {"X-Forwarded-Proto": ["https"]}}, True),
        ({"multiValueHeaders": {"X-Forwarded-Proto": ["http"]}}, False),
    ],
)
def test_hsts_follows_the_first_hops_protocol(event: dict[str, Any], hsts: bool) -> None:
    answer = standard_headers({**API, **event}, {"headers": {}})
    assert (answer["headers"].get("Strict-Transport-Security") == HSTS) is hsts
