"""The pages API over HTTP: one httpx connection, the hub's refusals as ``HubError``."""

from __future__ import annotations

import io
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote

import httpx

LISTING_PAGE = 500  # the hub's cap on one listing

RETRIED = frozenset({429, 503})  # throttled, or not able to answer now: the request did nothing
ATTEMPTS = 6  # one request and at most five more
BACKOFF_SECONDS = 0.5  # doubled each retry, with full jitter, when the hub names no Retry-After
BACKOFF_CAP_SECONDS = 8.0
RETRY_AFTER_CAP_SECONDS = 30.0  # a Retry-After longer than this is waited this long
ARCHIVE_WAIT_SECONDS = 900.0  # how long an export waits for the hub to build the base's archive
NOT_READY_WAIT_SECONDS = 2.0  # a 409 not_ready that names no Retry-After is asked again after this

EX_USAGE = 2
EX_DATAERR = 65
EX_NOINPUT = 66
EX_UNAVAILABLE = 69
EX_SOFTWARE = 70
EX_TEMPFAIL = 75
EX_NOPERM = 77
EX_CONFIG = 78

# The hub's own code when it stops a command: its error ``code`` read as a sysexits code.
HUB_EXIT = {
    "invalid_argument": EX_DATAERR,
    "payload_too_large": EX_DATAERR,
    "not_found": EX_NOINPUT,
    "conflict": 1,
    "unauthenticated": EX_NOPERM,
    "permission_denied": EX_NOPERM,
    "rate_limited": EX_TEMPFAIL,
    "throttled": EX_TEMPFAIL,
    "unavailable": EX_TEMPFAIL,
}


class Stop(Exception):
    """Ends the command with ``code``; ``message`` goes to stderr."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class HubError(Stop):
    """The hub refused a request: its status, its error ``code`` and its detail."""

    def __init__(self, status: int, hub_code: str, detail: str) -> None:
        exit_code = HUB_EXIT.get(hub_code, EX_TEMPFAIL if status in (429, 503) else EX_SOFTWARE)
        super().__init__(exit_code, f"the hub refused ({status} {hub_code}): {detail}")
        self.status = status
        self.hub_code = hub_code


@dataclass(frozen=True)
class Config:
    url: str
    token: str
    project: str

    @classmethod
    def load(cls, project: str | None) -> Config:
        url = os.environ.get("HUB_URL", "").strip()
        token = os.environ.get("HUB_TOKEN", "").strip()
        project = project or os.environ.get("HUB_PROJECT", "").strip()
        if not url or not token:
            raise Stop(EX_CONFIG, "no hub configured: set HUB_URL and HUB_TOKEN")
        if not project:
            raise Stop(EX_CONFIG, "no project: set HUB_PROJECT or pass --project")
        return cls(url.rstrip("/"), token, project)


def _refusal(answer: httpx.Response) -> tuple[str, str]:
    """The refusal's code and its sentence (problem+json's ``detail``, the envelope's ``message``),
    never the raw body."""
    try:
        body = answer.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return "error", answer.reason_phrase or f"HTTP {answer.status_code}"
    sentence = body.get("detail") or body.get("message") or body.get("title") or answer.reason_phrase
    return str(body.get("code") or "error"), str(sentence)[:500]


def url_path(page: str) -> str:
    """A canonical page path as the URL's ``{path+}`` (``/fs/a b.md`` -> ``fs/a%20b.md``)."""
    return quote(page.lstrip("/"), safe="/")


