"""Workers compute a source's pure work (conversion, chunks, statements, names, claims) while
the engine's own process writes: the rows written must be the ones an engine computing in place
writes, a worker's death must cost only time, and a stop must still come between two sources."""

from __future__ import annotations

import os
import pickle
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local_engine.ingestion import converters, pipeline
from local_engine.ingestion.workers import (
    DEFAULT_WORKERS,
    IDLE_SECONDS,
    MAX_WORKERS,
    WORKERS_ENV,
    Workers,
    default_workers,
)
from local_engine.store.database import TABLES, Store
from tests.documents import disagreeing_notes, every_row, handbook


def _corpus(root: Path) -> Path:
    """The handbook (every format, a copy, a file no reader opens) and notes whose statements name
    organizations and projects and give them dated and counted claims that disagree across files."""
    folder = handbook(root)
    disagreeing_notes(folder / "notes")
    return folder


def _ingest(folder: Path, processes: int) -> dict[str, list[tuple[Any, ...]]]:
    store = Store(None, threading.RLock())
    workers = Workers(processes)
    work = pipeline.Work(job_id="job_x", ref="base", kind="paths", inputs=[str(folder)], force=True, workers=workers)
    try:
        for stage in pipeline.STAGE_WORK.values():
            stage(store, work)
        return every_row(store)
    finally:
        workers.close()
        store.close()


def test_workers_write_the_rows_an_engine_computing_in_place_writes(tmp_path: Path) -> None:
    folder = _corpus(tmp_path)
    in_place, beside = _ingest(folder, 0), _ingest(folder, 2)
    # the corpus exercises every stage a worker computes for
    failed = [s for s in in_place["sources"] if "unreadable_pdf" in str(s)]
    assert len(failed) == 1
    assert len(in_place["statements"]) > 150 and len(in_place["evidence"]) >= len(in_place["statements"])
    assert in_place["mentions"] and in_place["conflicts"]
    for table in TABLES:
        assert beside[table] == in_place[table], table


def test_answers_come_in_the_order_of_their_items() -> None:
    workers = Workers(2)
    try:
        assert list(workers.ahead(range(25), lambda n: (pow, (n, 2)))) == [(n, n * n) for n in range(25)]
    finally:
        workers.close()


def dies_in_a_worker(parent: int, value: int) -> int:
    """``value`` in the test's own process; a worker that runs it dies."""
    if os.getpid() != parent:
        os._exit(1)
    return value


def test_a_worker_that_dies_mid_call_costs_only_time() -> None:
    workers = Workers(1)
    try:
        answers = list(workers.ahead(range(5), lambda n: (dies_in_a_worker, (os.getpid(), n))))
        assert answers == [(n, n) for n in range(5)]  # each call ran again in place
        [(_, pid)] = list(workers.ahead([3], lambda n: (os.getpid, ())))
        assert pid != os.getpid()  # the next calls go to a new pool
    finally:
        workers.close()


def dies_on_three(value: int) -> int:
    """What a decompression bomb does to the process reading it, for one item."""
    if value == 3:
        os._exit(1)
    return value


def test_a_call_that_kills_its_worker_twice_is_answered_broken_and_never_run_in_place() -> None:
    # Given calls of which one kills whatever process runs it
    workers = Workers(1)
    try:
        # When they run with an answer for a call that breaks its workers
        answers = list(workers.ahead(range(6), lambda n: (dies_on_three, (n,)), broken=lambda n: f"broken {n}"))
        # Then that one is answered broken (this process, which would have run it in place, lives),
        # and every other one, in flight beside it when its pool broke, is answered by a new pool
        assert answers == [(0, 0), (1, 1), (2, 2), (3, "broken 3"), (4, 4), (5, 5)]
    finally:
        workers.close()


class Stop(Exception):
    pass


def test_a_stop_comes_between_two_items_and_drops_the_calls_in_flight() -> None:
    def items() -> Iterator[int]:
        yield from range(3)
        raise Stop

    workers = Workers(2)
    answered: list[tuple[int, int]] = []
    try:
        with pytest.raises(Stop):
            answered.extend(workers.ahead(items(), lambda n: (pow, (n, 3))))
    finally:
        workers.close()
    # the stop was raised as the fourth item was read ahead, before the first was written: what a
    # stage wrote is whole sources, and the rest is done at the next start
    assert answered == []


def slow_square(value: int) -> int:
    time.sleep(0.05)
    return value * value


def test_a_stop_mid_stage_still_answers_every_call_in_flight() -> None:
    """The calls already sent finish in the workers as they close; the later ones run in place."""
    workers = Workers(2)
    answered = []
    for item, answer in workers.ahead(range(8), lambda n: (slow_square, (n,))):
        answered.append((item, answer))
        workers.close()  # the engine stops while the stage still has calls in flight
    assert answered == [(n, n * n) for n in range(8)]


def test_idle_workers_leave_and_the_next_call_starts_new_ones() -> None:
    workers = Workers(1)
    try:
        [(_, first)] = list(workers.ahead([1], lambda n: (os.getpid, ())))
        assert not workers.release_if_idle()  # just used
        assert workers.release_if_idle(time.monotonic() + IDLE_SECONDS)
        assert not _alive(first)  # the worker's process is gone
        [(_, second)] = list(workers.ahead([1], lambda n: (os.getpid, ())))
        assert second not in (first, os.getpid())
    finally:
        workers.close()


def started_then_sleeps(marker: str, seconds: float) -> None:
    Path(marker).touch()
    time.sleep(seconds)


def test_workers_busy_with_a_call_are_never_idle(tmp_path: Path) -> None:
    workers = Workers(1)
    marker = tmp_path / "started"
    answered: list[tuple[int, None]] = []
    thread = threading.Thread(
        target=lambda: answered.extend(workers.ahead([1], lambda n: (started_then_sleeps, (str(marker), 1.0))))
    )
    try:
        thread.start()
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert marker.exists(), "the call did not start"
        assert not workers.release_if_idle(time.monotonic() + IDLE_SECONDS)  # a call is running
        thread.join()
        assert answered == [(1, None)]
    finally:
        thread.join()
        workers.close()


def _alive(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return False
        except OSError:
            return False
        time.sleep(0.05)
    return True


def test_a_closed_pool_computes_in_place() -> None:
    workers = Workers(2)
    workers.close()
    assert list(workers.ahead([1, 2], lambda n: (os.getpid, ()))) == [(1, os.getpid()), (2, os.getpid())]


def test_an_unreadable_file_crosses_from_a_worker_whole() -> None:
    unreadable = pickle.loads(pickle.dumps(converters.Unreadable("unreadable_pdf", "x.pdf cannot be read.")))  # noqa: S301
    assert (unreadable.code, unreadable.message) == ("unreadable_pdf", "x.pdf cannot be read.")


@pytest.mark.parametrize("raw", ["-1", "two", "1.5", "٣", str(MAX_WORKERS + 1)])
def test_the_workers_setting_is_a_bounded_count(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(WORKERS_ENV, raw)
    with pytest.raises(ValueError, match=WORKERS_ENV):
        default_workers()


def test_the_workers_setting_defaults_to_one_a_core_up_to_two(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    assert default_workers() == min(os.cpu_count() or 1, DEFAULT_WORKERS)
    monkeypatch.setenv(WORKERS_ENV, "0")
    assert default_workers() == 0
    with pytest.raises(ValueError, match="workers must be 0 to"):
        Workers(MAX_WORKERS + 1)
