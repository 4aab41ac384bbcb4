"""The unit tier opens no network socket: FORAGER is the simulator served in-process, AWS is
moto in-process, and a test that connects or binds to an address fails.

The simulator here is built but never started (it listens on no port); the product's
connection pool is handed :class:`local_engine.double.inprocess.InProcessNetwork`, which serves
each connection on a thread with the same HTTP handler the simulator's port uses, faults
and all. ``tests/contract`` and ``tests/e2e`` keep the simulator on loopback.
"""

from __future__ import annotations

import socket
from typing import Any

import httpcore
import pytest

from knowledge_service.upstream import client as client_module
from local_engine.double import Double
from local_engine.double.inprocess import InProcessNetwork
from tests import secrets

NOMINAL_PORT = 7311
"""The port the in-process simulator's URL names; nothing listens on it."""

NETWORK_FAMILIES = (socket.AF_INET, socket.AF_INET6)


class SocketRefused(RuntimeError):
    """A unit test tried to reach the network."""


@pytest.fixture(scope="session")
def simulator() -> Double:
    sim = Double(port=NOMINAL_PORT, token="unit-simulator-token")  # never started: no port opened
    secrets.register(sim.token)
    return sim


@pytest.fixture(autouse=True)
def forager_in_process(simulator: Double, monkeypatch: pytest.MonkeyPatch) -> InProcessNetwork:
    """Every connection pool the product builds talks to the simulator in-process."""
    network = InProcessNetwork(simulator)
    build = client_module.connection_pool

    def pool(timeout_seconds: float, network_backend: httpcore.NetworkBackend | None = None) -> Any:
        return build(timeout_seconds, network=network)

    monkeypatch.setattr(client_module, "connection_pool", pool)
    return network


@pytest.fixture(autouse=True)
def no_network_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse connect/bind to any network address (socket pairs, being unnamed, still work)."""

    def refuse(method: str) -> Any:
        original = getattr(socket.socket, method)

        def guarded(self: socket.socket, address: Any, *args: Any) -> Any:
            if self.family in NETWORK_FAMILIES:
                raise SocketRefused(f"unit tests open no network socket: {method}({address!r})")
            return original(self, address, *args)

        return guarded

    for method in ("connect", "connect_ex", "bind"):
        monkeypatch.setattr(socket.socket, method, refuse(method))
