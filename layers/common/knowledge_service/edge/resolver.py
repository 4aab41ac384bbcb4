"""The ``/knowledge`` surface's resolver: validation, access, and one error renderer.

Order of refusals, as the specification sets it: authentication (the authorizer), the
route's permission and commercial capability, then the body. Powertools validates the
body before any middleware runs, so the validation handler holds the route's access
first: a caller without the permission is told 403 whatever the body says.

Every body is parsed by ``edge/body.py``'s bounded reader (a JSON object whatever the
``Content-Type`` it declares); a request no route matches is the 404 before any access
check (Powertools runs the middlewares around its own stand-in route for it); and a
matched route runs inside the request's FORAGER budget (``knowledge_service/budget.py``).
"""

from __future__ import annotations

import base64
import inspect
import json
import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, get_args, get_origin

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.request import Request
from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge_service import budget
from knowledge_service.domain import identifiers
from knowledge_service.edge.access import (
    PERMISSION_KEY,
    PUBLIC,
    PUBLIC_PREFIX,
    REQUEST_BODY_KEY,
    DeclaredRoutes,
    authorize,
    hold,
)
from knowledge_service.edge.body import UnreadableBody, as_json_request, declared_type, read_json
from knowledge_service.edge.envelope import refusal
from knowledge_service.errors import BadRequest, InternalError, NotFound, ServiceError

logger = Logger(child=True)

_LOCATIONS = {"body", "query", "path", "header", "cookie"}
_NOT_JSON_FORMS = {"application/x-www-form-urlencoded", "multipart/form-data"}
_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


class KnowledgeResolver(DeclaredRoutes):
    """Powertools' REST resolver, reading every body with the edge's bounded JSON reader
    (``edge/body.py``), and a JSON object as JSON whatever ``Content-Type`` it declares."""

    def __init__(self) -> None:
        super().__init__(enable_validation=True, json_body_deserializer=read_json)

    def resolve(self, event: Mapping[str, Any], context: LambdaContext) -> dict[str, Any]:
        return super().resolve(as_json_request(dict(event)), context)


def knowledge_api() -> KnowledgeResolver:
    app = KnowledgeResolver()
    app.use(middlewares=[_access_middleware])

    @app.exception_handler(ServiceError)
    def _service_error(error: ServiceError) -> Response[str]:
        if error.status >= 500:
            logger.warning("refused", extra={"code": error.code, "status": error.status})
        return refusal(error)

    # A request that cannot be read is refused as a 400 — but only after the route's access
    # is held, so a caller without the permission learns nothing from the body.
    def refuse_after_access(bad_request: BadRequest) -> Response[str]:
        try:
            authorize(app.current_event, app.declared() or {})
        except ServiceError as refused:
            return refusal(refused)
        return refusal(bad_request)

    @app.exception_handler(RequestValidationError)
    def _invalid(error: RequestValidationError) -> Response[str]:
        if app.current_event.body and declared_type(app.current_event.headers) in _NOT_JSON_FORMS:
            # A form's fields are not JSON's: name the header, not a field the form made up.
            return refuse_after_access(BadRequest("Content-Type", "must be application/json."))
        return refuse_after_access(bad_request_from(list(error.errors())))

    @app.exception_handler(UnreadableBody)
    def _unbounded(error: UnreadableBody) -> Response[str]:
        return refuse_after_access(error)

    @app.exception_handler(RequestUnsupportedContentType)
    def _not_json(_: RequestUnsupportedContentType) -> Response[str]:
        return refuse_after_access(BadRequest("Content-Type", "must be application/json."))

    @app.exception_handler([UnicodeDecodeError, json.JSONDecodeError])
    def _unreadable(_: ValueError) -> Response[str]:
        return refuse_after_access(BadRequest("body", "is not valid JSON in UTF-8."))

    @app.exception_handler(ValueError)
    def _unparsable(error: ValueError) -> Response[str]:
        # Powertools raises a bare ValueError for a body it cannot parse as its declared type
        # (a multipart body without a boundary, say): the caller's request, not our failure.
        content_type = (app.current_event.headers.get("content-type") or "").lower()
        if app.current_event.body and not content_type.startswith("application/json"):
            return refuse_after_access(BadRequest("Content-Type", "must be application/json."))
        return unexpected(error)

    @app.exception_handler(NotFoundError)
    def _no_route(_: NotFoundError) -> Response[str]:
        return refusal(NotFound("No such route."))

    app.exception_handler(Exception)(unexpected)

    return app


def unexpected(error: Exception) -> Response[str]:
    """Anything not foreseen: logged with its traceback, answered 500 without one."""
    logger.exception("unexpected failure")
    return refusal(InternalError("The service failed to answer; the failure is logged."))


