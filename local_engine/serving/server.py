"""HTTP plumbing and the :class:`Engine` that serves the API port.

The API port serves the upstream contract (``api.py``) from a stdlib ``ThreadingHTTPServer``
running in a daemon thread. The test double (``local_engine/double/``) adds a control port on the
same plumbing (:func:`serve`) and can close the API port and open it again
(:meth:`Engine.set_api_listening`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import secrets
import select
import shutil
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BufferedIOBase
from pathlib import Path
from socketserver import BaseServer, TCPServer
from types import TracebackType
from typing import Any, Protocol, Self, TypedDict, Unpack
from urllib.parse import urlsplit

from local_engine.exports import jobs as exports
from local_engine.ingestion import jobs as ingestion
from local_engine.ingestion.workers import Workers
from local_engine.serving import feed
from local_engine.serving.api import ForagerApi
from local_engine.serving.routing import ApiError, BodyError, Request, Response
from local_engine.serving.state import ENGINE_VERSION, EngineState, read_state_file, write_state_file
from local_engine.store.database import Store

logger = logging.getLogger("local_engine")

# The contract's transport cap for one upload request.
MAX_BODY_BYTES = 101 * 1024 * 1024  # an upload's 100 MB of files and its multipart framing
READ_BYTES = 1024 * 1024  # the most one read of a body takes off the connection
POLL_INTERVAL = 0.01
HOLD_POLL_SECONDS = 0.05


class App(Protocol):
    def handle(self, request: Request) -> Response: ...

    def streams(self, method: str, path: str) -> bool:
        """Whether the route reads the body as it arrives (``Request.chunks``) instead of whole."""
        ...


class Server(ThreadingHTTPServer):
    """A threading HTTP server that knows its open connections, so it can drop them."""

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        app: App,
        label: str,
        redact: tuple[str, ...],
    ) -> None:
        self.app = app
        self.label = label
        self.redact = redact
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, HttpHandler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (socket.getfqdn), which can be
        # slow; nothing here needs it.
        TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away (timeouts, the reset fault, stop()) is not an error.
        logger.debug("%s: connection from %s ended abruptly", self.label, client_address)


def _too_large() -> BodyError:
    return BodyError(413, "payload_too_large", "The request body is too large.")


def _ended_early() -> BodyError:
    return BodyError(400, "bad_request", "The request body ended early.")


class _Body:
    """A request's body as it arrives: pieces of at most ``READ_BYTES``, ``MAX_BODY_BYTES`` in all.

    The framing headers are checked when it is made, so a declared length over the cap is refused
    before a byte is read; a chunked body is counted as its chunks arrive and refused at the one
    that crosses the cap. Iterating reads it, once: whole for most routes (:meth:`read`), piece by
    piece for a streamed one (an upload), so no request holds more than a piece of it. A break —
    the body ends early, a chunk size is not one, the connection fails — raises
    :class:`BodyError` and leaves the body ``broken``: that connection takes no next request.
    """

    def __init__(self, rfile: BufferedIOBase, headers: Message) -> None:
        self._rfile = rfile
        self.broken = False
        self._length: int | None = None  # None: chunked
        encoding = headers.get("Transfer-Encoding")
        if encoding is not None:
            if encoding.strip().lower() != "chunked":
                raise BodyError(400, "bad_request", "Only chunked transfer encoding is understood.")
        else:
            self._length = self._declared(headers.get("Content-Length"))
        self._pieces = self._read()

    @staticmethod
    def _declared(header: str | None) -> int:
        if header is None:
            return 0
        try:
            length = int(header)
        except ValueError:
            raise BodyError(400, "bad_request", "Content-Length is not a number.") from None
        if length < 0:
            raise BodyError(400, "bad_request", "Content-Length is negative.")
        if length > MAX_BODY_BYTES:
            raise _too_large()
        return length

    def __iter__(self) -> Iterator[bytes]:
        return self._pieces

    def read(self) -> bytes:
        """The body whole (a route that is not streamed: small JSON bodies)."""
        return b"".join(self._pieces)

    def drain(self) -> None:
        """Read and drop what the route left unread (it refused the request first, or a fault
        answered it), so the answer reaches a client that is still sending, and the connection
        can take the next request — as when every body was read before it was answered."""
        for _ in self._pieces:
            pass

    def _read(self) -> Iterator[bytes]:
        try:
            if self._length is None:
                yield from self._chunked()
            else:
                yield from self._exactly(self._length)
        except BodyError:
            self.broken = True
            raise

    def _exactly(self, length: int) -> Iterator[bytes]:
        while length > 0:
            try:
                piece = self._rfile.read(min(length, READ_BYTES))
            except OSError:  # the client hung up (or the down fault closed the connection)
                raise _ended_early() from None
            if not piece:
                raise _ended_early()
            length -= len(piece)
            yield piece

    def _chunked(self) -> Iterator[bytes]:
        total = 0
        while True:
            line = self._rfile.readline(1024)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise BodyError(400, "bad_request", "A chunk size is not valid.") from None
            if size < 0:
                raise BodyError(400, "bad_request", "A chunk size is not valid.")
            if size == 0:
                while self._rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return
            total += size
            if total > MAX_BODY_BYTES:
                raise _too_large()
            yield from self._exactly(size)
            self._rfile.readline(1024)  # the CRLF after the chunk


class HttpHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = f"FORAGER-local-engine/{ENGINE_VERSION}"
    sys_version = ""
    server: Server

    def do_GET(self) -> None:
        self._dispatch()

    def do_HEAD(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def do_OPTIONS(self) -> None:
        self._dispatch()

    # -- logging: one line per request, through ``logging``, never the token --------

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass  # _dispatch logs instead

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s: %s", self.server.label, self._redact(format % args))

    def _redact(self, text: str) -> str:
        for secret in self.server.redact:
            if secret:
                text = text.replace(secret, "***")
        return text

    # -- request / response ----------------------------------------------------------

    def _dispatch(self) -> None:
        started = time.monotonic()
        split = urlsplit(self.path)
        path = split.path or "/"
        try:
            response = self._answer(path, split.query)
        except BodyError as exc:
            self.close_connection = True
            response = exc.to_response()
        self._send(response)
        logger.info(
            "%s %s %s %d %.1fms",
            self.server.label,
            self.command,
            self._redact(path),
            response.status,
            (time.monotonic() - started) * 1000,
        )

    def _answer(self, path: str, query: str) -> Response:
        """The app's answer to the request. A streamed route (an upload) is handed the body as it
        arrives; any other gets it read whole first. Either way the body is read to its end before
        the answer is sent, and a body that broke off closes the connection."""
        body = _Body(self.rfile, self.headers)
        streams = self.server.app.streams(self.command, path)
        request = Request(
            method=self.command,
            path=path,
            query=query,
            headers=self.headers,
            body=b"" if streams else body.read(),
            chunks=body if streams else (),
        )
        try:
            response = self.server.app.handle(request)
        except Exception:
            logger.exception("%s: handler failed", self.server.label)
            response = ApiError(500, "internal_error", "The engine failed.").to_response()
        if body.broken:  # the route met the break (and answered it, a BodyError)
            self.close_connection = True
        else:
            body.drain()
        return response

    def _send(self, response: Response) -> None:
        self.send_response(response.status)
        for name, value in response.headers:
            self.send_header(name, value)
        if response.content_type is not None:
            self.send_header("Content-Type", response.content_type)
        length = response.declared_length if response.declared_length is not None else len(response.body)
        self.send_header("Content-Length", str(length))
        if response.abort:
            self.close_connection = True
        if self.close_connection:
            self.send_header("Connection", "close")
        if response.stall_seconds is not None or response.trickle_seconds is not None:
            self.close_connection = True
        self.end_headers()
        if response.stall_seconds is not None:
            self.wfile.flush()
            self._hold(response.stall_seconds)
            self._reset()
            return
        if response.trickle_seconds is not None:
            self._trickle(response.body, response.trickle_seconds)
            return
        if self.command != "HEAD":
            self.wfile.write(response.body)
            for piece in response.stream or ():
                self.wfile.write(piece)
        if response.abort:
            self.wfile.flush()
            # Closing with SO_LINGER 0 resets the connection instead of ending it.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    def _trickle(self, body: bytes, every: float) -> None:
        """The body one byte at a time, ``every`` seconds apart, while the client listens."""
        for offset in range(len(body) if self.command != "HEAD" else 0):
            if not self._hold(every):
                return
            try:
                self.wfile.write(body[offset : offset + 1])
            except OSError:
                return

    def _hold(self, seconds: float) -> bool:
        """Wait ``seconds``; False as soon as the client hangs up (or the port closes)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                readable, _, _ = select.select([self.connection], [], [], min(left, HOLD_POLL_SECONDS))
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return False
            except (OSError, ValueError):
                return False
        return True

    def _reset(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _private(folder: Path) -> Path:
    """The data folder, its owner's alone (0700, whatever the umask made it), and the path of its
    database, made 0600 before SQLite opens it (its ``-wal`` and ``-shm`` take the database's mode)."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    database = folder / "engine.sqlite3"
    os.close(os.open(database, os.O_WRONLY | os.O_CREAT, 0o600))
    database.chmod(0o600)
    return database


def url_of(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class Engine:
    """The engine: the API port and the state behind it.

    Use :func:`start_engine`, or ``with Engine(...) as engine:``.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        *,
        allow_remote: bool = False,
        state_file: Path | None = None,
        data_dir: Path | None = None,
        input_roots: Sequence[Path] = (),
        workers: int = 0,
        vectors: bool = True,
    ) -> None:
        if not allow_remote and not _is_loopback(host):
            raise ValueError(
                f"{host!r} is not a loopback address; the engine binds loopback unless allow_remote=True"
                " (--allow-remote)"
            )
        if token is not None and (not token or token != token.strip()):
            raise ValueError("token must be non-empty with no surrounding whitespace")
        pool = Workers(workers)  # a count out of range is refused before anything is made on disk
        self.host = host
        self.token: str = token if token is not None else secrets.token_urlsafe(24)
        if data_dir is None and state_file is not None:  # what the file keeps, its records beside it
            data_dir = state_file.with_name(state_file.stem + "-data")
        self.data_dir = data_dir
        self._scratch: Path | None = None
        if data_dir is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="engine-"))
        folder = data_dir if data_dir is not None else self._scratch
        assert folder is not None
        store = Store(_private(folder) if data_dir is not None else None, threading.RLock())
        self._state = EngineState(
            store=store,
            upload_root=folder / "uploads",
            allowed_roots=tuple(Path(os.path.abspath(r)) for r in input_roots),
            workers=pool,
            vectors=vectors,
        )
        exports.book(self._state).use_root(folder / "exports")
        self.state_file = state_file
        self._persist_lock = threading.Lock()
        if state_file is not None:
            saved = read_state_file(state_file)
            if saved is not None:
                self._state.load_persisted(saved)
            self._state.on_change = self._persist
        self._stopping = threading.Event()
        self._api = ForagerApi(self._state, self.token)
        self._port = port
        self._lock = threading.RLock()
        self._api_server: Server | None = None
        self._api_thread: threading.Thread | None = None
        self._started = False
        self._stopped = False

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> Self:
        """Bind and serve the API port and start the engine's clock; returns once it listens."""
        with self._lock:
            if self._started:
                raise RuntimeError("the engine was already started")
            self._started = True
            self._open_api()
            self._clock = threading.Thread(target=self._run_clock, name="engine-clock", daemon=True)
            self._clock.start()
        return self

    def _run_clock(self) -> None:
        """The engine's worker: jobs move through their stages here, not in the requests."""
        from local_engine.ingestion.jobs import book

        jobs = book(self._state)
        while not self._stopping.is_set():
            try:
                ticked = jobs.tick()
            except Exception:  # a job's stage fails its job (jobs.py); this is anything else: go on
                logger.exception("the engine's clock stumbled; it goes on")
                self._stopping.wait(0.5)
                continue
            if ticked.moved:
                continue  # a job's next stage may be due now: a pause here is a pause in every job
            if not ticked.moving:
                self._state.workers.release_if_idle()
            self._stopping.wait(0.01 if ticked.moving else 0.05)

    def stop(self) -> None:
        """Shut the server down and join its threads. Safe to call twice."""
        with self._lock:
            if self._stopped or not self._started:
                self._stopped = True
                return
            self._stopped = True
            self._stopping.set()
            self._state.stopping.set()
            self._close_api()
            self._stop_more()
            clock = getattr(self, "_clock", None)
            if clock is not None:
                clock.join(timeout=5)
            self._state.workers.close()
            with self._state.lock:
                self._state.store.close()
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)

    def _stop_more(self) -> None:
        """What a subclass serves beside the API port, stopped with it."""

    def __enter__(self) -> Self:
        if not self._started:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _open_api(self) -> None:
        server, thread = serve(self.host, self._port, self._api, "api", (self.token,))
        self._port = server.server_port  # port 0 becomes the real one, kept for reopen
        self._api_server = server
        self._api_thread = thread

    def _close_api(self) -> None:
        if self._api_server is not None and self._api_thread is not None:
            close_server(self._api_server, self._api_thread)
        self._api_server = None
        self._api_thread = None

    def set_api_listening(self, listening: bool) -> None:
        """Close the API port (its listening socket and every open connection), or bind it again."""
        with self._lock:
            if not self._started or self._stopped:
                return
            if not listening and self._api_server is not None:
                self._close_api()
            elif listening and self._api_server is None:
                self._open_api()

    def _persist(self) -> None:
        """Write what a restart keeps, as it changes (before the request that changed it is answered)."""
        if self.state_file is None:
            return
        with self._persist_lock:
            write_state_file(self.state_file, self._state.persisted())

    # -- addresses -----------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return url_of(self.host, self._port)

    @property
    def is_down(self) -> bool:
        """Whether the API port is closed."""
        with self._lock:
            return self._started and self._api_server is None

    # -- state ---------------------------------------------------------------------

    @property
    def state(self) -> EngineState:
        return self._state

    @property
    def api(self) -> ForagerApi:
        return self._api

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request the API port received, oldest first (a copy)."""
        return self._state.requests_snapshot()

    @property
    def request_count(self) -> int:
        """How many requests the API port received since the start or the last reset (all
        counted; ``requests`` keeps the newest ``REQUESTS_KEPT``)."""
        return self._state.request_count

    def reset(self) -> None:
        """Back to the demo corpus: requests, keys, jobs, exports and the feed forgotten."""
        with self._lock:
            self._state.reset()
            feed.ledger(self._state).reset()
            ingestion.book(self._state).reset()
            exports.book(self._state).reset()


def serve(host: str, port: int, app: App, label: str, redact: tuple[str, ...]) -> tuple[Server, threading.Thread]:
    """``app`` served on ``(host, port)`` in a daemon thread (port 0: a free one, ``server.server_port``)."""
    server = Server((host, port), app, label, redact)
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": POLL_INTERVAL},
        name=f"engine-{label}",
        daemon=True,
    )
    thread.start()
    return server, thread


def close_server(server: BaseServer, thread: threading.Thread) -> None:
    server.shutdown()
    if isinstance(server, Server):
        server.close_connections()
    server.server_close()
    thread.join(timeout=5)


class EngineOptions(TypedDict, total=False):
    """:class:`Engine`'s keyword options, as :func:`start_engine` and the test double pass them on."""

    allow_remote: bool
    state_file: Path | None
    data_dir: Path | None
    input_roots: Sequence[Path]
    workers: int
    vectors: bool


def start_engine(
    host: str = "127.0.0.1", port: int = 0, token: str | None = None, **options: Unpack[EngineOptions]
) -> Engine:
    """Start an engine in daemon threads; returns once its API port is listening.

    ``port`` 0 picks a free port. Without ``token`` a random one is made (``engine.token``).
    ``state_file`` keeps the knowledge bases and the idempotency keys across restarts (read at
    start, written on every change); the records (sources, statements, …) are the store's, under
    ``data_dir`` (by default a ``<state file>-data`` folder beside the file). ``workers`` processes
    compute the stages' pure work beside the engine's own (``ingestion/workers.py``); 0 computes it
    in place. ``vectors`` False: no vectors at indexing and search by words alone.
    """
    return Engine(host, port, token, **options).start()
