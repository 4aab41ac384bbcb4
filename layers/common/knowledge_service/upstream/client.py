"""The FORAGER client.

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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import httpcore
import httpx
from pydantic import BaseModel, ValidationError

from knowledge_service import budget, observability
from knowledge_service.errors import KnowledgeUnreachable, UpstreamError, UpstreamRefused, UpstreamTimeout
from knowledge_service.upstream import models

if TYPE_CHECKING:
    from knowledge_service.upstream.multipart import FilePart, MultipartBody

OWN_WORDS_403 = frozenset({"path_not_allowed"})
"""403s that are FORAGER's own fence speaking, not a refused credential."""

FEED_REFUSALS = frozenset({"cursor_expired", "cursor_ahead", "generation_changed"})

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


class ForagerClients:
    """Makes the :class:`ForagerClient` for an endpoint and credential, every one on the same
    connection pool (a container keeps one); without ``http`` each client opens its own."""

    def __init__(self, timeout_seconds: float, http: HttpPool | None = None) -> None:
        self.timeout_seconds = timeout_seconds
        self._http = http

    def client(self, endpoint: str, credential: str) -> ForagerClient:
        return ForagerClient(endpoint, credential, http=self._http, timeout_seconds=self.timeout_seconds)


class ForagerClient:
    """One FORAGER endpoint, one credential. Hand in ``http`` (from :func:`connection_pool`)
    to share a connection pool."""

    def __init__(
        self, endpoint: str, credential: str, *, http: httpx.Client | None = None, timeout_seconds: float = 8.0
    ) -> None:
        self.endpoint = endpoint.rstrip("/")
        self._credential = credential
        self._timeout_seconds = timeout_seconds
        self._http = http or connection_pool(timeout_seconds)

    # ------------------------------------------------------------------ the contract
    def status(self) -> models.EngineStatus:
        return self._get("/api/status", models.EngineStatus)

    def capabilities(self) -> models.Capabilities:
        return self._get("/api/capabilities", models.Capabilities)

    def projects(self) -> list[models.ForagerProject]:
        return self._get("/api/projects", models.ProjectList).projects

    def create_project(
        self, name: str, description: str, *, idempotency_key: str | None = None
    ) -> models.ForagerProject:
        body = {"name": name}
        if description:
            body["description"] = description
        return self._post("/api/projects", body, models.ForagerProject, idempotency_key=idempotency_key)

    # ------------------------------------------------------------------ the change feed
    def feed(self, project_ref: str, *, generation: str | None, after: int, limit: int = 500) -> models.FeedPage:
        """The project's feed after ``after``; a 409 cursor refusal raises ``FeedCursorRefused``."""
        params: dict[str, Any] = {"after": after, "limit": limit}
        if generation:
            params["generation"] = generation
        try:
            return self._get(f"/api/projects/{project_ref}/feed", models.FeedPage, params=params)
        except UpstreamRefused as refused:
            if refused.upstream_status == 409 and refused.upstream_code in FEED_REFUSALS:
                raise models.FeedCursorRefused(
                    refused.upstream_code, refused.upstream_message, refused.data or {}
                ) from refused
            raise

    def head_revision(self, project_ref: str) -> models.HeadRevision | None:
        try:
            return self._get(f"/api/projects/{project_ref}/revisions/head", models.HeadRevision)
        except UpstreamRefused as refused:
            if refused.upstream_status == 404:
                return None
            raise

    def sources(self, project_ref: str) -> list[models.ForagerSource]:
        return self._get(f"/api/projects/{project_ref}/sources", models.SourceList).sources

    def receipt(
        self, project_ref: str, event_id: str, status: str, detail: str, *, synthesized: bool = False
    ) -> models.ReceiptAnswer:
        body: dict[str, Any] = {"event_id": event_id, "status": status, "detail": detail}
        if synthesized:
            body["synthesized"] = True
        return self._post(
            f"/api/projects/{project_ref}/feed/receipts",
            body,
            models.ReceiptAnswer,
            idempotency_key=f"receipt:{event_id}:{status}",
        )

    # ------------------------------------------------------------------ reads
    def search(self, project_ref: str, q: str, *, limit: int, include_historical: bool) -> models.SearchResult:
        params = {"q": q, "limit": limit, "include_historical": _flag(include_historical)}
        return self._get(f"/api/projects/{project_ref}/search", models.SearchResult, params=params)

    def retrieve(self, project_ref: str, query: str, *, top_k: int, include_historical: bool) -> models.Retrieval:
        body = {"query": query, "top_k": top_k, "include_historical": include_historical}
        return self._post(f"/api/projects/{project_ref}/retrieve", body, models.Retrieval)

    def knowledge_item(self, knowledge_id: str) -> models.KnowledgeItem:
        """Not project-scoped upstream: the caller holds ``project_ref`` to its scope."""
        return self._get(f"/api/knowledge/{knowledge_id}", models.KnowledgeItem)

    def evidence(self, knowledge_id: str) -> models.EvidenceList:
        return self._get(f"/api/knowledge/{knowledge_id}/evidence", models.EvidenceList)

    def entities_named(self, project_ref: str, name: str) -> models.NamedEntities:
        return self._get(f"/api/projects/{project_ref}/entities", models.NamedEntities, params={"name": name})

    def people(
        self, project_ref: str, *, q: str | None, types: list[str], sort: str, page: int, page_size: int
    ) -> models.PeoplePage:
        params = _present({"q": q, "type": ",".join(types), "sort": sort, "page": page, "page_size": page_size})
        return self._get(f"/api/projects/{project_ref}/people", models.PeoplePage, params=params)

    def entity(self, entity_id: str) -> models.EntityDetail:
        """Not project-scoped upstream (GET /api/entities/:id): carries ``project_ref``."""
        return self._get(f"/api/entities/{entity_id}", models.EntityDetail)

    def statements(
        self, project_ref: str, filters: dict[str, str], *, page: int, page_size: int
    ) -> models.StatementsPage:
        params = _present({**filters, "page": page, "page_size": page_size})
        return self._get(f"/api/projects/{project_ref}/statements", models.StatementsPage, params=params)

    def duplicates(self, project_ref: str, status: str) -> models.DuplicateList:
        return self._get(f"/api/projects/{project_ref}/duplicates", models.DuplicateList, params={"status": status})

    def registered_sources(self, project_ref: str) -> models.RegisteredSources:
        """The sources as GET /knowledge/sources lists them (every field, not the feed's few)."""
        return self._get(f"/api/projects/{project_ref}/sources", models.RegisteredSources)

    def source(self, source_id: str) -> models.SourceDetail:
        """Not project-scoped upstream (GET /api/sources/:id): ``source.project_ref`` says whose."""
        return self._get(f"/api/sources/{source_id}", models.SourceDetail)

    def conflicts(self, project_ref: str, status: str) -> models.ConflictRecords:
        return self._get(f"/api/projects/{project_ref}/conflicts", models.ConflictRecords, params={"status": status})

    # ------------------------------------------------------------------ ingestion
    def queue_job(self, project_ref: str, paths: list[str], *, force: bool, idempotency_key: str) -> models.Job:
        body = {"paths": paths, "force": force}
        return self._post(f"/api/projects/{project_ref}/jobs", body, models.Job, idempotency_key=idempotency_key)

    def jobs(self, project_ref: str, *, limit: int) -> list[models.Job]:
        return self._get(f"/api/projects/{project_ref}/jobs", models.JobList, params={"limit": limit}).jobs

    def job(self, project_ref: str, job_id: str) -> models.Job:
        return self._get(f"/api/projects/{project_ref}/jobs/{job_id}", models.Job)

    def cancel_job(self, project_ref: str, job_id: str, *, idempotency_key: str) -> models.Job:
        return self._post(
            f"/api/projects/{project_ref}/jobs/{job_id}/cancel", {}, models.Job, idempotency_key=idempotency_key
        )

    def retry_job(self, project_ref: str, job_id: str, *, idempotency_key: str) -> models.Job:
        return self._post(
            f"/api/projects/{project_ref}/jobs/{job_id}/retry", {}, models.Job, idempotency_key=idempotency_key
        )

    def upload(
        self,
        project_ref: str,
        files: list[FilePart],
        *,
        force: bool,
        admission_job_id: str | None,
        idempotency_key: str,
    ) -> models.Job:
        """The batch as one streamed multipart body: no file is held whole on the way."""
        from knowledge_service.upstream.multipart import MultipartBody  # only uploads load it

        fields = [("force", _flag(force))]
        if admission_job_id:
            fields.append(("admission_job_id", admission_job_id))
        body = MultipartBody(fields, files)
        return self._post_stream(f"/api/projects/{project_ref}/uploads", body, models.Job, idempotency_key)

    def preflight(self, project_ref: str, files: list[FilePart], *, idempotency_key: str) -> models.Admission:
        from knowledge_service.upstream.multipart import MultipartBody  # only uploads load it

        body = MultipartBody([], files)
        return self._post_stream(f"/api/projects/{project_ref}/preflight", body, models.Admission, idempotency_key)

    # ------------------------------------------------------------------ curation
    def resolve_conflict(self, conflict_id: str, body: dict[str, Any]) -> models.ConflictRecord:
        return self._post(f"/api/conflicts/{conflict_id}/resolve", _present(body), models.ConflictRecord)

    def reopen_conflict(self, conflict_id: str, actor: str) -> models.ConflictRecord:
        return self._post(f"/api/conflicts/{conflict_id}/reopen", {"actor": actor}, models.ConflictRecord)

    def decide_duplicate(self, candidate_id: str, body: dict[str, Any]) -> models.DuplicateDecision:
        return self._post(f"/api/duplicates/{candidate_id}/decide", _present(body), models.DuplicateDecision)

    def unmerge_entity(self, entity_id: str, body: dict[str, Any]) -> models.Unmerged:
        return self._post(f"/api/entities/{entity_id}/unmerge", _present(body), models.Unmerged)

    def review_item(self, knowledge_id: str, body: dict[str, Any]) -> models.KnowledgeItem:
        return self._post(f"/api/knowledge/{knowledge_id}/review", _present(body), models.KnowledgeItem)

    # ------------------------------------------------------------------ exports
    def exports(self, project_ref: str) -> models.ExportList:
        return self._get(f"/api/projects/{project_ref}/exports", models.ExportList)

    def start_export(self, project_ref: str, body: dict[str, Any], *, idempotency_key: str | None) -> models.ExportRow:
        return self._post(
            f"/api/projects/{project_ref}/exports", body, models.ExportRow, idempotency_key=idempotency_key
        )

    def export(self, export_id: str) -> models.ExportRow:
        """Not project-scoped upstream: ``project_ref`` says whose."""
        return self._get(f"/api/exports/{export_id}", models.ExportRow)

    @contextmanager
    def download_archive(self, export_id: str) -> Iterator[ArchiveDownload]:
        """The archive's bytes as they arrive, never held whole; the connection closes on exit.

        Failures map as every other call does; a body that breaks off mid-way raises
        ``UpstreamError`` from the iterator.
        """
        path = f"/api/exports/{export_id}/download"
        headers = {"Authorization": f"Bearer {self._credential}", "User-Agent": USER_AGENT}
        started = time.monotonic()
        outcome: observability.ForagerOutcome = "ok"  # counted as every call is, when the download ends
        try:
            with self._http.stream("GET", self.endpoint + path, headers=headers) as response:
                if response.status_code >= 300:
                    response.read()
                    self._raise_for_status("GET", path, response)
                yield ArchiveDownload(
                    announced_sha256=(response.headers.get("X-Export-Sha256") or "").strip().lower(),
                    content_disposition=response.headers.get("Content-Disposition") or "",
                    chunks=_guarded(response.iter_bytes(DOWNLOAD_CHUNK_BYTES), path),
                )
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

    # ------------------------------------------------------------------ plumbing
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


DOWNLOAD_CHUNK_BYTES = 256 * 1024


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


@dataclass
class ArchiveDownload:
    """An archive arriving: the digest FORAGER sent beside the bytes, and the bytes."""

    announced_sha256: str
    content_disposition: str
    chunks: Iterator[bytes]


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


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _present(params: dict[str, Any]) -> dict[str, Any]:
    """Query parameters with a value: a field with none is left out, never sent empty."""
    return {k: v for k, v in params.items() if v is not None and v != ""}