def retry_after(answer: httpx.Response) -> float | None:
    """The wait ``Retry-After`` asks for, in seconds (delta-seconds or an HTTP date), if any."""
    value = answer.headers.get("Retry-After", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff(attempt: int, answer: httpx.Response, rng: random.Random) -> float:
    """How long to wait before retry ``attempt`` (1, 2, ...): the hub's Retry-After (capped), else
    exponential backoff with full jitter."""
    asked = retry_after(answer)
    if asked is not None:
        return min(asked, RETRY_AFTER_CAP_SECONDS)
    return rng.uniform(0, min(BACKOFF_CAP_SECONDS, BACKOFF_SECONDS * 2 ** (attempt - 1)))


def _raise_for(answer: httpx.Response) -> None:
    if answer.status_code in {401, 403}:
        raise Stop(EX_NOPERM, f"the hub refused the token ({answer.status_code})")
    if answer.status_code >= 400:
        raise HubError(answer.status_code, *_refusal(answer))


class _Chunks(io.RawIOBase):
    """An iterator of byte chunks as a readable file (what ``tarfile``'s stream mode reads)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._left = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._left:
            try:
                self._left = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(buffer), len(self._left))
        buffer[:n] = self._left[:n]
        self._left = self._left[n:]
        return n


class Hub:
    """The hub's pages API. A 429 or 503 is asked again (``ATTEMPTS`` in all, honouring
    ``Retry-After``); any other answer, and the last of those, is final."""

    def __init__(
        self,
        config: Config,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.requests = 0  # to the hub (an archive's download from its presigned URL is not one)
        self.retries = 0
        self.polls = 0  # 409 not_ready answers waited out
        self._counting = threading.Lock()  # an import writes from several threads
        self._transport = transport
        self._sleep = sleep
        self._rng = rng or random.Random()  # noqa: S311 - jitter, not a secret
        self._http = httpx.Client(
            base_url=f"{config.url}/api/v1/projects/{quote(config.project, safe='')}/kb",
            headers={"Authorization": f"Bearer {config.token}", "User-Agent": "kb/1"},
            timeout=60.0,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Hub:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def call(self, method: str, url: str, **kwargs: Any) -> Any:
        for attempt in range(1, ATTEMPTS + 1):
            answer = self._send(method, url, **kwargs)
            if answer.status_code not in RETRIED or attempt == ATTEMPTS:
                break
            with self._counting:
                self.retries += 1
            self._sleep(backoff(attempt, answer, self._rng))
        _raise_for(answer)
        return answer.json()

    def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        with self._counting:
            self.requests += 1
        try:
            return self._http.request(method, url, **kwargs)
        except httpx.TransportError as error:
            raise Stop(EX_UNAVAILABLE, f"the hub at {self.config.url} cannot be reached: {error}") from error

    def archive_url(self) -> str:
        """The short-lived URL of the base's archive (``GET /archive``'s 303): each ``409 not_ready``
        is waited out for its Retry-After (the hub builds the archive meanwhile), for at most
        ``ARCHIVE_WAIT_SECONDS`` in all; a 429 or 503 is asked again as every request is."""
        waited, attempt = 0.0, 1
        while True:
            answer = self._send("GET", "/archive")
            if answer.status_code == 303 and answer.headers.get("Location"):
                return str(answer.headers["Location"])
            if answer.status_code == 409 and _refusal(answer)[0] == "not_ready":
                wait = min(retry_after(answer) or NOT_READY_WAIT_SECONDS, RETRY_AFTER_CAP_SECONDS)
                if waited + wait > ARCHIVE_WAIT_SECONDS:
                    raise Stop(
                        EX_TEMPFAIL,
                        f"the hub did not finish building the archive within {ARCHIVE_WAIT_SECONDS:.0f} s; "
                        "nothing was written, run kb export again",
                    )
                self.polls += 1
                self._sleep(wait)
                waited += wait
                continue
            if answer.status_code in RETRIED and attempt < ATTEMPTS:
                with self._counting:
                    self.retries += 1
                self._sleep(backoff(attempt, answer, self._rng))
                attempt += 1
                continue
            _raise_for(answer)
            raise HubError(answer.status_code, "error", "the hub answered the archive with neither 303 nor 409")

    @contextmanager
    def archive(self, url: str) -> Iterator[io.RawIOBase]:
        """The archive at ``url`` as a stream read while it arrives (no token sent: the URL is signed)."""
        with httpx.Client(timeout=60.0, transport=self._transport, headers={"User-Agent": "kb/1"}) as s3:
            try:
                with s3.stream("GET", url) as answer:
                    if answer.status_code != 200:
                        raise Stop(EX_UNAVAILABLE, f"the archive could not be downloaded ({answer.status_code})")
                    yield _Chunks(answer.iter_bytes())
            except httpx.TransportError as error:
                raise Stop(EX_UNAVAILABLE, f"the archive's download failed: {error}") from error

    def pages(self) -> dict[str, dict[str, Any]]:
        """Every page's ``meta=1`` row by path: the listing paged through with ``after``."""
        rows: dict[str, dict[str, Any]] = {}
        after: str | None = None
        while True:
            params: dict[str, Any] = {"meta": "1", "limit": LISTING_PAGE}
            if after is not None:
                params["after"] = after
            answer = self.call("GET", "/pages", params=params)
            entries = answer["entries"]
            for row in entries:
                if row["type"] == "file":
                    rows[row["path"]] = row
            if not answer["truncated"] or not entries:
                return rows
            after = entries[-1]["path"]

    def get(self, page: str, version: str | None = None) -> dict[str, Any]:
        params = {"version": version} if version else None
        return self.call("GET", f"/pages/{url_path(page)}", params=params)  # type: ignore[no-any-return]

    def put(self, page: str, content: str, if_version: str | None) -> dict[str, Any]:
        body: dict[str, Any] = {"content": content}
        if if_version is not None:
            body["if_version"] = if_version
        return self.call("PUT", f"/pages/{url_path(page)}", json=body)  # type: ignore[no-any-return]

    def delete(self, page: str, if_version: str | None) -> dict[str, Any]:
        params = {"if_version": if_version} if if_version else None
        return self.call("DELETE", f"/pages/{url_path(page)}", params=params)  # type: ignore[no-any-return]

    def listing(self, prefix: str | None) -> dict[str, Any]:
        params = {"prefix": prefix} if prefix else None
        return self.call("GET", "/pages", params=params)  # type: ignore[no-any-return]

    def history(self, page: str, limit: int) -> dict[str, Any]:
        return self.call("GET", "/versions", params={"path": page, "limit": limit})  # type: ignore[no-any-return]
