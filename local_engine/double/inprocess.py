"""The test double without a port: an httpcore network backend that serves each connection
in-process, for the unit tier (no TCP, no loopback, nothing listening).

Each ``connect_tcp`` opens a ``socket.socketpair()`` (an anonymous local pair, never a
network address) and serves its far end on a thread with the very HTTP handler the API
port uses, so the wire is byte for byte the same: keep-alive, chunked bodies, and every
fault — ``down`` refuses the connection, ``slow`` waits, ``trickle`` and ``stall`` pace
or hold the body, ``reset`` drops the connection mid-body.

Hand it to the product as the network of its connection pool
(``connection_pool(timeout, network=InProcessNetwork(double))``); the double is
built but never started (``Double(token=...)``), so it opens no port.
"""

from __future__ import annotations

import select
import socket
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import httpcore

from local_engine.serving.server import HttpHandler

if TYPE_CHECKING:
    from local_engine.double.engine import Double


class _InProcessHandler(HttpHandler):
    disable_nagle_algorithm = False  # TCP_NODELAY means nothing on a local socket pair


class _Served:
    """What the handler reads from its server: the app, a label and the secrets to redact."""

    def __init__(self, double: Double) -> None:
        self.app = double.api
        self.label = "api (in-process)"
        self.redact = (double.token,)


class _PairStream(httpcore.NetworkStream):
    """The client end of a socket pair, with httpcore's timeouts and errors."""

    def __init__(self, sock: socket.socket, double: Double) -> None:
        self._sock = sock
        self._double = double

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            self._sock.settimeout(timeout)
            return self._sock.recv(max_bytes)
        except TimeoutError as error:
            raise httpcore.ReadTimeout(str(error)) from error
        except OSError as error:
            raise httpcore.ReadError(str(error)) from error

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        try:
            self._sock.settimeout(timeout)
            self._sock.sendall(buffer)
        except TimeoutError as error:
            raise httpcore.WriteTimeout(str(error)) from error
        except OSError as error:
            raise httpcore.WriteError(str(error)) from error

    def close(self) -> None:
        self._sock.close()

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # the pool asks before reusing a kept-alive connection
            return _is_down(self._double) or bool(select.select([self._sock], [], [], 0)[0])
        return self._sock if info == "socket" else None


def _is_down(double: Double) -> bool:
    """The ``down`` fault: the port is closed, and with it every open connection."""
    fault = double.fault
    return fault is not None and fault.mode == "down"


class InProcessNetwork(httpcore.NetworkBackend):
    """Connections to ``double``'s API, served in-process (whatever host and port are asked)."""

    def __init__(self, double: Double) -> None:
        self._double = double
        self._served = _Served(double)
        self._opened = 0

    @property
    def connections(self) -> int:
        """How many connections were opened (the pool's reuse is visible here)."""
        return self._opened

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        if _is_down(self._double):
            raise httpcore.ConnectError("[in-process] connection refused: the double is down")
        near, far = socket.socketpair()
        self._opened += 1
        threading.Thread(target=self._serve, args=(far,), name="forager-double-inprocess", daemon=True).start()
        return _PairStream(near, self._double)

    def _serve(self, far: socket.socket) -> None:
        try:
            _InProcessHandler(far, ("in-process", 0), self._served)  # type: ignore[arg-type]
        except OSError:
            pass  # the client hung up (a timeout, the reset fault)
        finally:
            far.close()

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("[in-process] only the double's API is served")

    def sleep(self, seconds: float) -> None:
        threading.Event().wait(seconds)
