"""The FORAGER simulator serves docs/upstream-contract.md and its control interface."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local_engine.double import Double, FaultError, start_double

TOKEN = "sim-secret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
REPO = Path(__file__).resolve().parents[2]

DEMO_PROJECTS = [
    {
        "project_ref": "falcon",
        "name": "Project Falcon",
        "description": "Launch planning for Project Falcon",
        "source_count": 5,
        "knowledge_count": 9,
        "open_conflict_count": 1,
        "state": "ready",
    },
    {
        "project_ref": "harbour",
        "name": "Harbour handbook",
        "description": "What the harbour team wrote down",
        "source_count": 3,
        "knowledge_count": 5,
        "open_conflict_count": 1,
        "state": "ready",
    },
]
PROJECT_KEYS = set(DEMO_PROJECTS[0])


def request(method: str, url: str, timeout: float = 2.0, **kwargs: Any) -> httpx.Response:
    """One request on a fresh connection (``verify=False``: plain HTTP, and loading
    the CA bundle would cost 0.1 s per client)."""
    with httpx.Client(verify=False, timeout=timeout) as client:
        return client.request(method, url, **kwargs)


@pytest.fixture
def sim() -> Iterator[Double]:
    simulator = start_double(host="127.0.0.1", port=0, control_port=0, token=TOKEN)
    try:
        yield simulator
    finally:
        simulator.stop()


@pytest.fixture
def api(sim: Double) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.url, headers=AUTH, timeout=2.0, verify=False) as client:
        yield client


@pytest.fixture
def control(sim: Double) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.control_url, timeout=2.0, verify=False) as client:
        yield client


def post_project(api: httpx.Client, body: Any, key: str | None = "key-1") -> httpx.Response:
    headers = {} if key is None else {"Idempotency-Key": key}
    return api.post("/api/projects", json=body, headers=headers)


def error_code(response: httpx.Response) -> str:
    body = response.json()
    assert set(body) == {"error"}
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return str(body["error"]["code"])


# -- authentication ------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-token"},
        {"Authorization": f"bearer {TOKEN}"},
        {"Authorization": TOKEN},
        {"Authorization": f"Bearer {TOKEN}x"},
    ],
)
@pytest.mark.parametrize(
    "method,path",
    [
        ("GET", "/api/status"),
        ("GET", "/api/capabilities"),
        ("GET", "/api/projects"),
        ("POST", "/api/projects"),
        ("GET", "/api/no-such-route"),
    ],
)
def test_every_api_route_requires_the_exact_bearer_token(
    sim: Double, headers: dict[str, str], method: str, path: str
) -> None:
    response = request(
        method,
        sim.url + path,
        headers={**headers, "Idempotency-Key": "k"},
        json={"name": "x"} if method == "POST" else None,
    )
    assert response.status_code == 401
    assert error_code(response) == "unauthorized"
    assert len(sim.state.projects) == 2


# -- the contract's reads --------------------------------------------------------------


def test_status(api: httpx.Client) -> None:
    response = api.get("/api/status")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json() == {
        "version": "0.8.0",
        "schema_version": 1,
        "search_backend": "sqlite-fts5+wordllama",
        "model_provider": "none (deterministic mode)",
    }


def test_capabilities_are_stable_for_the_instance(sim: Double, api: httpx.Client) -> None:
    first = api.get("/api/capabilities").json()
    assert re.fullmatch(r"fgi_[0-9a-f]{8}", first["instance_id"])
    assert first == {
        "instance_id": first["instance_id"],
        "generation": "gen_01",
        "change_feed": True,
        "exports": {"anthill": {"package_version": 7}},
    }
    sim.reset()
    assert api.get("/api/capabilities").json() == first
    with start_double(token=TOKEN) as other:
        assert other.state.instance_id != first["instance_id"]


def test_projects_lists_the_demo_corpus(api: httpx.Client) -> None:
    response = api.get("/api/projects")
    assert response.status_code == 200
    assert response.json() == {"projects": DEMO_PROJECTS}


def test_unknown_route_and_wrong_method(api: httpx.Client) -> None:
    missing = api.get("/api/projects/falcon/nothing")
    assert missing.status_code == 404
    assert error_code(missing) == "not_found"
    assert error_code(api.get("/elsewhere")) == "not_found"
    wrong = api.delete("/api/projects")
    assert wrong.status_code == 405
    assert error_code(wrong) == "method_not_allowed"
    assert set(wrong.headers["allow"].split(", ")) == {"GET", "POST"}


# -- POST /api/projects ----------------------------------------------------------------


def test_create_project(sim: Double, api: httpx.Client) -> None:
    response = post_project(api, {"name": "  Orbit notes ", "description": "What orbit knows"})
    assert response.status_code == 201
    project = response.json()
    assert set(project) == PROJECT_KEYS
    assert re.fullmatch(r"proj_[0-9a-f]{12}", project["project_ref"])
    assert project == {
        "project_ref": project["project_ref"],
        "name": "Orbit notes",
        "description": "What orbit knows",
        "source_count": 0,
        "knowledge_count": 0,
        "open_conflict_count": 0,
        "state": "empty",
    }
    listed = api.get("/api/projects").json()["projects"]
    assert listed == [*DEMO_PROJECTS, project]
    assert project["project_ref"] in sim.state.projects


def test_create_project_description_is_optional(api: httpx.Client) -> None:
    response = post_project(api, {"name": "N" * 120})
    assert response.status_code == 201
    assert response.json()["description"] == ""


def test_idempotent_replay_answers_the_same_project_once(sim: Double, api: httpx.Client) -> None:
    body = {"name": "Replay", "description": "same"}
    first = post_project(api, body, key="replay-key")
    again = post_project(api, {"description": "same", "name": "Replay"}, "replay-key")
    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json() == first.json()
    assert len(api.get("/api/projects").json()["projects"]) == 3


def test_idempotency_key_reused_with_another_body(api: httpx.Client) -> None:
    assert post_project(api, {"name": "One"}, key="shared").status_code == 201
    conflict = post_project(api, {"name": "Two"}, key="shared")
    assert conflict.status_code == 409
    assert error_code(conflict) == "idempotency_key_reused"
    assert len(api.get("/api/projects").json()["projects"]) == 3


def test_post_without_idempotency_key(sim: Double, api: httpx.Client) -> None:
    for key in (None, ""):
        response = post_project(api, {"name": "No key"}, key=key)
        assert response.status_code == 400
        assert error_code(response) == "idempotency_key_required"
    assert len(sim.state.projects) == 2


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b"[]",
        b'"name"',
        json.dumps({"name": "x", "owner": "me"}).encode(),
        json.dumps({}).encode(),
        json.dumps({"name": 7}).encode(),
        json.dumps({"name": "   "}).encode(),
        json.dumps({"name": "N" * 121}).encode(),
        json.dumps({"name": "x", "description": None}).encode(),
        json.dumps({"name": "x", "description": "d" * 2001}).encode(),
    ],
)
def test_create_project_refuses_a_bad_body(sim: Double, api: httpx.Client, content: bytes) -> None:
    response = api.post(
        "/api/projects",
        content=content,
        headers={"Idempotency-Key": "bad", "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert error_code(response) == "bad_request"
    assert len(sim.state.projects) == 2
    assert sim.state.idempotency == {}


# -- the request record ----------------------------------------------------------------


def test_requests_are_recorded_without_the_token(sim: Double, api: httpx.Client, control: httpx.Client) -> None:
    api.get("/api/projects", params={"page": "1"})
    post_project(api, {"name": "Recorded"}, key="rec-key")
    records = sim.requests
    assert [(r["method"], r["path"], r["status"]) for r in records] == [
        ("GET", "/api/projects", 200),
        ("POST", "/api/projects", 201),
    ]
    assert records[0]["query"] == "page=1"
    assert records[0]["idempotency_key"] is None
    assert records[0]["body"] is None
    assert records[1]["idempotency_key"] == "rec-key"
    assert records[1]["body"] == {"name": "Recorded"}
    assert records[1]["headers"]["Authorization"] == "Bearer ***"
    assert TOKEN not in json.dumps(records)
    assert TOKEN not in control.get("/state").text
    records.clear()  # a copy
    assert len(sim.requests) == 2


# -- faults ----------------------------------------------------------------------------


def test_down_refuses_connections_and_clearing_reopens_the_same_port(sim: Double, api: httpx.Client) -> None:
    assert api.get("/api/status").status_code == 200  # a pooled connection exists
    url = sim.url
    sim.set_fault("down")
    assert sim.is_down
    with pytest.raises(httpx.ConnectError):
        request("GET", url + "/api/status", headers=AUTH)
    with pytest.raises((httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError)):
        api.get("/api/status")
    sim.clear_faults()
    assert sim.url == url
    assert not sim.is_down
    assert request("GET", url + "/api/status", headers=AUTH).status_code == 200


def test_slow_delays_every_answer(sim: Double) -> None:
    sim.set_fault("slow", delay_seconds=0.6)
    with pytest.raises(httpx.TimeoutException):
        request("GET", sim.url + "/api/status", headers=AUTH, timeout=0.15)
    sim.set_fault("slow", delay_seconds=0.05)
    started = time.monotonic()
    response = request("GET", sim.url + "/api/status", headers=AUTH, timeout=2.0)
    assert response.status_code == 200
    assert time.monotonic() - started >= 0.05


def test_429_carries_retry_after(sim: Double, api: httpx.Client) -> None:
    sim.set_fault("429")
    response = api.get("/api/projects")
    assert response.status_code == 429
    assert response.headers["retry-after"] == "1"
    assert error_code(response) == "rate_limited"
    sim.set_fault("429", retry_after=7)
    assert api.get("/api/projects").headers["retry-after"] == "7"


def test_5xx(sim: Double, api: httpx.Client) -> None:
    sim.set_fault("5xx")
    response = api.get("/api/status")
    assert response.status_code == 500
    assert error_code(response) == "internal_error"


def test_malformed_is_a_200_that_is_not_json(sim: Double, api: httpx.Client) -> None:
    sim.set_fault("malformed")
    response = api.get("/api/projects")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.content == b'{"projects": ['
    with pytest.raises(json.JSONDecodeError):
        response.json()


def test_reset_closes_the_connection_mid_body(sim: Double, api: httpx.Client) -> None:
    sim.set_fault("reset")
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        api.get("/api/projects")
    sim.clear_faults()
    assert api.get("/api/projects").status_code == 200


def test_trickle_sends_the_headers_then_the_real_body_a_byte_at_a_time(sim: Double, api: httpx.Client) -> None:
    whole = api.get("/api/status").content
    sim.set_fault("trickle", delay_seconds=0.02)
    started = time.monotonic()
    with api.stream("GET", "/api/status") as response:
        headers_after = time.monotonic() - started
        chunks = list(response.iter_raw())
    assert response.status_code == 200 and headers_after < 0.5
    assert b"".join(chunks) == whole
    assert time.monotonic() - started >= 0.02 * len(whole) * 0.9


def test_stall_sends_the_headers_then_nothing_then_resets(sim: Double, api: httpx.Client) -> None:
    sim.set_fault("stall", delay_seconds=1.5)  # the headers' bound, 1 s, leaves room for a busy machine
    started = time.monotonic()
    with api.stream("GET", "/api/projects") as response:
        assert response.status_code == 200 and time.monotonic() - started < 1.0
        with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
            response.read()
    assert time.monotonic() - started >= 1.5


def test_a_stall_ends_when_the_client_hangs_up(sim: Double) -> None:
    sim.set_fault("stall", delay_seconds=600)
    with pytest.raises(httpx.ReadTimeout):
        request("GET", f"{sim.url}/api/status", timeout=0.3, headers={"Authorization": f"Bearer {sim.token}"})
    sim.clear_faults()
    assert request("GET", f"{sim.url}/api/status", headers={"Authorization": f"Bearer {sim.token}"}).status_code == 200


def test_redirect_points_at_another_host(sim: Double, api: httpx.Client) -> None:
    sim.set_fault("redirect")
    response = api.get("/api/projects", follow_redirects=False)
    assert response.status_code == 302
    assert response.headers["location"] == "http://169.254.169.254/latest/meta-data/"


def test_fault_limited_to_a_path_prefix_and_a_count(sim: Double, api: httpx.Client) -> None:
    sim.set_fault("5xx", path_prefix="/api/projects")
    assert api.get("/api/status").status_code == 200
    assert api.get("/api/projects").status_code == 500
    sim.set_fault("429", times=2)
    assert [api.get("/api/status").status_code for _ in range(3)] == [429, 429, 200]
    assert sim.fault is None


def test_faults_meet_requests_before_authentication(sim: Double) -> None:
    sim.set_fault("5xx")
    assert request("GET", sim.url + "/api/status").status_code == 500


def test_faults_never_touch_the_control_port(sim: Double, control: httpx.Client) -> None:
    for mode in ("5xx", "429", "malformed", "reset", "redirect", "down"):
        sim.set_fault(mode)
        assert control.get("/health").json() == {"ok": True}


def test_bad_faults_are_refused(sim: Double) -> None:
    for kwargs in (
        {"mode": "flaky"},
        {"mode": "slow", "delay_seconds": -1},
        {"mode": "429", "retry_after": 1.5},
        {"mode": "5xx", "path_prefix": "/control"},
        {"mode": "down", "times": 1},
        {"mode": "5xx", "times": 0},
    ):
        with pytest.raises(FaultError):
            sim.set_fault(**kwargs)
    assert sim.fault is None


# -- the control port ------------------------------------------------------------------


def test_control_faults(sim: Double, api: httpx.Client, control: httpx.Client) -> None:
    set_ = control.post(
        "/faults",
        json={"mode": "429", "retry_after": 3, "path_prefix": "/api/projects"},
    )
    assert set_.status_code == 200
    assert set_.json()["fault"]["mode"] == "429"
    assert control.get("/faults").json()["fault"]["retry_after"] == 3
    assert api.get("/api/projects").headers["retry-after"] == "3"
    assert control.post("/faults", json={"mode": None}).json() == {"fault": None}
    assert api.get("/api/projects").status_code == 200

    assert control.post("/faults", json={"mode": "down"}).status_code == 200
    with pytest.raises(httpx.ConnectError):
        request("GET", sim.url + "/api/status", headers=AUTH)
    assert control.delete("/faults").json() == {"fault": None}
    assert request("GET", sim.url + "/api/status", headers=AUTH).status_code == 200

    for body in ({"mode": "nope"}, {}, {"mode": "slow", "extra": 1}, [1]):
        refused = control.post("/faults", json=body)
        assert refused.status_code == 400
        assert error_code(refused) == "bad_request"


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Content-Type": "text/plain"}, 415),  # what a cross-site form posts without a preflight
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
        ({"Content-Type": "application/json", "Origin": "http://evil.example"}, 403),
        ({"Content-Type": "application/json", "Host": "rebound.evil.example"}, 403),  # DNS rebinding
    ],
    ids=["text-plain", "form", "foreign-origin", "foreign-host"],
)
def test_the_control_port_refuses_what_a_web_page_could_send(
    sim: Double, control: httpx.Client, headers: dict[str, str], status: int
) -> None:
    # Given the control port over its socket, and a request a web page of another origin can make
    # When it asks to break the API port
    answer = control.post("/faults", content=b'{"mode": "5xx"}', headers=headers)
    # Then it is refused and nothing is set; the same request as a test sends it is taken
    assert answer.status_code == status, answer.text
    assert sim.fault is None
    assert control.get("/state", headers={"Host": "rebound.evil.example"}).status_code == 403
    taken = control.post("/faults", json={"mode": "5xx"}, headers={"Origin": sim.control_url})
    assert taken.status_code == 200, taken.text


def test_control_state_and_reset(sim: Double, api: httpx.Client, control: httpx.Client) -> None:
    made = post_project(api, {"name": "Temporary"}, key="tmp").json()
    sim.set_fault("5xx", path_prefix="/api/status")
    state = control.get("/state").json()
    assert state["instance_id"] == sim.state.instance_id
    assert [p["project_ref"] for p in state["projects"]] == [
        "falcon",
        "harbour",
        made["project_ref"],
    ]
    assert state["fault"]["mode"] == "5xx"
    assert state["idempotency_keys"] == [{"key": "tmp", "method": "POST", "path": "/api/projects", "status": 201}]
    assert [r["idempotency_key"] for r in state["requests"]] == ["tmp"]

    assert control.post("/reset").json() == {"ok": True}
    state = control.get("/state").json()
    assert state["projects"] == DEMO_PROJECTS
    assert state["fault"] is None
    assert state["requests"] == []
    assert state["idempotency_keys"] == []
    # the key is forgotten: it makes a new project
    again = post_project(api, {"name": "Temporary"}, key="tmp")
    assert again.status_code == 201
    assert again.json()["project_ref"] != made["project_ref"]


def test_control_capabilities(sim: Double, api: httpx.Client, control: httpx.Client) -> None:
    instance_id = sim.state.instance_id
    older = {"instance_id": instance_id, "generation": "gen_01", "change_feed": True}
    older["exports"] = {"anthill": {"package_version": 6}}
    assert control.put("/capabilities", json=older).json() == older
    assert api.get("/api/capabilities").json() == older
    bare = {"instance_id": instance_id, "generation": "gen_02", "change_feed": False}
    control.put("/capabilities", json=bare)
    assert api.get("/api/capabilities").json() == bare
    assert control.put("/capabilities", json=[1]).status_code == 400
    sim.set_capabilities(older)
    assert control.get("/capabilities").json() == older
    control.post("/reset")
    assert api.get("/api/capabilities").json()["exports"] == {"anthill": {"package_version": 7}}


def test_control_routes_and_methods(control: httpx.Client) -> None:
    assert control.get("/health").json() == {"ok": True}
    assert control.get("/nothing").status_code == 404
    assert control.get("/reset").status_code == 405
    assert control.get("/api/status").status_code == 404


# -- lifecycle and CLI -----------------------------------------------------------------


def test_context_manager_stops_both_ports() -> None:
    with Double(token=TOKEN) as sim:
        url, control_url = sim.url, sim.control_url
        assert request("GET", control_url + "/health").status_code == 200
    for dead in (url + "/api/status", control_url + "/health"):
        with pytest.raises(httpx.ConnectError):
            request("GET", dead, headers=AUTH)
    sim.stop()  # twice is fine


def test_only_loopback_hosts() -> None:
    with pytest.raises(ValueError):
        Double(host="0.0.0.0")


def test_cli_serves_and_logs_without_the_token() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "local_engine",
            "--port",
            "0",
            "--control-port",
            "0",
            "--token",
            TOKEN,
        ],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        banner = process.stderr.readline()
        match = re.search(r"api (http://\S+) control (http://\S+)", banner)
        assert match, banner
        assert request("GET", match.group(1) + "/api/status", headers=AUTH).status_code == 200
        assert request("GET", match.group(2) + "/health").status_code == 200
        process.send_signal(signal.SIGTERM)
        rest = process.stderr.read()
        assert process.wait(timeout=5) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "GET /api/status 200" in rest
    assert TOKEN not in banner + rest
