"""The console's session: what a browser holds instead of a bearer token.

Signing in exchanges a principal's token for a session (``POST /knowledge/session``): an
opaque id of 256 random bits in a cookie the page's scripts cannot read (``HttpOnly``), sent
only over HTTPS (``Secure``; browsers treat loopback as secure), only by this origin's own
pages (``SameSite=Strict``), for the whole origin (``Path=/``, no ``Domain``: the
``__Host-`` prefix, which makes the browser refuse the cookie otherwise). The service keeps
only the id's SHA-256 (``storage/sessions.py``), beside the principal's token hash, so a
session stands for its principal exactly as the token does: same permissions, roles and
scope, and a revoked principal's sessions fail on their next request with its token.

A cookie is sent by the browser on its own, so a state-changing request that authenticates
by it must also carry :data:`CSRF_HEADER`: a cross-site form or image cannot set a header,
and without CORS no other origin's script may. A request with a bearer token needs no such
header (no browser attaches ``Authorization`` by itself), and takes precedence over a cookie.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from http.cookies import CookieError, SimpleCookie

from aws_lambda_powertools.shared.cookies import Cookie, SameSite

from knowledge_service.identity.principal import header

COOKIE_NAME = "__Host-knowledge-session"
CSRF_HEADER = "X-Knowledge-Console"
CSRF_VALUE = "1"
LIFETIME_SECONDS = 8 * 60 * 60  # sliding: each request moves the end 8 hours on
REFRESH_AFTER_SECONDS = 5 * 60  # the end is moved at most once per 5 minutes of use (one write)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_ID_BYTES = 32
_COOKIE_HEADER_MAX = 8192


def new_session_id() -> str:
    """A new session id: 256 random bits, URL-safe, never stored (only its hash is)."""
    return secrets.token_urlsafe(_ID_BYTES)


def session_hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()


def has_authorization(headers: Mapping[str, str] | None) -> bool:
    """Whether the request carries an ``Authorization`` header at all (well-formed or not):
    a request that tries a token is judged by its token, never by a cookie beside it."""
    return header(headers, "Authorization") is not None


def session_id_in(headers: Mapping[str, str] | None) -> str | None:
    """The session id the request's ``Cookie`` header carries, or None (absent, unreadable,
    or not the shape :func:`new_session_id` makes)."""
    raw = header(headers, "Cookie")
    if not raw or len(raw) > _COOKIE_HEADER_MAX:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except CookieError:
        return None
    morsel = jar.get(COOKIE_NAME)
    value = morsel.value if morsel is not None else ""
    return value if _well_formed(value) else None


def _well_formed(value: str) -> bool:
    return len(value) == 43 and all(c.isalnum() or c in "-_" for c in value)


def carries_csrf_header(headers: Mapping[str, str] | None) -> bool:
    return header(headers, CSRF_HEADER) == CSRF_VALUE


def session_cookie(session_id: str) -> Cookie:
    """The ``Set-Cookie`` of a new session: no ``Max-Age`` (the service ends it, sliding)."""
    return Cookie(
        name=COOKIE_NAME, value=session_id, path="/", secure=True, http_only=True, same_site=SameSite.STRICT_MODE
    )


def ended_cookie() -> Cookie:
    """The ``Set-Cookie`` that makes the browser drop the session's cookie."""
    return Cookie(
        name=COOKIE_NAME, value="", path="/", secure=True, http_only=True, same_site=SameSite.STRICT_MODE, max_age=0
    )
