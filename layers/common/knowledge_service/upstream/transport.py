"""The transport under every call the FORAGER client makes (``client.py`` composes the
contract's sections on it: ``engine.py``, ``reads.py``, ``feed.py``, ``ingestion.py``,
``curation.py``, ``exports.py``).
The FORAGER client.

Bearer credential on every request, an ``Idempotency-Key`` on every POST, one total
deadline per call inside the request's budget (``knowledge_service/budget.py``), redirects
never followed, and every transport or upstream failure turned into the envelope's codes:

| what happened                         | raised                      | status |
| ------------------------------------- | --------------------------- | ------ |
| connection refused, DNS, reset early  | ``KnowledgeUnreachable``    | 503    |
| no whole answer by the call's deadline| ``UpstreamTimeout``         | 504    |
| 3xx, 401/403, 429, 5xx, bad JSON/shape| ``UpstreamError``           | 502    |
| another 4xx, in FORAGER's own words   | ``UpstreamRefused`` (a 502 unless the domain expects it) | |

**One deadline per call.** httpx's timeouts bound each socket operation, so a FORAGER that
trickles a byte every few seconds never trips them. A call's deadline is the sooner of
``timeout_seconds`` from its start and the request's budget; the pool's network backend
(:class:`_DeadlineBackend`) gives every connect, write and read only the time left until
that deadline, so the whole call (connect, headers, body) ends by it, whatever the pace.
"""

from __future__ import annotations

import contextvars
import json
import ssl
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import httpcore
import httpx
from pydantic import BaseModel, ValidationError

from knowledge_service import budget, observability
from knowledge_service.errors import KnowledgeUnreachable, UpstreamError, UpstreamRefused, UpstreamTimeout

if TYPE_CHECKING:
    from knowledge_service.upstream.multipart import MultipartBody

OWN_WORDS_403 = frozenset({"path_not_allowed"})
"""403s that are FORAGER's own fence speaking, not a refused credential."""

ModelT = TypeVar("ModelT", bound=BaseModel)

USER_AGENT = "knowledge-service/0.1"


CONNECT_SECONDS = 3.0
"""The most a call waits for a connection, within its deadline."""

HttpPool = httpx.Client
"""One connection pool to FORAGER, shared by every client a container builds."""


def connection_pool(timeout_seconds: float, network: httpcore.NetworkBackend | None = None) -> HttpPool:
    """The pool a container keeps: every socket operation held to its call's deadline,
    redirects never followed. ``network`` replaces the sockets (the unit tier serves the
    simulator in-process); by default they are httpcore's own."""
    return httpx.Client(
        timeout=default_timeout(timeout_seconds), follow_redirects=False, transport=_DeadlineTransport(network)
    )


def default_timeout(seconds: float) -> httpx.Timeout:
    return httpx.Timeout(seconds, connect=min(CONNECT_SECONDS, seconds))


# ---------------------------------------------------------------------- the deadline
# The deadline of the call this thread is making (``time.monotonic``), or None.
_call_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("forager_call_deadline", default=None)