def _access_middleware(app: KnowledgeResolver, next_middleware: NextMiddleware) -> Response[Any]:
    declared = app.declared()
    if declared is None:
        return next_middleware(app)  # no route matched (``/knowledge//status``): the 404, not an access check
    if declared.get(PERMISSION_KEY) == PUBLIC and app.request.route.startswith(PUBLIC_PREFIX):
        return next_middleware(app)  # the console's own files: they hold no data (edge/routes/console.py)
    # The route's access held once (edge/access.py), and one budget for every FORAGER call
    # it makes (knowledge_service/budget.py).
    with hold(app.current_event, declared), budget.spending(budget.request_budget(app.lambda_context)):
        if has_body(app.current_event.body, app.current_event.is_base64_encoded) and takes_no_body(
            app.context.get("_route")
        ):
            # after access, as every refusal of a body: a route that reads none refuses one (a
            # body it ignored was any body, 100k deep included: issue 39); ``{}`` reads as none
            raise BadRequest("body", "is not taken by this route; send none (or {}).")
        return next_middleware(app)


_NO_BODY: dict[Callable[..., Any], bool] = {}
_EMPTY_OBJECT = re.compile(r"^\s*(\{\s*\})?\s*$")


def has_body(body: str | None, base64_encoded: bool | None) -> bool:
    """Whether a request carries a body: anything but nothing, white space or an empty JSON
    object (what a client that always sends JSON sends a route that takes none: the console)."""
    if not body:
        return False
    if base64_encoded:
        if len(body) > 64:
            return True
        try:
            body = base64.b64decode(body).decode("utf-8")
        except ValueError:
            return True
    return not _EMPTY_OBJECT.match(body)


def takes_no_body(route: Any) -> bool:
    """Whether the matched route reads no body: no ``Body()`` parameter, no ``Request`` it reads one
    from, and no form declared (``x-request-body``). Worked out once per route function."""
    func = getattr(route, "func", None)
    if func is None:
        return False
    if func not in _NO_BODY:
        declares_form = REQUEST_BODY_KEY in (getattr(route, "openapi_extensions", None) or {})
        parameters = inspect.signature(func, eval_str=True).parameters.values()
        _NO_BODY[func] = (
            not declares_form
            and not any(parameter.annotation is Request for parameter in parameters)  # reads its body itself
            and not any(
                isinstance(meta, Body)
                for parameter in parameters
                if get_origin(parameter.annotation) is Annotated
                for meta in get_args(parameter.annotation)[1:]
            )
        )
    return _NO_BODY[func]


def bad_request_from(errors: list[dict[str, Any]]) -> BadRequest:
    """One validation error as a 400 naming its field (never echoing the input).

    An unknown field is named before anything it made missing: ``knowledgeBase`` is the
    caller's mistake, ``knowledge_base: is required`` only its consequence.
    """
    if not errors:
        return BadRequest("body", "is not valid.")
    first = next((e for e in errors if e.get("type") == "extra_forbidden"), errors[0])
    kind = str(first.get("type", ""))
    loc = [str(part) for part in first.get("loc", ())]
    parts = loc[1:] if loc and loc[0] in _LOCATIONS else loc  # a field may be called ``query``
    field = "body" if kind == "json_invalid" else ".".join(parts) or "body"
    if kind == "extra_forbidden":
        if parts and not _FIELD_NAME.match(parts[-1]):  # a name that is not one is not echoed
            return BadRequest("body", "has a field that is not one of this request's (fields are snake_case).")
        snake = _snake(parts[-1]) if parts else ""
        hint = f"; did you mean {snake}?" if snake and snake != parts[-1] else ""
        return BadRequest(field, f"is not a field of this request{hint} (request fields are snake_case).")
    problem = _PROBLEMS.get(kind, _message)(first)
    return BadRequest(field, problem)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _message(error: dict[str, Any]) -> str:
    text = str(error.get("msg", "is not valid"))
    text = text.removeprefix("Value error, ")
    return text[:1].lower() + text[1:] if text else "is not valid"


_PROBLEMS: dict[str, Callable[[dict[str, Any]], str]] = {
    "missing": lambda e: "is required.",
    "json_invalid": lambda e: "is not valid JSON.",
    "model_attributes_type": lambda e: "must be a JSON object.",
    "dict_type": lambda e: "must be a JSON object.",
    # A declared pattern is told in the words the domain's own check uses (never the input).
    "string_pattern_mismatch": lambda e: identifiers.PATTERN_PROBLEMS.get(
        str((e.get("ctx") or {}).get("pattern", "")), "is not in the form this field takes."
    ),
}
