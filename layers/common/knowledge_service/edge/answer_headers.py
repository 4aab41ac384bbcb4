"""The headers every answer a function gives carries, added in one place: the door's resolve
(``knowledge_service.door.api``), after the surface rendered the answer, whatever it is — a
route's answer, a refusal, a 404, the MCP SDK's — so no answer can be left without them.

- Every answer: ``X-Content-Type-Options: nosniff``.
- An answer under ``/console`` (the console's files, their 404s included): the
  ``Content-Security-Policy`` (a file's own is kept; any other answer, a refusal, gets
  :data:`REFUSAL_POLICY`, which lets nothing load) and ``Referrer-Policy: no-referrer``.
- Every other answer (the API's, authenticated): ``Cache-Control: no-store`` unless it set its
  own.
- Any answer to a request that came over HTTPS (API Gateway's ``X-Forwarded-Proto``):
  ``Strict-Transport-Security``; the local stack speaks plain HTTP on loopback and sends none.

A header the answer already names, in any letter case, is left as it is. API Gateway's own
answers (a route miss, a 413) carry the same headers from ``template.yaml``'s gateway responses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CONSOLE_PREFIX = "/console"
REFUSAL_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
"""The console's refusals show nothing and load nothing."""
HSTS = "max-age=63072000; includeSubDomains"
"""Two years, as the HSTS preload list asks; sent only over HTTPS (RFC 6797 §7.2)."""


def standard_headers(event: Mapping[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` with the headers above added where it names none of its own."""
    path = str(event.get("path") or "")
    wanted = [("X-Content-Type-Options", "nosniff")]
    if path == CONSOLE_PREFIX or path.startswith(CONSOLE_PREFIX + "/"):
        wanted += [("Content-Security-Policy", REFUSAL_POLICY), ("Referrer-Policy", "no-referrer")]
    else:
        wanted.append(("Cache-Control", "no-store"))
    if _over_https(event):
        wanted.append(("Strict-Transport-Security", HSTS))
    single = answer.get("headers")
    multi = answer.get("multiValueHeaders")
    named = {str(k).lower() for k in (single or {})} | {str(k).lower() for k in (multi or {})}
    for name, value in wanted:
        if name.lower() in named:
            continue
        if isinstance(multi, dict):
            multi[name] = [value]
        else:
            if not isinstance(single, dict):
                single = answer["headers"] = {}
            single[name] = value
    return answer


def _over_https(event: Mapping[str, Any]) -> bool:
    for source in (event.get("headers") or {}, event.get("multiValueHeaders") or {}):
        for name, value in source.items():
            if str(name).lower() == "x-forwarded-proto":
                values = value if isinstance(value, list) else [value]
                return any(str(v).split(",")[0].strip().lower() == "https" for v in values)
    return False
