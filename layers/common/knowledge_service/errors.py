"""The one set of domain errors.

Every refusal the service makes is one of these. Each carries its HTTP status and a
stable ``code``; the edge renders it in the surface's own wire convention (the
``/knowledge`` envelope, problem+json for pages, ``{error, code}`` for verbs). Nothing
anywhere matches on message text.
"""

from __future__ import annotations

from typing import Any, ClassVar


class ServiceError(Exception):
    """A refusal with a status, a code and a sentence a caller can act on."""

    status: ClassVar[int] = 500
    default_code: ClassVar[str] = "internal"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        headers: dict[str, str] | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.headers = headers or {}
        self.data = data


class BadRequest(ServiceError):
    """400: the request itself is wrong; the message names the field."""

    status = 400
    default_code = "bad_request"

    def __init__(self, field: str, problem: str, **kwargs: Any) -> None:
        super().__init__(f"{field}: {problem}", **kwargs)
        self.field = field


class Unauthenticated(ServiceError):
    status = 401
    default_code = "unauthenticated"


class PaymentRequired(ServiceError):
    status = 402
    default_code = "payment_required"


class PermissionDenied(ServiceError):
    status = 403
    default_code = "permission_denied"


class NotFound(ServiceError):
    status = 404
    default_code = "not_found"


class Conflict(ServiceError):
    """409: the named state refuses the act (``already_bound``, ``not_ready``, ...)."""

    status = 409
    default_code = "conflict"


class Gone(ServiceError):
    status = 410
    default_code = "gone"


class PayloadTooLarge(ServiceError):
    status = 413
    default_code = "payload_too_large"


class IdempotencyKeyReused(ServiceError):
    """422: an Idempotency-Key already used for a different request (the same key, another body)."""

    status = 422
    default_code = "idempotency_key_reused"


class UnsupportedMediaType(ServiceError):
    """415: a body sent as a media type the route does not take (pages: ``invalid_argument``)."""

    status = 415
    default_code = "invalid_argument"


class BindingFailed(ServiceError):
    """500: FORAGER made a knowledge base but the colony could not save the binding."""

    status = 500
    default_code = "binding_failed"


class InternalError(ServiceError):
    status = 500
    default_code = "internal"


class UpstreamError(ServiceError):
    """502: FORAGER answered, but not with something the edge can use."""

    status = 502
    default_code = "upstream_error"


class UpstreamMismatch(ServiceError):
    """502: what FORAGER sent is not what it recorded (a digest or a size)."""

    status = 502
    default_code = "upstream_mismatch"


class Busy(ServiceError):
    """503: the request did nothing because another touched the same items at that moment
    (a DynamoDB transaction conflict); asked again after ``Retry-After`` it lands."""

    status = 503
    default_code = "unavailable"


class KnowledgeDisabled(ServiceError):
    status = 503
    default_code = "knowledge_disabled"


class KnowledgeUnreachable(ServiceError):
    status = 503
    default_code = "knowledge_unreachable"


class UpstreamTimeout(ServiceError):
    status = 504
    default_code = "upstream_timeout"


class UpstreamRefused(UpstreamError):
    """FORAGER refused a request in its own words (a 4xx other than auth and rate limits).

    Domain code that expects a particular refusal (a 409 while a base is processing, say)
    catches this and reads ``upstream_status`` and ``upstream_code``; unhandled, it renders
    as a 502 carrying FORAGER's sentence.
    """

    def __init__(self, upstream_status: int, upstream_code: str, message: str) -> None:
        super().__init__(f"FORAGER refused the request: {message}")
        self.upstream_status = upstream_status
        self.upstream_code = upstream_code
        self.upstream_message = message


class BudgetExceeded(ServiceError):
    """429: the workspace's AI budget is spent (the verbs' budget gate)."""

    status = 429
    default_code = "budget_exceeded"
