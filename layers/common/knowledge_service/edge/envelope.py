"""The ``/knowledge`` wire convention: ``{success, message, data}``, with a ``code`` on refusal."""

from __future__ import annotations

import json
from typing import Any, Generic, Literal, TypeVar

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

from knowledge_service.base_model import Model
from knowledge_service.errors import ServiceError

DataT = TypeVar("DataT")


class Envelope(Model, Generic[DataT]):
    success: Literal[True] = True
    message: str = "ok"
    data: DataT


class ErrorEnvelope(Model):
    success: Literal[False] = False
    message: str
    data: None = None
    code: str


def ok(data: DataT, message: str = "ok") -> Envelope[DataT]:
    return Envelope[Any](data=data, message=message)  # type: ignore[return-value]


def refusal(error: ServiceError) -> Response[str]:
    body = ErrorEnvelope(message=error.message, code=error.code).model_dump(mode="json")
    headers = {"Cache-Control": "no-store", **error.headers}
    return Response(
        status_code=error.status, content_type=content_types.APPLICATION_JSON, body=json.dumps(body), headers=headers
    )


ERROR_DESCRIPTIONS = {
    400: "bad_request: the message names the field",
    401: "unauthenticated: missing, malformed, unknown or revoked bearer token",
    402: "payment_required: the commercial gate",
    403: "permission_denied",
    404: "not_found: no such record, project or route",
    409: "conflict, or the specific conflict the route names",
    410: "gone: the record is no longer kept (an expired export archive)",
    413: "payload_too_large: over a cap the message names with its numbers",
    422: "idempotency_key_reused: the Idempotency-Key was already used for a different request",
    500: "internal, or binding_failed",
    502: "upstream_error or upstream_mismatch",
    503: "knowledge_disabled or knowledge_unreachable",
    504: "upstream_timeout",
}


def error_responses(*statuses: int) -> dict[int, OpenAPIResponse]:
    """A route's documented answers: its success (the envelope around the route's return
    model, which Powertools fills in) and the refusals it can give."""
    success: OpenAPIResponse = {"description": "Success: the envelope, with the answer in data"}
    return {200: success} | {
        status: {"description": ERROR_DESCRIPTIONS[status], "content": {"application/json": {"model": ErrorEnvelope}}}
        for status in statuses
    }
