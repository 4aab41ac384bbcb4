"""The FORAGER client: one class over the contract's sections, on one transport.

``docs/upstream-contract.md`` is the contract, section by section, and so is this package:

| section                         | module          | calls                                              |
| ------------------------------- | --------------- | -------------------------------------------------- |
| the engine and its projects     | ``engine.py``   | status, capabilities, projects, create_project     |
| reads                           | ``reads.py``    | search, retrieve, statements, entities, sources... |
| the change feed                 | ``feed.py``     | feed, head_revision, sources, receipt              |
| ingestion                       | ``ingestion.py``| jobs, upload, preflight                            |
| curation                        | ``curation.py`` | resolve and reopen, decide, unmerge, review        |
| exports                         | ``exports.py``  | exports, start_export, export, download_archive    |

Each section is a class of calls on :class:`~knowledge_service.upstream.transport.Transport`
(bearer credential, an ``Idempotency-Key`` on every POST, one deadline per call, failures mapped
to the envelope's codes: ``transport.py``); :class:`ForagerClient` is all of them on one endpoint
and credential. Callers import from here, as they always have.
"""

from __future__ import annotations

from knowledge_service.upstream.curation import CurationCalls
from knowledge_service.upstream.engine import EngineCalls
from knowledge_service.upstream.exports import DOWNLOAD_CHUNK_BYTES, ArchiveDownload, ExportCalls
from knowledge_service.upstream.feed import FEED_REFUSALS, FeedCalls
from knowledge_service.upstream.ingestion import IngestionCalls
from knowledge_service.upstream.reads import ReadCalls
from knowledge_service.upstream.transport import (
    CONNECT_SECONDS,
    OWN_WORDS_403,
    USER_AGENT,
    HttpPool,
    Transport,
    call_outcome,
    connection_pool,
    default_timeout,
)

__all__ = [
    "CONNECT_SECONDS",
    "DOWNLOAD_CHUNK_BYTES",
    "FEED_REFUSALS",
    "OWN_WORDS_403",
    "USER_AGENT",
    "ArchiveDownload",
    "ForagerClient",
    "ForagerClients",
    "HttpPool",
    "Transport",
    "call_outcome",
    "connection_pool",
    "default_timeout",
]


class ForagerClients:
    """Makes the :class:`ForagerClient` for an endpoint and credential, every one on the same
    connection pool (a container keeps one); without ``http`` each client opens its own."""

    def __init__(self, timeout_seconds: float, http: HttpPool | None = None) -> None:
        self.timeout_seconds = timeout_seconds
        self._http = http

    def client(self, endpoint: str, credential: str) -> ForagerClient:
        return ForagerClient(endpoint, credential, http=self._http, timeout_seconds=self.timeout_seconds)


class ForagerClient(EngineCalls, ReadCalls, FeedCalls, IngestionCalls, CurationCalls, ExportCalls):
    """One FORAGER endpoint, one credential: every section of the contract. Hand in ``http``
    (from :func:`connection_pool`) to share a connection pool."""

    def __init__(
        self, endpoint: str, credential: str, *, http: HttpPool | None = None, timeout_seconds: float = 8.0
    ) -> None:
        # connection_pool is looked up here, in this module, where the unit tier replaces it
        super().__init__(
            endpoint, credential, http=http or connection_pool(timeout_seconds), timeout_seconds=timeout_seconds
        )
