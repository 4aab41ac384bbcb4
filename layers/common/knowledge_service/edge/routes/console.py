"""The console's function: the console itself under ``/console/``, and the routes of the API
that only a person signing in needs (``POST``/``DELETE /knowledge/session``) or that tell the
caller who it is (``GET /knowledge/me``).

The console is files: ``functions/console/static/`` shipped in the function's own package
(``LAMBDA_TASK_ROOT``), read once per container and served as they are, with a strict
Content-Security-Policy (no inline script or style, nothing from another origin) and an
ETag. Those two routes are the only ones that answer anyone (``x-permission: public``): a
file of the console holds no data, and everything the console shows it reads from the API
with the person's session, held to the same rules as a bearer token (``identity/session.py``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path, PurePosixPath
from typing import TypeVar
from urllib.parse import urlsplit

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from aws_lambda_powertools.shared.cookies import Cookie

from knowledge_service.base_model import Model
from knowledge_service.edge.access import PERMISSION_KEY, PUBLIC, Standing, access, current_call
from knowledge_service.edge.envelope import Envelope, error_responses, ok
from knowledge_service.errors import NotFound, PermissionDenied, Unauthenticated
from knowledge_service.identity.authentication import presented_token_hash
from knowledge_service.identity.principal import Permission, PrincipalKind, ProjectRole, header
from knowledge_service.identity.session import ended_cookie, has_authorization, session_cookie, session_id_in
from knowledge_service.runtime import runtime

Answer = TypeVar("Answer", bound=Model)
router = APIGatewayRouter()
assets = APIGatewayRouter()
routers = (router, assets)


def content_security_policy(upload_origin: str | None) -> str:
    """The console's policy: its own files and the API, nothing inline, nothing from elsewhere;
    the one other origin it may reach is the staging bucket's, where an upload session's
    presigned PUTs go (``POST /knowledge/upload/sessions``; the bucket's CORS rule admits the
    API's origin)."""
    connect = "connect-src 'self'" + (f" {upload_origin}" if upload_origin else "")
    return "; ".join(
        (
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            connect,
            "font-src 'self'",
            "manifest-src 'self'",
            "worker-src 'self'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        )
    )


@cache
def upload_origin() -> str | None:
    """The origin of the staging bucket's presigned URLs, as the ingestion function signs them
    (signed here once per container, never sent: only its scheme and host are read)."""
    rt = runtime()
    if not rt.env.archive_bucket:
        return None
    url = urlsplit(rt.staging.presigned_put("staged/origin", 1, 60))
    return f"{url.scheme}://{url.netloc}"


ASSET_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-cache",  # revalidated each load: the ETag makes that a 304
}
ASSET_PATH_MAX = 200
TYPES = {  # the kinds of file the console is made of (text, all of them); any other is not served
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
}


# ---------------------------------------------------------------------- who am I, the session
class PickableProject(Model):
    project: str
    role: ProjectRole | None
    """The caller's role on it; None where it stands there as the owner of its organization."""


class SessionView(Model):
    expires_at: datetime


class Me(Model):
    """``GET /knowledge/me``: the caller, what it holds, and the projects it may pick."""

    name: str
    kind: PrincipalKind
    permissions: list[Permission]
    project_roles: dict[str, ProjectRole]
    organizations: list[str]
    installation_organization: str
    owns_installation: bool
    """Whether the caller owns the installation's organization: acting on the console default."""
    projects: list[PickableProject]
    session: SessionView | None
    """The console session the call came with, and when it ends unless used; None with a bearer token."""


def me(session: SessionView | None = None) -> Me:
    rt = runtime()
    principal = current_call().principal
    picks = {project: PickableProject(project=project, role=role) for project, role in principal.project_roles.items()}
    if principal.organizations:  # an owner stands in every project of its organizations
        for project in rt.projects.in_organizations(set(principal.organizations)):
            picks.setdefault(project, PickableProject(project=project, role=None))
    return Me(
        name=principal.name,
        kind=principal.kind,
        permissions=sorted(principal.permissions),
        project_roles=dict(sorted(principal.project_roles.items())),
        organizations=sorted(principal.organizations),
        installation_organization=rt.env.installation_organization,
        owns_installation=principal.owns(rt.env.installation_organization),
        projects=[picks[p] for p in sorted(picks)],
        session=session,
    )


def _session_of(headers: Mapping[str, str]) -> str | None:
    """The session id the call authenticated with: None for a call made with a bearer token
    (``presented_credential`` judges such a call by its token alone)."""
    return None if has_authorization(headers) else session_id_in(headers)


@router.get(
    "/knowledge/me",
    operation_id="get_me",
    summary="Who the caller is: its permissions, roles and the projects it may pick",
    tags=["session"],
    openapi_extensions=access(Permission.READ_STATUS, project=Standing.INSTALLATION),
    responses=error_responses(401, 403, 500),
)
def get_me() -> Envelope[Me]:
    session_id = _session_of(router.current_event.headers)
    expires = runtime().sessions.expires_at(session_id) if session_id else None
    view = SessionView(expires_at=datetime.fromtimestamp(expires, tz=UTC)) if expires else None
    return ok(me(view))


@router.post(
    "/knowledge/session",
    operation_id="sign_in",
    summary="Sign in: exchange a person's bearer token for a console session (a cookie)",
    description=(
        "Answers Set-Cookie: __Host-knowledge-session=<id>; Path=/; HttpOnly; Secure; SameSite=Strict. "
        "A request made with the cookie that changes anything must carry X-Knowledge-Console: 1."
    ),
    tags=["session"],
    openapi_extensions=access(Permission.READ_STATUS, project=Standing.INSTALLATION),
    responses=error_responses(401, 403, 500),
)
def post_session() -> Response[Envelope[Me]]:
    principal = current_call().principal
    if principal.kind is PrincipalKind.AGENT:
        raise PermissionDenied("A console session is for a person; an agent calls with its own token.")
    token_hash = presented_token_hash(router.current_event.headers)
    if token_hash is None:  # a session is made from a token, never from another session
        raise Unauthenticated("Signing in takes the principal's bearer token.")
    rt = runtime()
    session_id, ends = rt.sessions.begin(token_hash, principal.name, rt.clock())
    return _setting(session_cookie(session_id), ok(me(SessionView(expires_at=ends)), message="signed in"))


class SignedOut(Model):
    signed_out: bool
    """Whether a session ended: False for a call made with a bearer token (there is none to end)."""


@router.delete(
    "/knowledge/session",
    operation_id="sign_out",
    summary="Sign out: end the console session the call came with",
    tags=["session"],
    openapi_extensions=access(Permission.READ_STATUS, project=Standing.INSTALLATION),
    responses=error_responses(401, 403, 500),
)
def delete_session() -> Response[Envelope[SignedOut]]:
    session_id = _session_of(router.current_event.headers)
    if session_id is not None:
        runtime().sessions.end(session_id)
    return _setting(ended_cookie(), ok(SignedOut(signed_out=session_id is not None), message="signed out"))


def _setting(cookie: Cookie, body: Answer) -> Response[Answer]:
    """The envelope, never cached, with the ``Set-Cookie`` that begins or ends the session."""
    return Response(
        status_code=200,
        content_type=content_types.APPLICATION_JSON,
        body=body,
        headers={"Cache-Control": "no-store"},
        cookies=[cookie],
    )


# ---------------------------------------------------------------------- the console's files
@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str
    etag: str


_assets: dict[str, Asset | None] = {}  # the package's files, read once per container (never request data)


def _root() -> Path:
    # Where this function's package is, as the runtime says it per function (``/var/task`` on
    # Lambda; the local stack sets it for each function it hosts, in process too): not a
    # setting of the deployment, so not read through ``Environment`` once per container.
    return Path(os.environ.get("LAMBDA_TASK_ROOT", ".")) / "static"


def _asset(relative: str) -> Asset | None:
    if relative not in _assets:
        path = _root() / relative
        kind = TYPES.get(path.suffix)
        if kind is None or not path.is_file():
            _assets[relative] = None
        else:
            body = path.read_bytes()
            _assets[relative] = Asset(body, kind, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')
    return _assets[relative]


def _clean(path: str) -> str | None:
    """The file a path names under ``static/``, or None: only plain names, never ``..``, a
    hidden file or anything not a file of the package."""
    if not path or len(path) > ASSET_PATH_MAX:
        return None
    parts = PurePosixPath(path).parts
    if not parts or any(p in ("", ".", "..") or p.startswith(".") or "\\" in p for p in parts):
        return None
    return "/".join(parts)


def _serve(*parts: str) -> Response[str]:
    relative = _clean("/".join(parts))
    found = _asset(relative) if relative is not None else None
    if found is None:
        raise NotFound("No such file in the console.")
    headers = {**ASSET_HEADERS, "Content-Security-Policy": content_security_policy(upload_origin()), "ETag": found.etag}
    if header(router.current_event.headers, "If-None-Match") == found.etag:
        return Response(status_code=304, body="", headers=headers)
    return Response(status_code=200, content_type=found.content_type, body=found.body.decode("utf-8"), headers=headers)


# ``template.yaml`` sends ``/console`` and ``/console/{proxy+}`` here; a file is at most three
# folders deep (``vendor/preact.js``, ``screens/search.js``).
PUBLIC_FILE = {PERMISSION_KEY: PUBLIC}


@assets.get("/console", include_in_schema=False, openapi_extensions=PUBLIC_FILE)
def get_console() -> Response[str]:
    return _serve("index.html")


@assets.get("/console/<a>", include_in_schema=False, openapi_extensions=PUBLIC_FILE)
def get_console_file(a: str) -> Response[str]:
    return _serve(a)


@assets.get("/console/<a>/<b>", include_in_schema=False, openapi_extensions=PUBLIC_FILE)
def get_console_file_in_folder(a: str, b: str) -> Response[str]:
    return _serve(a, b)


@assets.get("/console/<a>/<b>/<c>", include_in_schema=False, openapi_extensions=PUBLIC_FILE)
def get_console_file_two_deep(a: str, b: str, c: str) -> Response[str]:
    return _serve(a, b, c)
