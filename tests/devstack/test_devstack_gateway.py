"""The local API Gateway's own answers, with stand-in functions (no AWS): the template's
gateway responses byte for byte, the proxy event and response rules, the payload limit, and
the local control route."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx
import pytest

from devstack.gateway import ApiServer, Gateway, _Server, local_routes
from devstack.lambdas import FunctionError
from devstack.template import Template

TEMPLATE = Template()
RESPONSES = TEMPLATE.gateway_responses()
MISSING_ROUTE = RESPONSES["MISSING_AUTHENTICATION_TOKEN"]["ResponseTemplates"]["application/json"].encode()
DEFAULT_5XX = RESPONSES["DEFAULT_5XX"]["ResponseTemplates"]["application/json"].encode()
BEARER = [("Authorization", "Bearer ks_token")]


class Functions:
    """Stand-ins for the template's functions: what each answers, and what each was sent."""

    def __init__(self) -> None:
        self.answer: Any = {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": '{"ok": true}'}
        self.events: dict[str, list[dict[str, Any]]] = {}

    def invoke(self, function: str, event: dict[str, Any]) -> Any:
        self.events.setdefault(function, []).append(event)
        outcome = self.answer
        if isinstance(outcome, Exception):
            raise FunctionError(function, str(outcome), error_type=type(outcome).__name__) from outcome
        return outcome


@pytest.fixture
def functions() -> Functions:
    return Functions()


@pytest.fixture
def gateway(functions: Functions) -> Gateway:
    """The template's gateway: no authorizer, each function authenticates its own request."""
    return Gateway.from_template(
        TEMPLATE,
        functions.invoke,
        local_route=local_routes(lambda name: {"ran": name} if name == "Sched" else {}[name]),
    )


def test_a_request_without_a_token_reaches_its_function_once_which_answers_it(
    gateway: Gateway, functions: Functions
) -> None:
    answer = gateway.handle("GET", "/knowledge/status", [], b"")
    assert answer.status == 200
    assert list(functions.events) == ["StatusFunction"]
    assert len(functions.events["StatusFunction"]) == 1
    assert "authorizer" not in functions.events["StatusFunction"][0]["requestContext"]


def test_a_request_reaches_its_function_as_api_gateways_proxy_event(gateway: Gateway, functions: Functions) -> None:
    answer = gateway.handle(
        "POST",
        "/settings?x=1&x=2",
        [*BEARER, ("Content-Type", "application/json")],
        b'{"knowledge_enabled": true}',
        "127.0.0.1",
    )
    assert (answer.status, answer.body) == (200, b'{"ok": true}')
    assert answer.header("x-amzn-RequestId")
    event = functions.events["StatusFunction"][0]
    assert event["headers"]["Authorization"] == "Bearer ks_token"  # the function reads the token itself
    assert event["resource"] == "/settings"
    assert event["body"] == '{"knowledge_enabled": true}'
    assert event["multiValueQueryStringParameters"] == {"x": ["1", "2"]}
    assert event["headers"]["X-Forwarded-For"] == "127.0.0.1"


def test_an_unknown_route_is_the_templates_404_and_no_function_runs(gateway: Gateway, functions: Functions) -> None:
    for method, path in [("GET", "/no/such/route"), ("DELETE", "/knowledge/status")]:
        answer = gateway.handle(method, path, BEARER, b"")
        assert (answer.status, answer.body) == (404, MISSING_ROUTE)
    assert functions.events == {}


def test_a_failing_function_is_a_502_with_the_default_5xx_body(gateway: Gateway, functions: Functions) -> None:
    functions.answer = ValueError("boom")
    answer = gateway.handle("GET", "/modules", BEARER, b"")
    assert (answer.status, answer.body) == (502, DEFAULT_5XX)


@pytest.mark.parametrize(
    "malformed", [{"body": "no status"}, {"statusCode": 200, "body": {"not": "a string"}}, ["not", "an", "object"]]
)
def test_a_malformed_proxy_response_is_a_502(gateway: Gateway, functions: Functions, malformed: Any) -> None:
    functions.answer = malformed
    assert gateway.handle("GET", "/modules", BEARER, b"").status == 502


def test_the_proxy_response_is_rendered_headers_merged_and_base64_decoded(
    gateway: Gateway, functions: Functions
) -> None:
    functions.answer = {
        "statusCode": 201,
        "headers": {"X-One": "1", "X-Both": "single"},
        "multiValueHeaders": {"X-Both": ["m1", "m2"], "Set-Cookie": ["a=1", "b=2"]},
        "body": base64.b64encode(b"\x00\xffbytes").decode(),
        "isBase64Encoded": True,
    }
    answer = gateway.handle("GET", "/modules", BEARER, b"")
    assert answer.status == 201
    assert answer.body == b"\x00\xffbytes"
    assert ("X-One", "1") in answer.headers
    assert [v for k, v in answer.headers if k == "X-Both"] == ["m1", "m2"]
    assert [v for k, v in answer.headers if k == "Set-Cookie"] == ["a=1", "b=2"]
    assert answer.header("Content-Type") == "application/json"


LOCAL = [("Host", "127.0.0.1:3000")]


def test_the_local_schedule_route_answers_the_handlers_value(gateway: Gateway) -> None:
    answer = gateway.handle("POST", "/_local/schedules/Sched/run", LOCAL, b"")
    assert (answer.status, json.loads(answer.body)) == (200, {"ran": "Sched"})
    assert gateway.handle("POST", "/_local/schedules/Nope/run", LOCAL, b"").status == 404
    assert gateway.handle("GET", "/_local/schedules/Sched/run", LOCAL, b"").status == 405
    assert gateway.handle("POST", "/_local/schedules/Sched/run", LOCAL, b"", "10.0.0.9").status == 403
    # a web page's request reaches loopback too: another origin, or a name rebound to it, is refused
    page = [*LOCAL, ("Origin", "http://evil.example"), ("Content-Type", "text/plain")]
    assert gateway.handle("POST", "/_local/schedules/Sched/run", page, b"").status == 403
    rebound = [("Host", "evil.example:3000"), ("Origin", "http://evil.example:3000")]
    assert gateway.handle("POST", "/_local/schedules/Sched/run", rebound, b"").status == 403


@pytest.fixture
def server(gateway: Gateway) -> Iterator[ApiServer]:
    api = ApiServer(gateway, port=0).start()
    yield api
    api.stop()


def test_over_http_header_case_and_repeats_reach_the_event(server: ApiServer, functions: Functions) -> None:
    with httpx.Client(timeout=30.0) as client:
        answer = client.get(
            f"{server.url}/modules",
            headers=[("Authorization", "Bearer ks_token"), ("X-Mixed-Case", "a"), ("X-Mixed-Case", "b")],
        )
    assert answer.status_code == 200
    event = functions.events["StatusFunction"][0]
    assert event["multiValueHeaders"]["X-Mixed-Case"] == ["a", "b"]
    assert event["headers"]["Authorization"] == "Bearer ks_token"


def test_a_body_over_ten_megabytes_is_refused_with_413_before_it_is_read(
    server: ApiServer, functions: Functions
) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(
            b"POST /settings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ks_token\r\n"
            b"Content-Type: application/json\r\nContent-Length: 10485761\r\n\r\n"
        )
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
            chunk = connection.recv(65536)
            if not chunk:
                break
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413")
    assert json.loads(body) == {
        "success": False,
        "message": "The request is larger than API Gateway's 10 MB payload limit.",
        "data": None,
        "code": "payload_too_large",
    }
    assert functions.events == {}


def test_stopping_closes_kept_alive_connections(gateway: Gateway) -> None:
    api = ApiServer(gateway, port=0).start()
    with httpx.Client(timeout=30.0) as client:
        assert client.get(f"{api.url}/modules", headers=BEARER).status_code == 200
        api.stop()
        with pytest.raises(httpx.TransportError):
            client.get(f"{api.url}/modules", headers=BEARER)


def _fail(error: Exception) -> None:
    raise error


def _handled_while_failing(server: _Server, error: Exception) -> None:
    try:
        _fail(error)
    except Exception:
        server.handle_error(None, ("127.0.0.1", 1))


def test_a_client_that_hangs_up_before_its_answer_is_a_debug_line_not_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = _Server(("127.0.0.1", 0), BaseHTTPRequestHandler)
    try:
        _handled_while_failing(server, BrokenPipeError(32, "Broken pipe"))  # writing to a closed socket
        _handled_while_failing(server, ConnectionResetError(104, "Connection reset by peer"))
        assert capsys.readouterr().err == ""
        _handled_while_failing(server, RuntimeError("the gateway's own failure"))
        assert "RuntimeError: the gateway's own failure" in capsys.readouterr().err  # still loud
    finally:
        server.server_close()


DOUBLED = ["//knowledge/status", "//knowledge/status?project=falcon", "//modules", "///knowledge/status"]


@pytest.mark.parametrize("target", DOUBLED)
def test_a_leading_doubled_slash_over_the_socket_is_no_route_not_a_host(
    server: ApiServer, functions: Functions, target: str
) -> None:
    """Over the socket, as a person's request arrives (issue 39): http.server collapses a leading
    ``//`` in ``self.path`` (an open-redirect guard), so a gateway handed that path routed
    ``//knowledge/status`` to the status function; the request line's own target is routed."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ks_token\r\n\r\n".encode())
        head, _, body = _whole_answer(sock).partition(b"\r\n\r\n")
    assert head.split(b" ", 2)[1] == b"404", head
    assert body == MISSING_ROUTE
    assert functions.events == {}


def _whole_answer(sock: socket.socket) -> bytes:
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    head = received.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
    length = int(next(line.split(":", 1)[1] for line in head.split("\r\n") if line.startswith("content-length")))
    while len(received.split(b"\r\n\r\n", 1)[1]) < length:
        received += sock.recv(65536)
    return received


@pytest.mark.parametrize("target", DOUBLED)
def test_the_gateway_refuses_a_leading_doubled_slash_before_any_normalisation(
    gateway: Gateway, functions: Functions, target: str
) -> None:
    answer = gateway.handle("GET", target, BEARER, b"")
    assert (answer.status, answer.body) == (404, MISSING_ROUTE)
    assert functions.events == {}


@pytest.mark.parametrize(
    "target", ["/knowledge/nowhere", "/knowledge//status", "/api/v1/projects/falcon/nowhere", "/vv"]
)
def test_a_route_miss_outside_pages_and_verbs_is_the_templates_one_gateway_response(
    gateway: Gateway, functions: Functions, target: str
) -> None:
    """A GatewayResponse is a static template (no VTL, no branch on the path): the deployed
    API answers a miss no function takes in one shape, and the local gateway does as it does."""
    answer = gateway.handle("GET", target, BEARER, b"")
    assert (answer.status, answer.body) == (404, MISSING_ROUTE)
    assert answer.header("Content-Type") == "application/json"
    assert functions.events == {}


@pytest.mark.parametrize(
    ("target", "function"),
    [
        ("/api/v1/projects/falcon/kb//pages/a.md", "PagesFunction"),
        ("/api/v1/projects/falcon/kb/nowhere", "PagesFunction"),
        ("/v//knowledge.get", "VerbsFunction"),
        ("/v/knowledge.nothing", "VerbsFunction"),
    ],
)
def test_a_miss_under_pages_or_verbs_goes_to_that_surfaces_function(
    gateway: Gateway, functions: Functions, target: str, function: str
) -> None:
    """Their resources take ANY and their roots a greedy catch-all (template.yaml), so the
    surface's own function answers the miss in its own shape (tests/pages/test_surface_misses.py)."""
    gateway.handle("GET", target, BEARER, b"")
    assert functions.events.get(function), functions.events
