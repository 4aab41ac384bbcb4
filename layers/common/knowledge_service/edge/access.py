"""Who may call a route: declared once on the route, held by one public hook.

Every route declares its installation permission, its standing in the project a call
names and, where the catalog names one, its commercial capability, with ``access(...)``.
The declaration lives in the route's OpenAPI extensions, so the published document says
it too, and the authorization matrix reads it back. A route that declares nothing is
refused: access fails closed.

The hook is :func:`hold`: the resolver's middleware finds the matched route's declaration
through Powertools' public ``app.request`` (its route pattern and method), parses the
principal once, holds the permission and capability, and opens a :class:`Call` for the
request. A route asks the call, and nothing else, for the caller (:func:`current_call`),
the scope at its declared standing (``scope``, resolved once per project per request, so
knowledge's gate runs once), and the FORAGER client for that scope (``reader``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent

from knowledge_service.domain.commerce import BASE_CAPABILITIES, require_capability
from knowledge_service.domain.identifiers import PROJECT_ID
from knowledge_service.domain.scope import SCOPED, Scope, Standing, resolve_scope, scope_from
from knowledge_service.errors import BadRequest, InternalError, PermissionDenied, ServiceError, Unauthenticated
from knowledge_service.identity.authentication import presented_token_hash
from knowledge_service.identity.principal import Permission, Principal
from knowledge_service.identity.session import (
    CSRF_HEADER,
    SAFE_METHODS,
    carries_csrf_header,
    has_authorization,
    session_id_in,
)
from knowledge_service.models import DEFAULT_PROJECT, KnowledgeSettings
from knowledge_service.runtime import runtime

if TYPE_CHECKING:
    from knowledge_service.domain.reads import Reader
    from knowledge_service.storage.admission import DoorRecords
    from knowledge_service.storage.config_store import ScopeRecords
    from knowledge_service.storage.principals import PrincipalRecord

__all__ = ["Standing"]

PERMISSION_KEY = "x-permission"
CAPABILITY_KEY = "x-capability"
PROJECT_ACCESS_KEY = "x-project-access"
PUBLIC = "public"
"""The one declaration that answers anyone: the console's own files (``edge/routes/console.py``),
and only under :data:`PUBLIC_PREFIX` (a route elsewhere declaring it is refused like one that
declares nothing)."""
PUBLIC_PREFIX = "/console"
REQUEST_BODY_KEY = "x-request-body"
"""A route that reads its own body (multipart) declares its OpenAPI ``requestBody`` here."""
STARTS_WORK_KEY = "x-starts-work"
"""A ``GET`` that starts work (builds the base's archive) declares it: with the console's session
it takes the console's header as a write does, so a cross-site image cannot start it."""


def access(permission: Permission, *, project: Standing, capability: str | None = None) -> dict[str, Any]:
    """The route's access declaration (pass as ``openapi_extensions``)."""
    declared: dict[str, Any] = {PERMISSION_KEY: permission.value, PROJECT_ACCESS_KEY: project.value}
    if capability:
        declared[CAPABILITY_KEY] = capability
    return declared


def caller(event: BaseProxyEvent) -> Principal:
    """The active principal the request's bearer token (or console session) stands for (one
    consistent read), or the one 401 every bad, unknown or revoked token gets. The verbs and
    pages surfaces authenticate with :func:`admitted`; the ``/knowledge`` surface through :func:`hold`."""
    hashed = presented_credential(event)
    if hashed is None:
        raise _unauthenticated()
    return _active(runtime().principals.by_token_hash(hashed))


def admitted(
    event: BaseProxyEvent,
    project: str | None,
    extra: Mapping[str, list[dict[str, Any]]] | None = None,
    *,
    starts_work: bool = False,
) -> tuple[Principal, DoorRecords]:
    """The active principal (as :func:`caller`) read in one consistent BatchGetItem with the
    record of ``project`` (when named) and the route's own ``extra`` keys (``storage/admission``):
    the pages and verbs surfaces' door, one DynamoDB request as the reads' is."""
    hashed = presented_credential(event, starts_work=starts_work)
    if hashed is None:
        raise _unauthenticated()
    records = runtime().door.read(hashed, project, extra)
    return _active(records.principal), records


def presented_credential(event: BaseProxyEvent, *, starts_work: bool = False) -> str | None:
    """The token hash the request presents: its bearer token's, else its console session's
    (``identity/session.py``), else None.

    A request with an ``Authorization`` header is judged by it alone, well-formed or not. A
    request that authenticates by its session cookie and changes state must carry the
    console's header, which a cross-site form cannot set: refused before the session is read
    otherwise (the answer does not depend on whether the session exists). So must a ``GET``
    that starts work (``starts_work``: the route declares :data:`STARTS_WORK_KEY`). Two
    ``Authorization`` headers are refused (400), never judged by whichever one a layer keeps."""
    headers = event.headers
    repeated = [
        name
        for name, values in (event.raw_event.get("multiValueHeaders") or {}).items()
        if name.lower() == "authorization"
        for _ in values or ()
    ]
    if len(repeated) > 1:
        raise BadRequest("Authorization", "is given more than once; send one.")
    if has_authorization(headers):
        return presented_token_hash(headers)
    session_id = session_id_in(headers)
    if session_id is None:
        return None
    changes = starts_work or event.http_method.upper() not in SAFE_METHODS
    if changes and not carries_csrf_header(headers):
        raise PermissionDenied(
            f"A request made with the console's session that changes anything must carry the {CSRF_HEADER} header.",
            code="csrf_header_required",
        )
    rt = runtime()
    return rt.sessions.token_hash_for(session_id, rt.clock())


def _unauthenticated() -> Unauthenticated:
    return Unauthenticated("A valid bearer token is required.")


def _active(record: PrincipalRecord | None) -> Principal:
    if record is None or not record.active:
        raise _unauthenticated()
    return record.principal()


def _project_named(event: BaseProxyEvent) -> str | None:
    """The project the request names, as far as can be told before the route runs
    (``?project=``, else a JSON body's ``project``, else the console default), or None when
    what it names is not a project id (the route refuses it, after access)."""
    named = (event.query_string_parameters or {}).get("project")
    if not named:
        try:
            body = event.json_body if event.body else None
        except (ValueError, TypeError, ServiceError):  # not JSON, or past the reader's bounds:
            body = None  # the route refuses it, after access
        found = body.get("project") if isinstance(body, dict) else None
        named = found if isinstance(found, str) else None
    key = named or DEFAULT_PROJECT
    return key if not key or PROJECT_ID.fullmatch(key) else None


_ROUTE_SIGNATURE = inspect.signature(APIGatewayRestResolver.route)
_PARAM = re.compile(r"<(\w+)>")


class DeclaredRoutes(APIGatewayRestResolver):
    """A REST resolver that keeps each registered route's access declaration by method and
    route pattern: the two things Powertools' public ``app.request`` tells of the route it
    matched (a router's routes are registered through ``route`` when it is included)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.declarations: dict[tuple[str, str], dict[str, Any]] = {}

    def route(self, *args: Any, **kwargs: Any) -> Any:
        given = _ROUTE_SIGNATURE.bind(self, *args, **kwargs).arguments
        methods = given["method"]
        pattern = _PARAM.sub(r"{\1}", given["rule"])
        for method in [methods] if isinstance(methods, str) else methods:
            self.declarations[(method.upper(), pattern)] = dict(given.get("openapi_extensions") or {})
        return super().route(*args, **kwargs)

    def declared(self) -> dict[str, Any] | None:
        """The matched route's declaration, or None when no registered route matched (a
        request Powertools answers through a stand-in route of its own)."""
        return self.declarations.get((self.request.method.upper(), self.request.route))


@dataclass
class Call:
    """One request's caller, held to its route's declaration; its scopes, resolved once."""

    principal: Principal
    standing: Standing | None
    _read: dict[str, ScopeRecords] = field(default_factory=dict)  # read with the principal
    _scopes: dict[str, Scope] = field(default_factory=dict)

    def scope(self, project: str | None) -> Scope:
        """The call's scope for ``project``, at the standing the matched route declares."""
        if self.standing not in SCOPED:
            raise InternalError("This route resolves a project scope but declares no project standing for it.")
        key = project or DEFAULT_PROJECT
        if key not in self._scopes:
            rt = runtime()
            if key in self._read:
                self._scopes[key] = scope_from(rt.env, self._read.pop(key), self.principal, key, self.standing)
            else:
                self._scopes[key] = resolve_scope(rt.env, rt.config, self.principal, project, self.standing)
        return self._scopes[key]

    def settings(self) -> KnowledgeSettings:
        """The knowledge settings, as read with the principal when the route is an
        installation route (else read now)."""
        records = self._read.get(DEFAULT_PROJECT) if self.standing is Standing.INSTALLATION else None
        return records.settings if records is not None else runtime().config.settings()

    def reader(self, project: str | None) -> Reader:
        """The scope for ``project`` and the FORAGER client its settings open."""
        from knowledge_service.domain.reads import Reader

        scope = self.scope(project)
        return Reader(scope, runtime().upstream.client(scope.settings))


