"""The pages surface's resolver: the admin gate, greedy page paths, and problem+json.

Order of refusals, as the specification sets it: a query string that cannot be read is a
400 first (Powertools validates it before any middleware); then the admin gate, before
the body is read (the routes read their bodies themselves, so nothing in the body is
looked at for a caller the gate refuses); then the body.

The gate: the caller must be the admin token of ``{id}`` — a human principal that is the
project's admin or the owner of its organization, holding the permission the route
declares. An agent principal is never the admin token. Everyone else is told 401. A
project that does not exist is 404 only to an owner of the installation's organization
(who could have made it); to anyone else it is the same 401 as a project they do not
administer, so the gate says nothing about which projects exist.

API Gateway can put a greedy ``{path+}`` only last, so ``template.yaml`` routes
``/kb/pages/{path+}`` once per method; this resolver turns the greedy path into one
percent-encoded segment (and ``POST .../review`` / ``.../revert`` into their routes) before
Powertools matches it. The greedy path is read from the event's raw ``path`` (API Gateway
decodes ``pathParameters``), so invalid UTF-8 reaches the page path code as what it is.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from knowledge_service.domain import identifiers
from knowledge_service.domain.pages import paths
from knowledge_service.edge.access import PERMISSION_KEY, STARTS_WORK_KEY, DeclaredRoutes, admitted
from knowledge_service.edge.problem import problem
from knowledge_service.edge.resolver import bad_request_from, has_body, takes_no_body
from knowledge_service.errors import BadRequest, InternalError, NotFound, ServiceError, Unauthenticated
from knowledge_service.identity.principal import Permission, Principal, PrincipalKind, ProjectRole
from knowledge_service.runtime import runtime
from knowledge_service.storage.page_store import Preread

logger = Logger(child=True)

PAGES_PREFIX = "/api/v1/projects/"
_ACTIONS = ("review", "revert")


class PagesResolver(DeclaredRoutes):
    def resolve(self, event: Any, context: Any) -> dict[str, Any]:
        if isinstance(event, dict):
            event = _with_page_segment(event)
        return super().resolve(event, context)


def _with_page_segment(event: dict[str, Any]) -> dict[str, Any]:
    resource = str(event.get("resource") or "")
    params = event.get("pathParameters") or {}
    if not resource.endswith("/kb/pages/{path+}"):
        return event
    raw = str(event.get("path") or "")
    # The raw path, not ``pathParameters``: API Gateway decodes those, and a decoding that
    # replaces invalid UTF-8 with U+FFFD makes ``%FF%FE/x.md`` and ``%EF%BF%BD%EF%BF%BD/x.md``
    # one page. Bytes that are not UTF-8 (a surrogate included) are kept as lone surrogates,
    # which the page path refuses (``invalid_argument``).
    greedy = page_text(raw.partition("/kb/pages/")[2]) if "/kb/pages/" in raw else str(params.get("path", ""))
    if "id" not in params:  # an event without path parameters (a hand-built one): read the path itself
        params = {**params, "id": project_of(raw)}
    action = ""
    if str(event.get("httpMethod", "")).upper() == "POST":
        head, _, last = greedy.rstrip("/").rpartition("/")
        if last in _ACTIONS and head:
            greedy, action = head, f"/{last}"
    project = quote(str(params.get("id", "")), safe="")
    segment = quote(greedy, safe="", errors="surrogateescape") or "%2F"
    path = f"{PAGES_PREFIX}{project}/kb/pages/{segment}{action}"
    return {**event, "path": path}


def page_text(encoded: str) -> str:
    """A percent-encoded page path as text, its bytes kept: a sequence that is not UTF-8 (or
    encodes a surrogate) becomes lone surrogates (``surrogateescape``), never U+FFFD."""
    return unquote(encoded, errors="surrogateescape")


def pages_api() -> PagesResolver:
    app = PagesResolver(enable_validation=True)
    app.use(middlewares=[_gate_middleware])

    @app.exception_handler(ServiceError)
    def _service_error(error: ServiceError) -> Response[str]:
        if error.status >= 500:
            logger.warning("refused", extra={"code": error.code, "status": error.status})
        return problem(error)

    @app.exception_handler(RequestValidationError)
    def _invalid(error: RequestValidationError) -> Response[str]:
        return problem(bad_request_from(list(error.errors())))

    @app.exception_handler(NotFoundError)
    def _no_route(_: NotFoundError) -> Response[str]:
        return problem(NotFound("No such route."))

    @app.exception_handler(Exception)
    def _unexpected(_: Exception) -> Response[str]:
        logger.exception("unexpected failure")
        return problem(InternalError("The service failed to answer; the failure is logged."))

    return app


def _gate_middleware(app: PagesResolver, next_middleware: NextMiddleware) -> Response[Any]:
    token = _admission.set(admin_gate(app))
    try:
        event = app.request.resolved_event  # this resolution's own request, never the class-level event
        if has_body(event.body, event.is_base64_encoded) and takes_no_body(app.context.get("_route")):
            # after the gate, as /knowledge refuses one: a route that reads no body refuses one
            raise BadRequest("body", "is not taken by this route; send none (or {}).")
        return next_middleware(app)
    finally:
        _admission.reset(token)


@dataclass(frozen=True)
class Admission:
    """What the gate read in its one BatchGetItem: the caller, and what the route reads first
    of the page store (a page's head, the project's generation), for the route to use once."""

    principal: Principal
    preread: Preread | None


_admission: ContextVar[Admission | None] = ContextVar("pages_admission", default=None)


def admission() -> Admission | None:
    """The request's admission, as the gate made it (None outside the gate: a direct call)."""
    return _admission.get()


