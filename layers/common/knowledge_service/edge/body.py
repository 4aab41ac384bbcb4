"""Reading a request body: bounded before it is parsed, in one place, before any model sees it.

Python's ``json`` module has no limits of its own: a body nested a thousand deep raises
``RecursionError`` and an integer of more than 4,300 digits ``ValueError``, both of which
would reach the caller as a 500. The resolver parses every body with :func:`read_json`
instead, so that each is the caller's ``400 bad_request`` naming ``body`` (and, like every
unreadable body, only after the route's access is held).

JSON allows what UTF-8 cannot carry: a lone surrogate (``"\\ud800"``) parses to a ``str`` that
raises ``UnicodeEncodeError`` wherever it is stored, hashed or sent. :func:`read_json` refuses
one anywhere in the body as a ``400`` naming the field that holds it (``files.0.name``), so
every surface and every model is covered once (issue 39). It refuses as well an object that
gives one key twice (JSON's parsers disagree on which wins): a ``400`` naming the key.

A body is read as JSON whatever ``Content-Type`` it declares when it is a JSON object:
the console and ``curl -d`` both send JSON, and curl declares form encoding unless told
otherwise. :func:`as_json_request` says so to Powertools before it picks a parser.
"""

from __future__ import annotations

import base64
import json
import math
import re
from typing import Any

from knowledge_service.errors import BadRequest, PayloadTooLarge

MAX_BODY_BYTES = 1_048_576
"""The largest body the edge parses (API Gateway would carry 10 MB, Lambda 6 MB)."""
MAX_DEPTH = 32
"""Arrays and objects inside one another; every request model is far shallower."""
MAX_NUMBER_CHARACTERS = 64
"""The longest number written in a body (an integer's digits, or a float's text)."""

# A JSON string (escapes included) or one bracket: brackets inside strings do not nest.
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_OPENERS = frozenset("[{")
_CLOSERS = frozenset("]}")
_JSON_TYPE = "application/json"


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class UnreadableBody(BadRequest):
    """400 naming ``body`` (too large, too deep, a number too long, or not JSON at all), or the
    field that holds what UTF-8 cannot carry, or the key an object gives twice."""

    def __init__(self, problem: str, field: str = "body") -> None:
        super().__init__(field, problem)


def body_bytes(body: str | None, base64_encoded: bool, limit: int) -> bytes:
    """A proxy event's body as bytes, refused ``413`` before it is decoded whole when it cannot
    fit ``limit`` (a base64 body is measured by its encoded length first)."""
    raw = body or ""
    if base64_encoded:
        if len(raw) > (limit // 3 + 1) * 4:
            raise PayloadTooLarge(f"The body is over its limit of {limit} bytes.")
        data = base64.b64decode(raw)
    else:
        if len(raw) > limit:
            raise PayloadTooLarge(f"The body is over its limit of {limit} bytes.")
        data = raw.encode("utf-8", "surrogatepass")
    if len(data) > limit:
        raise PayloadTooLarge(f"The body is over its limit of {limit} bytes.")
    return data


def read_json(text: str | bytes | bytearray, limit: int = MAX_BODY_BYTES) -> Any:
    """Parse a request body within the bounds above, or raise :class:`UnreadableBody`.

    ``limit`` is the surface's own size bound where it takes more (a page's JSON body carries
    a page of up to 1 MiB); the depth and number bounds are everyone's."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) > limit:
            raise UnreadableBody(f"is larger than {limit:,} bytes.")
        text = bytes(text).decode("utf-8")
    if len(text) > limit or len(text.encode("utf-8", "surrogatepass")) > limit:
        raise UnreadableBody(f"is larger than {limit:,} bytes.")
    _check_depth(text)
    value = json.loads(
        text, parse_int=_integer, parse_float=_float, parse_constant=_constant, object_pairs_hook=_unique_keys
    )
    if _SURROGATE_ESCAPE.search(text) or _SURROGATE.search(text):
        _refuse_surrogates(value, "")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members, refusing a key given twice (``400`` naming the key)."""
    found: dict[str, Any] = {}
    for key, member in pairs:
        if key in found:
            shown = key if not _SURROGATE.search(key) and key.isprintable() and len(key) <= 64 else "body"
            raise UnreadableBody("is given twice in one object.", shown)
        found[key] = member
    return found


def _refuse_surrogates(value: Any, path: str) -> None:
    """Refuse a lone surrogate anywhere in ``value``, naming the field (``a.0.b``) that holds it."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise UnreadableBody("holds a lone surrogate, which is not text UTF-8 can carry.", path or "body")
    elif isinstance(value, dict):
        for key, member in value.items():
            if _SURROGATE.search(key):
                raise UnreadableBody("has a key with a lone surrogate, which UTF-8 cannot carry.")
            _refuse_surrogates(member, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, member in enumerate(value):
            _refuse_surrogates(member, f"{path}.{index}" if path else str(index))


def _check_depth(text: str) -> None:
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return  # cannot nest deeper than it has brackets
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        lexeme = match.group()
        if lexeme in _OPENERS:
            depth += 1
            if depth > MAX_DEPTH:
                raise UnreadableBody(f"is nested deeper than {MAX_DEPTH} levels.")
        elif lexeme in _CLOSERS:
            depth -= 1


def _integer(digits: str) -> int:
    if len(digits) > MAX_NUMBER_CHARACTERS:
        raise UnreadableBody(f"holds a number longer than {MAX_NUMBER_CHARACTERS} characters.")
    return int(digits)


def _float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARACTERS:
        raise UnreadableBody(f"holds a number longer than {MAX_NUMBER_CHARACTERS} characters.")
    value = float(text)
    if not math.isfinite(value):
        raise UnreadableBody("holds a number too large to represent.")
    return value


def _constant(name: str) -> Any:
    raise UnreadableBody(f"is not valid JSON ({name} is not a JSON value).")


def declared_type(headers: dict[str, Any] | None) -> str | None:
    """The media type a request declares (lower case, parameters dropped), or None."""
    for name, value in (headers or {}).items():
        if name.lower() == "content-type" and isinstance(value, str):
            return value.split(";", 1)[0].strip().lower()
    return None


def as_json_request(event: dict[str, Any]) -> dict[str, Any]:
    """The event, declaring ``application/json`` when its body is a JSON object whatever
    type it declared (``curl -d`` sends form encoding); any other event unchanged."""
    body = event.get("body")
    if not isinstance(body, str) or event.get("isBase64Encoded") or not body.lstrip().startswith("{"):
        return event
    if declared_type(event.get("headers")) == _JSON_TYPE:
        return event
    headers = {k: v for k, v in (event.get("headers") or {}).items() if k.lower() != "content-type"}
    headers["Content-Type"] = _JSON_TYPE
    rewritten = {**event, "headers": headers}
    multi = event.get("multiValueHeaders")
    if isinstance(multi, dict):
        rewritten["multiValueHeaders"] = {
            **{k: v for k, v in multi.items() if k.lower() != "content-type"},
            "Content-Type": [_JSON_TYPE],
        }
    return rewritten
