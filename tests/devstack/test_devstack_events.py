"""The payloads the local stack hands the functions, and the small rules around them."""

from __future__ import annotations

import base64
import time

import pytest

from devstack.events import rest_event, scheduled_event
from devstack.lambdas import FakeLambdaContext
from devstack.schedules import UnsupportedSchedule, rate_seconds


def test_a_rest_event_has_every_field_api_gateway_sends() -> None:
    event = rest_event(
        "get",
        "/knowledge/items/k1",
        resource="/knowledge/items/{id}",
        headers=[("Accept", "application/json"), ("X-Tag", "a"), ("X-Tag", "b")],
        query=[("q", "one"), ("q", "two"), ("limit", "5")],
        path_parameters={"id": "k1"},
    )
    assert set(event) == {
        "resource",
        "path",
        "httpMethod",
        "headers",
        "multiValueHeaders",
        "queryStringParameters",
        "multiValueQueryStringParameters",
        "pathParameters",
        "stageVariables",
        "requestContext",
        "body",
        "isBase64Encoded",
    }
    assert event["httpMethod"] == "GET"
    assert event["headers"] == {"Accept": "application/json", "X-Tag": "b"}
    assert event["multiValueHeaders"]["X-Tag"] == ["a", "b"]
    assert event["queryStringParameters"] == {"q": "two", "limit": "5"}
    assert event["multiValueQueryStringParameters"] == {"q": ["one", "two"], "limit": ["5"]}
    assert event["pathParameters"] == {"id": "k1"}
    assert event["stageVariables"] is None
    assert (event["body"], event["isBase64Encoded"]) == (None, False)
    context = event["requestContext"]
    assert context["accountId"] == "123456789012"
    assert context["apiId"] == "localapi"
    assert context["stage"] == "v1"
    assert context["resourcePath"] == "/knowledge/items/{id}"
    assert context["httpMethod"] == "GET"
    assert context["path"] == "/v1/knowledge/items/k1"
    assert context["identity"]["sourceIp"] == "127.0.0.1"
    assert abs(context["requestTimeEpoch"] - time.time() * 1000) < 5000
    assert len(context["requestId"]) == 36
    assert "authorizer" not in context  # no API authorizer: each function authenticates its request


def test_empty_query_headers_and_path_parameters_are_none_as_api_gateway_sends_them() -> None:
    event = rest_event("GET", "/modules", resource="/modules")
    assert event["queryStringParameters"] is None
    assert event["multiValueQueryStringParameters"] is None
    assert event["pathParameters"] is None
    assert event["headers"] is None


def test_a_text_body_is_sent_as_is_and_other_bytes_in_base64() -> None:
    text = rest_event("POST", "/settings", resource="/settings", body='{"a": "é"}'.encode())
    assert (text["body"], text["isBase64Encoded"]) == ('{"a": "é"}', False)
    raw = bytes([0xFF, 0x00, 0x10])
    binary = rest_event("POST", "/settings", resource="/settings", body=raw)
    assert binary["isBase64Encoded"] is True
    assert base64.b64decode(binary["body"]) == raw


def test_a_scheduled_event_is_eventbridges() -> None:
    rule = "arn:aws:events:us-east-1:123456789012:rule/knowledge-local-ScheduleFunctionSixHourly"
    event = scheduled_event(rule)
    assert event["detail-type"] == "Scheduled Event"
    assert event["source"] == "aws.events"
    assert event["resources"] == [rule]
    assert event["detail"] == {}
    assert event["time"].endswith("Z")


def test_the_context_counts_down_from_the_timeout() -> None:
    context = FakeLambdaContext("StatusFunction", memory_limit_in_mb=512, timeout_seconds=30)
    assert 29_000 < context.get_remaining_time_in_millis() <= 30_000
    assert context.invoked_function_arn == "arn:aws:lambda:us-east-1:123456789012:function:StatusFunction"
    assert context.aws_request_id
    assert FakeLambdaContext("x", timeout_seconds=0).get_remaining_time_in_millis() == 0


@pytest.mark.parametrize(
    ("expression", "seconds"),
    [
        ("rate(1 minute)", 60),
        ("rate(5 minutes)", 300),
        ("rate(6 hours)", 21600),
        ("rate(1 day)", 86400),
        ("rate(2 days)", 172800),
    ],
)
def test_rate_expressions(expression: str, seconds: int) -> None:
    assert rate_seconds(expression) == seconds


@pytest.mark.parametrize("expression", ["cron(0 12 * * ? *)", "rate(0 minutes)", "rate(5 weeks)", "rate(x hours)"])
def test_other_schedules_are_refused(expression: str) -> None:
    with pytest.raises(UnsupportedSchedule):
        rate_seconds(expression)