def _time_left(timeout: float | None, timeout_error: type[Exception]) -> float | None:
    """``timeout``, cut to the time left before the call's deadline (which, passed, raises)."""
    deadline = _call_deadline.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise timeout_error("The call's deadline passed.")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every operation ends by the call's deadline."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _time_left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _time_left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        tls = self._stream.start_tls(ssl_context, server_hostname, _time_left(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(tls)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's socket backend, handing out :class:`_DeadlineStream` s."""

    def __init__(self, network: httpcore.NetworkBackend | None = None) -> None:
        self._backend = network or httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = _time_left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._backend.connect_tcp(host, port, left, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        left = _time_left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._backend.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class _LazyTLSPool(httpcore.ConnectionPool):
    """httpcore's pool, making its SSL context (httpx's default: certifi's CA bundle, loaded
    and parsed, tens of milliseconds) on its first ``https`` connection rather than when the
    pool is built: a container whose FORAGER endpoint is plain ``http`` never makes one."""

    def __init__(self, **options: Any) -> None:
        super().__init__(ssl_context=None, **options)
        self._tls_lock = threading.Lock()

    def create_connection(self, origin: httpcore.Origin) -> httpcore.ConnectionInterface:
        if origin.scheme in (b"https", b"wss") and self._ssl_context is None:
            with self._tls_lock:
                if self._ssl_context is None:
                    self._ssl_context = httpx.create_ssl_context()
        return super().create_connection(origin)


class _DeadlineTransport(httpx.HTTPTransport):
    """httpx's transport on a connection pool whose sockets keep the call's deadline.

    httpx offers no way to hand its transport a network backend, so the pool it would build
    is never built (nor the SSL context it would make for it): the transport holds the same
    pool (httpx's defaults) on :class:`_DeadlineBackend`, its SSL context made on first use.
    """

    def __init__(self, network: httpcore.NetworkBackend | None = None) -> None:
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
        self._pool = _LazyTLSPool(
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_DeadlineBackend(network),
        )


@dataclass(frozen=True)
class Streamed:
    """An answer arriving: its headers, and its body's chunks (one that breaks off mid-way raises
    ``UpstreamError`` from the iterator)."""

    headers: Mapping[str, str]
    chunks: Iterator[bytes]


class Transport:
    """One FORAGER endpoint and credential on a connection pool: the calls every section makes
    (``_get``, ``_post``, ``_post_stream``), each held to its deadline, counted and mapped to the
    envelope's codes."""

    def __init__(self, endpoint: str, credential: str, *, http: httpx.Client, timeout_seconds: float) -> None:
        self.endpoint = endpoint.rstrip("/")
        self._credential = credential
        self._timeout_seconds = timeout_seconds
        self._http = http

    @contextmanager
    def _stream_get(self, path: str, chunk_bytes: int) -> Iterator[Streamed]:
        """GET ``path``'s answer as it arrives, never held whole; the connection closes when the
        block ends, and the call is counted then, as every call is (a failure inside the block,
        a body that broke off or did not match, is the call's outcome)."""
        headers = {"Authorization": f"Bearer {self._credential}", "User-Agent": USER_AGENT}
        started = time.monotonic()
        outcome: observability.ForagerOutcome = "ok"
        try:
            with self._http.stream("GET", self.endpoint + path, headers=headers) as response:
                if response.status_code >= 300:
                    response.read()
                    self._raise_for_status("GET", path, response)
                yield Streamed(response.headers, _guarded(response.iter_bytes(chunk_bytes), path))
        except httpx.TimeoutException as error:
            outcome = "timeout"
            raise UpstreamTimeout(f"FORAGER did not answer GET {path} in time.") from error
        except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as error:
            outcome = "unreachable"
            raise KnowledgeUnreachable(f"FORAGER at {self.endpoint} cannot be reached.") from error
        except httpx.HTTPError as error:
            outcome = "upstream_error"
            raise UpstreamError(f"FORAGER's answer to GET {path} broke off: {type(error).__name__}.") from error
        except (UpstreamRefused, UpstreamError, UpstreamTimeout, KnowledgeUnreachable) as error:
            outcome = call_outcome(error)  # its status refused, or its bytes broke off or did not match
            raise
        finally:
            observability.count_outcome("ForagerCalls", outcome)
            observability.milliseconds("ForagerCallLatency", (time.monotonic() - started) * 1000)

    def _post_stream(self, path: str, body: MultipartBody, model: type[ModelT], idempotency_key: str) -> ModelT:
        headers = {
            "Idempotency-Key": idempotency_key,
            "Content-Type": body.content_type,
            "Content-Length": str(len(body)),
        }
        return self._parse(self._send("POST", path, content=body, headers=headers), model)

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
        content: Iterable[bytes] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        """One call, counted by outcome (``ForagerCalls``) and timed (``ForagerCallLatency``)."""
        started = time.monotonic()
        outcome: observability.ForagerOutcome = "ok"
        try:
            return self._exchange(method, path, params=params, json_body=json_body, content=content, headers=headers)
        except BaseException as error:
            outcome = call_outcome(error)
            raise
        finally:
            observability.count_outcome("ForagerCalls", outcome)
            observability.milliseconds("ForagerCallLatency", (time.monotonic() - started) * 1000)

    def _exchange(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json_body: dict[str, Any] | None = None,
        content: Iterable[bytes] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        request_headers = {
            "Authorization": f"Bearer {self._credential}",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
            **(headers or {}),
        }
        deadline = self._deadline()
        left = deadline - time.monotonic()
        if left <= 0:
            raise UpstreamTimeout(f"The request's time for FORAGER ran out before {method} {path}.")
        timeout = httpx.Timeout(left, connect=min(CONNECT_SECONDS, left))
        token = _call_deadline.set(deadline)
        try:
            response = self._http.request(
                method,
                self.endpoint + path,
                params=params,
                json=json_body,
                content=None if content is None else iter(content),
                headers=request_headers,
                timeout=timeout,
            )
        except httpx.TimeoutException as error:
            raise UpstreamTimeout(f"FORAGER did not answer {method} {path} in time.") from error
        except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as error:
            raise KnowledgeUnreachable(f"FORAGER at {self.endpoint} cannot be reached.") from error
        except httpx.HTTPError as error:
            raise UpstreamError(f"FORAGER's answer to {method} {path} broke off: {type(error).__name__}.") from error
        finally:
            _call_deadline.reset(token)
        self._raise_for_status(method, path, response)
        return response

    def _deadline(self) -> float:
        """This call's deadline: ``timeout_seconds`` from now, or the request's budget if sooner."""
        deadline = time.monotonic() + self._timeout_seconds
        spending = budget.current()
        return deadline if spending is None else min(deadline, spending.deadline)

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
        if status == 403 and code in OWN_WORDS_403:
            refused = UpstreamRefused(status, code, message)
            refused.data = _error_details(response)
            raise refused
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
        refused = UpstreamRefused(status, code, message)
        refused.data = _error_details(response)
        raise refused

    @staticmethod
    def _parse(response: httpx.Response, model: type[ModelT]) -> ModelT:
        try:
            return model.model_validate_json(response.content)
        except ValidationError as error:
            raise UpstreamError(f"FORAGER's answer is not the shape the contract names ({model.__name__}).") from error


def call_outcome(error: BaseException) -> observability.ForagerOutcome:
    """A failed call's outcome as the metric names it: FORAGER's own refusal (a 4xx it names) is an
    answer; a timeout, an unreachable endpoint and anything else upstream are not."""
    if isinstance(error, UpstreamTimeout):
        return "timeout"
    if isinstance(error, KnowledgeUnreachable):
        return "unreachable"
    if isinstance(error, UpstreamRefused):
        return "refused"
    return "upstream_error"


def _guarded(chunks: Iterator[bytes], path: str) -> Iterator[bytes]:
    try:
        yield from chunks
    except httpx.TimeoutException as error:
        raise UpstreamTimeout(f"FORAGER stopped sending GET {path}.") from error
    except httpx.HTTPError as error:
        raise UpstreamError(f"FORAGER's answer to GET {path} broke off: {type(error).__name__}.") from error


def _error_details(response: httpx.Response) -> dict[str, Any]:
    try:
        error = response.json().get("error") or {}
        return {k: v for k, v in error.items() if k not in ("code", "message")}
    except (json.JSONDecodeError, AttributeError, UnicodeDecodeError):
        return {}


def _error_body(response: httpx.Response) -> tuple[str, str]:
    try:
        error = response.json().get("error") or {}
        return str(error.get("code") or "refused"), str(error.get("message") or response.reason_phrase)
    except (json.JSONDecodeError, AttributeError, UnicodeDecodeError):
        return "refused", response.reason_phrase


def flag(value: bool) -> str:
    """A boolean as FORAGER's query strings spell it."""
    return "true" if value else "false"


def present(params: dict[str, Any]) -> dict[str, Any]:
    """Query parameters with a value: a field with none is left out, never sent empty."""
    return {k: v for k, v in params.items() if v is not None and v != ""}