_current: ContextVar[Call | None] = ContextVar("knowledge_call", default=None)


def current_call() -> Call:
    """The request's :class:`Call`, as :func:`hold` opened it."""
    call = _current.get()
    if call is None:
        raise InternalError("This route runs outside the access hook.")
    return call


def scope_of(project: str | None) -> Scope:
    """The call's scope for ``project`` (``current_call().scope``)."""
    return current_call().scope(project)


def authorize(event: BaseProxyEvent, declared: Mapping[str, Any]) -> Call:
    """Hold ``declared`` against the caller: authentication, permission, then capability.

    A route that resolves a scope reads the caller's principal in the same consistent
    BatchGetItem as the settings, binding and project the request names: a read is one
    DynamoDB request. Any other route reads the principal alone (one GetItem)."""
    permission = declared.get(PERMISSION_KEY)
    if permission is None:
        raise InternalError("This route declares no permission, so it answers no one.")
    hashed = presented_credential(event, starts_work=bool(declared.get(STARTS_WORK_KEY)))
    if hashed is None:
        raise _unauthenticated()  # no principal read for a request that carries no token or live session
    standing = Standing(declared[PROJECT_ACCESS_KEY]) if PROJECT_ACCESS_KEY in declared else None
    rt = runtime()
    # A scoped route reads its principal with the scope the request names; an installation
    # route with the settings (the console default's records): one request either way.
    key = _project_named(event) if standing in SCOPED else None
    if standing is Standing.INSTALLATION:
        key = DEFAULT_PROJECT
    read: dict[str, ScopeRecords] = {}
    if key is not None:
        read[key] = rt.config.scope(key, hashed)
        principal = _active(read[key].principal)
    else:
        principal = _active(rt.principals.by_token_hash(hashed))
    if not principal.holds(Permission(permission)):
        raise PermissionDenied(f"This route takes the {permission} permission.")
    capability = declared.get(CAPABILITY_KEY)
    if capability and capability not in BASE_CAPABILITIES:  # a base capability needs no subscription read
        require_capability(capability, rt.subscription())
    return Call(principal, standing, read)


@contextmanager
def hold(event: BaseProxyEvent, declared: Mapping[str, Any]) -> Iterator[Call]:
    """Authorize the request and open its :class:`Call` for the route; closed after it."""
    call = authorize(event, declared)
    token = _current.set(call)
    try:
        yield call
    finally:
        _current.reset(token)
