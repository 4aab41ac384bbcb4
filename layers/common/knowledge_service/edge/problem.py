"""The pages wire convention: ``application/problem+json`` (RFC 9457) with the hub ``code``.

The third renderer of the one error model (beside the ``/knowledge`` envelope and the
verbs' ``{error, code}``). The hub names a 400 ``invalid_argument``, so the model's
``bad_request`` is rendered under that name; every other code is the model's own.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

from knowledge_service.base_model import Model
from knowledge_service.edge.envelope import ErrorEnvelope
from knowledge_service.errors import ServiceError

PROBLEM_JSON = "application/problem+json"
_HUB_CODES = {"bad_request": "invalid_argument"}


class Problem(Model):
    type: str = "about:blank"
    title: str
    status: int
    detail: str
    code: str


def hub_code(error: ServiceError) -> str:
    return _HUB_CODES.get(error.code, error.code)


def problem(error: ServiceError) -> Response[str]:
    body = Problem(
        title=HTTPStatus(error.status).phrase, status=error.status, detail=error.message, code=hub_code(error)
    )
    headers = {"Cache-Control": "no-store", **error.headers}
    return Response(
        status_code=error.status, content_type=PROBLEM_JSON, body=json.dumps(body.model_dump()), headers=headers
    )


PROBLEM_DESCRIPTIONS = {
    400: "invalid_argument: a refused path, an unreadable body or query, a field the route does not know",
    401: "unauthenticated: no admin token (an agent token is not the admin token)",
    404: "not_found: the project, the page, the version, the session or its brain entry",
    409: "conflict: if_version does not match; the detail ends current_version=... "
    "(not_ready: the base's archive is being built; ask again after Retry-After)",
    413: "payload_too_large: a page over 1 MiB, a body over 4 MiB, the base at 1 GiB, "
    "or an archive over one export's 10,000 pages or 256 MiB",
    415: "invalid_argument: a page sent as anything but JSON, text/markdown or text/plain",
    500: "internal",
    503: "unavailable: another write to the base was landing at that moment; nothing was written, ask again "
    "after Retry-After",
}


def problem_responses(*statuses: int) -> dict[int, OpenAPIResponse]:
    success: OpenAPIResponse = {"description": "Success"}
    return {200: success} | {status: _documented(status) for status in statuses}


def _documented(status: int) -> OpenAPIResponse:
    content: dict[str, Any] = {PROBLEM_JSON: {"model": Problem}}
    if status == 401:  # no token at all is refused by the authorizer, in API Gateway's own answer
        content["application/json"] = {"model": ErrorEnvelope}
    return {"description": PROBLEM_DESCRIPTIONS[status], "content": content}
