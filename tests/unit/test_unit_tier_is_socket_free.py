"""The unit tier opens no network socket: FORAGER answers in-process (tests/unit/conftest.py)."""

from __future__ import annotations

import socket

import pytest

from knowledge_service.errors import KnowledgeUnreachable
from knowledge_service.upstream.client import ForagerClient
from local_engine.double import Double
from local_engine.double.inprocess import InProcessNetwork
from tests.unit.conftest import SocketRefused


def test_given_the_unit_tier_when_a_test_connects_to_loopback_then_it_is_refused() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(SocketRefused, match="connect"):
        sock.connect(("127.0.0.1", 9))


def test_given_the_unit_tier_when_a_test_binds_a_port_then_it_is_refused() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(SocketRefused, match="bind"):
        sock.bind(("127.0.0.1", 0))


def test_given_the_simulator_in_process_when_the_client_calls_then_it_answers_over_no_port(
    forager: Double, forager_in_process: InProcessNetwork
) -> None:
    client = ForagerClient(forager.url, forager.token)

    status = client.status()
    client.projects()

    assert status.version
    assert forager.request_count == 2
    assert forager_in_process.connections == 1  # one kept-alive connection served both calls


def test_given_the_down_fault_when_the_client_calls_then_the_connection_is_refused(
    forager: Double, forager_in_process: InProcessNetwork
) -> None:
    client = ForagerClient(forager.url, forager.token)
    client.status()
    forager.set_fault("down")

    with pytest.raises(KnowledgeUnreachable):
        client.status()
