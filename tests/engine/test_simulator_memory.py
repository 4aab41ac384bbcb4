"""The FORAGER simulator keeps only its newest recorded requests: a long-running ``make run``
(or a 100,000-request bench) does not grow without bound."""

from __future__ import annotations

import tracemalloc

import httpx

from local_engine.double import start_double
from local_engine.serving.state import REQUESTS_KEPT, EngineState


def test_given_100000_recorded_requests_then_only_the_newest_are_kept_and_memory_stays_flat() -> None:
    state = EngineState()

    def record(count: int, start: int) -> None:
        for n in range(start, start + count):
            entry = state.record_request({"method": "GET", "path": f"/api/status/{n}", "headers": {}, "body": None})
            state.set_request_status(entry, 200)

    record(REQUESTS_KEPT * 2, 0)  # warm: the list is full from here on
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    record(100_000, REQUESTS_KEPT * 2)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))

    kept = state.requests_snapshot()
    assert len(kept) == REQUESTS_KEPT
    assert kept[-1]["path"] == f"/api/status/{100_000 + REQUESTS_KEPT * 2 - 1}"
    assert grown < 1_000_000  # 100,000 records of ~400 bytes each would be ~40 MB


def test_given_more_requests_over_http_than_kept_then_the_control_state_lists_the_newest() -> None:
    with start_double(token="t0ken") as simulator, httpx.Client(timeout=30.0) as client:
        for _ in range(REQUESTS_KEPT + 50):
            client.get(f"{simulator.url}/api/status", headers={"Authorization": "Bearer t0ken"})
        recorded = client.get(f"{simulator.control_url}/state").json()["requests"]

    assert len(recorded) == REQUESTS_KEPT
    assert simulator.request_count == REQUESTS_KEPT + 50
    assert all(r["path"] == "/api/status" and r["status"] == 200 for r in recorded)
