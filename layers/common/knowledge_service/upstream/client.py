"""The FORAGER client.

Bearer credential on every request, an ``Idempotency-Key`` on every POST, timeouts well
inside API Gateway's 29 seconds, redirects never followed, and every transport or upstream
failure turned into the envelope's codes:

| what happened                         | raised                      | status |
| ------------------------------------- | --------------------------- | ------ |
| connection refused, DNS, reset early  | ``KnowledgeUnreachable``    | 503    |
| no answer within the timeout          | ``UpstreamTimeout``         | 504    |
| 3xx, 401/403, 429, 5xx, bad JSON/shape| ``UpstreamError``           | 502    |
| another 4xx, in FORAGER's own words   | ``UpstreamRefused`` (a 502 unless the domain expects it) | |
"""

from __future__ import annotations

import json
import uuid
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from knowledge_service.errors import KnowledgeUnreachable, UpstreamError, UpstreamRefused, UpstreamTimeout
from knowledge_service.upstream.models import Capabilities, EngineStatus, ForagerProject, ProjectList

ModelT = TypeVar("ModelT", bound=BaseModel)

USER_AGENT = "knowledge-service/0.1"


def default_timeout(seconds: float) -> httpx.Timeout:
    return httpx.Timeout(seconds, connect=min(3.0, seconds))


class ForagerClient:
    """One FORAGER endpoint, one credential. Hand in ``http`` to share a connection pool."""

    def __init__(
        self, endpoint: str, credential: str, *, http: httpx.Client | None = None, timeout_seconds: float = 8.0
    ) -> None:
        self.endpoint = endpoint.rstrip("/")
        self._credential = credential
        self._http = http or httpx.Client(timeout=default_timeout(timeout_seconds), follow_redirects=False)

    # ------------------------------------------------------------------ the contract
    def status(self) -> EngineStatus:
        return self._get("/api/status", EngineStatus)

    def capabilities(self) -> Capabilities:
        return self._get("/api/capabilities", Capabilities)

    def projects(self) -> list[ForagerProject]:
        return self._get("/api/projects", ProjectList).projects

    def create_project(self, name: str, description: str, *, idempotency_key: str | None = None) -> ForagerProject:
        body = {"name": name}
        if description:
            body["description"] = description
        return self._post("/api/projects", body, ForagerProject, idempotency_key=idempotency_key)

    # ------------------------------------------------------------------ plumbing
    def _get(self, path: str, model: type[ModelT], params: dict[str, Any] | None = None) -> ModelT:
        return self._parse(self._send("GET", path, params=params), model)

    def _post(
        self, path: str, body: dict[str, Any], model: type[ModelT], *, idempotency_key: str | None = None
    ) -> ModelT:
        headers = {"Idempotency-Key": idempotency_key or uuid.uuid4().hex}
        return self._parse(self._send("POST", path, json_body=body, headers=headers), model)

    def _send(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json_body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        request_headers = {
            "Authorization": f"Bearer {self._credential}",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
            **(headers or {}),
        }
        try:
            response = self._http.request(
                method, self.endpoint + path, params=params, json=json_body, headers=request_headers
            )
        except httpx.TimeoutException as error:
            raise UpstreamTimeout(f"FORAGER did not answer {method} {path} in time.") from error
        except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as error:
            raise KnowledgeUnreachable(f"FORAGER at {self.endpoint} cannot be reached.") from error
        except httpx.HTTPError as error:
            raise UpstreamError(f"FORAGER's answer to {method} {path} broke off: {type(error).__name__}.") from error
        self._raise_for_status(method, path, response)
        return response

    @staticmethod
    def _raise_for_status(method: str, path: str, response: httpx.Response) -> None:
        status = response.status_code
        if status < 300:
            return
        if status < 400:
            raise UpstreamError(
                f"FORAGER answered {method} {path} with a redirect ({status}), which is never followed."
            )
        code, message = _error_body(response)
        if status in (401, 403):
            raise UpstreamError(f"FORAGER refused the colony's credential ({status}).")
        if status == 429:
            retry_after = response.headers.get("Retry-After")
            raise UpstreamError(
                "FORAGER is rate-limiting the colony; try again later.",
                headers={"Retry-After": retry_after} if retry_after else None,
            )
        if status >= 500:
            raise UpstreamError(f"FORAGER failed to answer {method} {path} ({status}).")
        raise UpstreamRefused(status, code, message)

    @staticmethod
    def _parse(response: httpx.Response, model: type[ModelT]) -> ModelT:
        try:
            return model.model_validate_json(response.content)
        except ValidationError as error:
            raise UpstreamError(f"FORAGER's answer is not the shape the contract names ({model.__name__}).") from error


def _error_body(response: httpx.Response) -> tuple[str, str]:
    try:
        error = response.json().get("error") or {}
        return str(error.get("code") or "refused"), str(error.get("message") or response.reason_phrase)
    except (json.JSONDecodeError, AttributeError, UnicodeDecodeError):
        return "refused", response.reason_phrase
