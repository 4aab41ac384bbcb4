"""The payloads Lambda receives, built the way AWS builds them.

- ``rest_event``: an API Gateway REST API (v1) Lambda proxy event;
- ``scheduled_event``: EventBridge's "Scheduled Event".

The local gateway uses these for every request; unit tests reuse them to call a
handler directly.
"""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

ACCOUNT_ID = "123456789012"
REGION = "us-east-1"
API_ID = "localapi"
DEFAULT_STAGE = "v1"

HeaderInput = Mapping[str, str | Sequence[str]] | Sequence[tuple[str, str]]
QueryInput = Mapping[str, str | Sequence[str]] | Sequence[tuple[str, str]]


SAMPLE_TOKEN = "ks_sample-token-of-the-events-folder-ada-00000"  # noqa: S105 - names no principal anywhere
"""The bearer token the sample events in events/ carry (well-formed, standing for no one):
``make invoke`` sends the running stack's admin token in its place."""


def _pairs(values: HeaderInput | QueryInput | None) -> list[tuple[str, str]]:
    """Name/value pairs in order, from a mapping (a value may be a list) or a list of pairs."""
    if values is None:
        return []
    if isinstance(values, Mapping):
        pairs: list[tuple[str, str]] = []
        for name, value in values.items():
            if isinstance(value, str):
                pairs.append((name, value))
            else:
                pairs.extend((name, v) for v in value)
        return pairs
    return [(name, value) for name, value in values]


def single_and_multi(
    pairs: Sequence[tuple[str, str]],
) -> tuple[dict[str, str] | None, dict[str, list[str]] | None]:
    """API Gateway's two views of repeated names: the last value, and all of them (None when empty)."""
    if not pairs:
        return None, None
    single: dict[str, str] = {}
    multi: dict[str, list[str]] = {}
    for name, value in pairs:
        single[name] = value
        multi.setdefault(name, []).append(value)
    return single, multi


def encode_body(body: bytes | str | None) -> tuple[str | None, bool]:
    """The event's ``body`` and ``isBase64Encoded``: text as is, other bytes in base64."""
    if body is None:
        return None, False
    if isinstance(body, str):
        return body, False
    if not body:
        return None, False
    try:
        return body.decode("utf-8"), False
    except UnicodeDecodeError:
        return base64.b64encode(body).decode("ascii"), True


def request_context(
    method: str,
    path: str,
    *,
    resource: str,
    stage: str = DEFAULT_STAGE,
    source_ip: str = "127.0.0.1",
    user_agent: str | None = None,
    request_id: str | None = None,
    api_id: str = API_ID,
    account_id: str = ACCOUNT_ID,
) -> dict[str, Any]:
    now = datetime.now(UTC)
    request_id = request_id or str(uuid.uuid4())
    context: dict[str, Any] = {
        "accountId": account_id,
        "apiId": api_id,
        "domainName": "127.0.0.1",
        "domainPrefix": "127",
        "extendedRequestId": request_id,
        "httpMethod": method.upper(),
        "identity": {
            "accessKey": None,
            "accountId": None,
            "caller": None,
            "cognitoAuthenticationProvider": None,
            "cognitoAuthenticationType": None,
            "cognitoIdentityId": None,
            "cognitoIdentityPoolId": None,
            "principalOrgId": None,
            "sourceIp": source_ip,
            "user": None,
            "userAgent": user_agent,
            "userArn": None,
        },
        "path": f"/{stage}{path}",
        "protocol": "HTTP/1.1",
        "requestId": request_id,
        "requestTime": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
        "requestTimeEpoch": int(time.time() * 1000),
        "resourceId": uuid.uuid5(uuid.NAMESPACE_URL, f"{method.upper()} {resource}").hex[:6],
        "resourcePath": resource,
        "stage": stage,
    }
    return context


def rest_event(
    method: str,
    path: str,
    *,
    resource: str,
    headers: HeaderInput | None = None,
    query: QueryInput | None = None,
    path_parameters: Mapping[str, str] | None = None,
    body: bytes | str | None = None,
    stage: str = DEFAULT_STAGE,
    source_ip: str = "127.0.0.1",
    request_id: str | None = None,
) -> dict[str, Any]:
    """An API Gateway REST (v1) Lambda proxy event.

    ``path`` is the request path without the stage, as API Gateway puts it in the event
    (still percent-encoded); ``resource`` the route's template (``/items/{id}``).
    ``headers`` and ``query`` take a mapping (a value may be a list: repeated names) or
    a list of pairs; ``body`` bytes that are not UTF-8 travel in base64.
    """
    single_headers, multi_headers = single_and_multi(_pairs(headers))
    single_query, multi_query = single_and_multi(_pairs(query))
    text, is_base64 = encode_body(body)
    user_agent = next((v for k, v in (single_headers or {}).items() if k.lower() == "user-agent"), None)
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method.upper(),
        "headers": single_headers,
        "multiValueHeaders": multi_headers,
        "queryStringParameters": single_query,
        "multiValueQueryStringParameters": multi_query,
        "pathParameters": dict(path_parameters) if path_parameters else None,
        "stageVariables": None,
        "requestContext": request_context(
            method,
            path,
            resource=resource,
            stage=stage,
            source_ip=source_ip,
            user_agent=user_agent,
            request_id=request_id,
        ),
        "body": text,
        "isBase64Encoded": is_base64,
    }


def scheduled_event(rule_arn: str, *, region: str = REGION, account_id: str = ACCOUNT_ID) -> dict[str, Any]:
    """EventBridge's payload for a schedule rule's tick."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": account_id,
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": region,
        "resources": [rule_arn],
        "detail": {},
    }


def rule_arn(rule_name: str, *, region: str = REGION, account_id: str = ACCOUNT_ID) -> str:
    return f"arn:aws:events:{region}:{account_id}:rule/{rule_name}"
