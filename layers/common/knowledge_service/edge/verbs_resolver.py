"""The verbs surface's resolver and renderer: JSON answers, ``{error, code}`` refusals.

The same error model as every surface (``errors.py``); only the rendering differs: a
:class:`ServiceError` becomes ``{"error": message, "code": "BadInput" | "Unauthenticated" |
"Forbidden" | "NotFound" | "Conflict" | "BudgetExceeded"}`` with its status. Access is not a
middleware here: the front door (``domain.verbs.door``) holds it, so the CLI's door holds
exactly the same checks.
"""

from __future__ import annotations

import json

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel

from knowledge_service.domain.verbs.door import verb_code
from knowledge_service.domain.verbs.models import VerbError
from knowledge_service.errors import BadRequest, InternalError, NotFound, ServiceError

logger = Logger(child=True)

VERB_ERROR_DESCRIPTIONS = {
    400: "BadInput: the message names the field",
    401: "Unauthenticated: missing, malformed, unknown or revoked bearer token",
    403: "Forbidden: capability, permission in the workspace, or autonomy",
    404: "NotFound: no such workspace, assertion or capture (another workspace's id answers the same)",
    409: "Conflict: the assertion's status refuses the transition, or a supersede would close a cycle",
    429: "BudgetExceeded: the workspace's AI budget is spent",
    500: "Internal: the service failed to answer",
}


def verbs_api() -> APIGatewayRestResolver:
    app = APIGatewayRestResolver(enable_validation=True)

    @app.exception_handler(ServiceError)
    def _service_error(error: ServiceError) -> Response[str]:
        if error.status >= 500:
            logger.warning("refused", extra={"code": error.code, "status": error.status})
        return verb_refusal(error)

    @app.exception_handler(RequestValidationError)
    def _invalid(_: RequestValidationError) -> Response[str]:
        return verb_refusal(BadRequest("workspace", "must be one project id."))

    @app.exception_handler(NotFoundError)
    def _no_route(_: NotFoundError) -> Response[str]:
        return verb_refusal(NotFound("No such verb."))

    @app.exception_handler(Exception)
    def _unexpected(_: Exception) -> Response[str]:
        logger.exception("unexpected failure")
        return verb_refusal(InternalError("The service failed to answer; the failure is logged."))

    return app


def verb_refusal(error: ServiceError) -> Response[str]:
    body = VerbError(error=error.message, code=verb_code(error)).model_dump()  # type: ignore[arg-type]
    return Response(
        status_code=error.status,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps(body),
        headers={"Cache-Control": "no-store", **error.headers},
    )


def verb_answer(answer: BaseModel) -> Response[str]:
    return Response(
        status_code=200,
        content_type=content_types.APPLICATION_JSON,
        body=answer.model_dump_json(by_alias=True),
        headers={"Cache-Control": "no-store"},
    )


def verb_responses(model: type[BaseModel], *statuses: int) -> dict[int, OpenAPIResponse]:
    success: OpenAPIResponse = {"description": "The verb's answer", "content": {"application/json": {"model": model}}}
    return {200: success} | {
        status: {"description": VERB_ERROR_DESCRIPTIONS[status], "content": {"application/json": {"model": VerbError}}}
        for status in statuses
    }
