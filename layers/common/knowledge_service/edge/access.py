"""Who may call a route: declared once on the route, held by one middleware.

Every route declares its installation permission (and, where the catalog names one, its
commercial capability) with ``access(...)``. The declaration lives in the route's OpenAPI
extensions, so the published document says it too, and the authorization matrix reads it
back. A route that declares nothing is refused: access fails closed.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from enum import StrEnum
from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import BaseRouter
from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent
from pydantic import ValidationError

from knowledge_service.domain.commerce import BASE_CAPABILITIES, require_capability
from knowledge_service.domain.scope import Scope, Standing, resolve_scope
from knowledge_service.errors import InternalError, PermissionDenied, Unauthenticated
from knowledge_service.identity.principal import Permission, Principal
from knowledge_service.runtime import runtime

PERMISSION_KEY = "x-permission"
CAPABILITY_KEY = "x-capability"
PROJECT_ACCESS_KEY = "x-project-access"
REQUEST_BODY_KEY = "x-request-body"
"""A route that reads its own body (multipart) declares its OpenAPI ``requestBody`` here."""


class ProjectAccess(StrEnum):
    """What standing a route takes in the project a call names (``?project=`` or the body).

    Declared on the route, so the document says it and the authorization matrix holds the
    route to it; the route enforces it through ``resolve_scope`` (or the domain, for admin).
    """

    INSTALLATION = "installation"  # the installation's configuration: no project standing
    READ = "read"  # any role on the project, or ownership of its organization
    OPERATOR = "operator"  # the project's operator or admin
    ADMIN = "admin"  # the project's admin


def access(permission: Permission, *, project: ProjectAccess, capability: str | None = None) -> dict[str, Any]:
    """The route's access declaration (pass as ``openapi_extensions``)."""
    declared: dict[str, Any] = {PERMISSION_KEY: permission.value, PROJECT_ACCESS_KEY: project.value}
    if capability:
        declared[CAPABILITY_KEY] = capability
    return declared


def caller(event: BaseProxyEvent) -> Principal:
    """The principal the authorizer put in the request context."""
    raw = (event.raw_event.get("requestContext") or {}).get("authorizer") or {}
    try:
        return Principal.model_validate(json.loads(raw["principal"]))
    except (KeyError, TypeError, ValueError, ValidationError) as error:
        raise Unauthenticated("A valid bearer token is required.") from error


_STANDING = {ProjectAccess.READ: Standing.READ, ProjectAccess.OPERATOR: Standing.OPERATOR}


# The matched route's declared standing, as ``authorize`` read it from the resolver that
# matched the request. A router's own context belongs to whichever resolver included it
# last, so it is not where a route learns what it declared.
_project_access: ContextVar[ProjectAccess | None] = ContextVar("project_access", default=None)


def scope_of(app: BaseRouter, project: str | None) -> Scope:
    """The call's scope, resolved at the standing the matched route declares: the route
    states its ``x-project-access`` once, and this is where that declaration is held."""
    declared = _project_access.get()
    if declared not in _STANDING:
        raise InternalError("This route resolves a project scope but declares no project standing for it.")
    rt = runtime()
    return resolve_scope(rt.env, rt.config, caller(app.current_event), project, _STANDING[declared])


def _declared(app: BaseRouter) -> dict[str, Any]:
    route = app.context.get("_route")
    return (getattr(route, "openapi_extensions", None) or {}) if route is not None else {}


def authorize(app: BaseRouter) -> Principal:
    """Hold the matched route's declaration against the caller: permission, then capability."""
    declared = _declared(app)
    _project_access.set(ProjectAccess(declared[PROJECT_ACCESS_KEY]) if PROJECT_ACCESS_KEY in declared else None)
    principal = caller(app.current_event)
    permission = declared.get(PERMISSION_KEY)
    if permission is None:
        raise InternalError("This route declares no permission, so it answers no one.")
    if not principal.holds(Permission(permission)):
        raise PermissionDenied(f"This route takes the {permission} permission.")
    capability = declared.get(CAPABILITY_KEY)
    if capability and capability not in BASE_CAPABILITIES:  # a base capability needs no subscription read
        require_capability(capability, runtime().subscription())
    return principal