_PAGE_ROUTE = f"{PAGES_PREFIX}{{id}}/kb/pages/{{path}}"
_PREREAD = {"GET": False, "PUT": True, "DELETE": False}
"""The page routes whose head the gate reads with the caller, and whether with the project's
generation and kept bytes (a write checks the base's limits against them)."""


def _door_keys(app: PagesResolver) -> tuple[str | None, bool]:
    """The page path whose head the matched route reads first (None: none), and whether the
    route reads the project's generation too."""
    method = app.request.method.upper()
    if app.request.route != _PAGE_ROUTE or method not in _PREREAD:
        return None, False
    event = app.request.resolved_event
    if method == "GET" and (event.query_string_parameters or {}).get("version") is not None:
        return None, False  # a version's read reads the page's history, not only its head
    segment = event.path.rpartition("/kb/pages/")[2]
    try:
        text = page_text(segment)
        path = paths.canonical(text) if method == "DELETE" else paths.page_path(text)
    except ServiceError:
        return None, False  # the route refuses the path itself, after the gate
    return path, _PREREAD[method]


def admin_gate(app: PagesResolver) -> Admission:
    """Hold the caller to the admin token of the project the path names (401 otherwise).

    One consistent BatchGetItem reads the caller's principal, the project's record and, for a
    page's GET, PUT or DELETE, the page's head (and for a PUT the project's generation)."""
    declared = app.declared()
    if declared is None:
        # Powertools' own not-found route: a POST on a page that is neither review nor revert
        raise NotFound("No such route.")
    permission = declared.get(PERMISSION_KEY)
    if permission is None:
        raise InternalError("This route declares no permission, so it answers no one.")
    event = app.request.resolved_event  # this resolution's own request (Powertools builds it per resolve)
    named = project_of(event.path)
    well_formed = bool(identifiers.PROJECT_ID.fullmatch(named))
    page, meta = _door_keys(app) if well_formed else (None, False)
    rt = runtime()
    extra = rt.pages.door_keys(named, page, meta=meta) if page is not None or meta else None
    principal, records = admitted(
        event, named if well_formed else None, extra, starts_work=bool(declared.get(STARTS_WORK_KEY))
    )
    if principal.kind is PrincipalKind.AGENT:
        raise Unauthenticated("An agent token is not the admin token; agents reach pages through the brain tools.")
    if not principal.holds(Permission(permission)):
        raise Unauthenticated(f"This route takes the admin token, holding the {permission} permission.")
    project = identifiers.project_id(named, "id")
    record = records.project
    if record is None:
        if principal.owns(rt.env.installation_organization):
            raise NotFound(f"There is no project '{project}'.")
        raise Unauthenticated("This route takes the admin token of the project.")
    if principal.role_in(project) is not ProjectRole.ADMIN and not principal.owns(record.organization):
        raise Unauthenticated("This route takes the admin token of the project.")
    preread = rt.pages.preread(project, page, records.items, meta=meta) if extra is not None else None
    return Admission(principal, preread)


def project_of(path: str) -> str:
    """The ``{id}`` of ``/api/v1/projects/{id}/...`` (percent-decoded), or ""."""
    rest = path.partition(PAGES_PREFIX)[2]
    return unquote(rest.split("/", 1)[0]) if rest else ""
