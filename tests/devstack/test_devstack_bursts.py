"""The local stack under bursts, and the answers it gives by itself: a listen queue that holds
200 connections, TCP_NODELAY, and the envelope for every refusal (doubled slashes, a 1 MB
request line, oversized headers, a malformed request). The execution environments that run
concurrent invocations are ``test_devstack_environments.py``'s."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from devstack.gateway import ApiServer, Gateway
from devstack.template import Template

TEMPLATE = Template()
MISSING_ROUTE = TEMPLATE.gateway_responses()["MISSING_AUTHENTICATION_TOKEN"]["ResponseTemplates"]["application/json"]


class Recorder:
    def __init__(self) -> None:
        self.called: list[str] = []

    def invoke(self, function: str, event: dict[str, Any]) -> Any:
        self.called.append(function)
        if function == "AuthorizerFunction":
            return {
                "principalId": "ada",
                "policyDocument": {
                    "Version": "2012-10-17",
                    "Statement": [{"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": "*"}],
                },
            }
        return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": '{"ok": true}'}


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def server(recorder: Recorder) -> Iterator[ApiServer]:
    api = ApiServer(Gateway.from_template(TEMPLATE, recorder.invoke), port=0).start()
    yield api
    api.stop()


# ---------------------------------------------------------------------- doubled slashes
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/knowledge//status"),
        ("POST", "/knowledge/feed//sync"),
        ("GET", "/knowledge/items/itm_0123456789abcdef//evidence"),
        ("GET", "//knowledge/status"),
        ("GET", "//knowledge/status?project=falcon"),
        ("POST", "//knowledge/feed/sync"),
    ],
)
def test_given_a_doubled_slash_when_requested_over_the_socket_then_404_not_found_and_no_function_runs(
    server: ApiServer, recorder: Recorder, method: str, path: str
) -> None:
    # over the socket, as a person's request arrives: http.server rewrites a leading // in its
    # own parsed path, so a call of gateway.handle could not see what a client sees (issue 39)
    request = f"{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ks_x\r\nConnection: close\r\n"
    status, _, body = _raw(server, (request + "Content-Length: 0\r\n\r\n").encode())

    assert status == 404
    assert body == json.loads(MISSING_ROUTE)
    assert body["code"] == "not_found"
    assert recorder.called == []


def test_given_the_same_path_with_single_slashes_then_it_reaches_its_function(recorder: Recorder) -> None:
    gateway = Gateway.from_template(TEMPLATE, recorder.invoke)

    answer = gateway.handle("GET", "/knowledge/status", [("Authorization", "Bearer ks_x")], b"")

    assert answer.status == 200
    assert recorder.called[-1] != "AuthorizerFunction"


# ---------------------------------------------------------------------- http.server's refusals
def _raw(server: ApiServer, payload: bytes) -> tuple[int, dict[str, str], dict[str, Any]]:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
        conn.sendall(payload)
        received = b""
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, json.loads(body)


def test_given_a_1mb_query_string_then_414_in_the_envelope_not_an_html_page(server: ApiServer) -> None:
    status, headers, body = _raw(
        server, b"GET /knowledge/search?q=" + b"a" * 1_000_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    )

    assert status == 414
    assert headers["content-type"] == "application/json"
    assert body == {
        "success": False,
        "message": "The request line is longer than this API accepts (64 KiB).",
        "data": None,
        "code": "uri_too_long",
    }


def test_given_a_header_too_long_then_431_in_the_envelope(server: ApiServer) -> None:
    status, headers, body = _raw(
        server, b"GET /knowledge/status HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 70_000 + b"\r\n\r\n"
    )

    assert status == 431
    assert headers["content-type"] == "application/json"
    assert body["code"] == "headers_too_large"
    assert body["success"] is False


def test_given_a_malformed_request_line_then_400_in_the_envelope(server: ApiServer) -> None:
    status, headers, body = _raw(server, b"NOT A REQUEST AT ALL\r\n\r\n")

    assert status == 400
    assert headers["content-type"] == "application/json"
    assert body == {"success": False, "message": body["message"], "data": None, "code": "bad_request"}


def test_given_an_http_version_it_does_not_speak_then_505_in_the_envelope(server: ApiServer) -> None:
    status, _, body = _raw(server, b"GET /knowledge/status HTTP/2.0\r\nHost: x\r\n\r\n")

    assert status == 505
    assert body["code"] == "http_version_not_supported"


# ---------------------------------------------------------------------- the listen queue
def test_given_200_connections_while_the_api_is_busy_then_every_one_is_queued_and_answered(
    recorder: Recorder,
) -> None:
    api = ApiServer(Gateway.from_template(TEMPLATE, recorder.invoke), port=0)  # listening, not accepting yet
    try:
        clients: list[socket.socket] = []
        for _ in range(200):  # a SYN the full queue drops would time out here
            clients.append(socket.create_connection(("127.0.0.1", api.port), timeout=0.5))
        for client in clients:
            client.sendall(b"POST /knowledge/nothing HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        api.start()
        statuses = []
        for client in clients:
            client.settimeout(10)
            statuses.append(client.recv(65536).split(b" ", 2)[1])
            client.close()
    finally:
        api.stop()

    assert statuses == [b"404"] * 200


def test_given_one_kept_alive_connection_then_back_to_back_requests_do_not_wait_for_nagle(
    server: ApiServer,
) -> None:
    with httpx.Client(timeout=30.0) as client:
        start = time.monotonic()
        for _ in range(30):  # with Nagle, each answer's body waits ~40 ms for the delayed ACK
            assert client.get(f"{server.url}/knowledge/nothing").status_code == 404
        elapsed = time.monotonic() - start

    assert elapsed < 30 * 0.02
