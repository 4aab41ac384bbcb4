"""``dedup_conflict`` keeps each subject's first held claims from one source to the next
(``disagreements.HeldCache``). It must be exact: the disagreements found, and every row of the
store, are the ones reading every subject again for every source finds — on a fresh read, on a
re-read after people decided some (a decided side is archived mid-stage), with a cache so small
it forgets most subjects, and when another transaction archives held statements between two
sources."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from local_engine.ingestion import pipeline
from local_engine.knowledge import disagreements
from local_engine.store.database import TABLES, Store
from tests.documents import disagreeing_notes, every_row, ingest_decide_reread

T = TypeVar("T")


class NoCache(disagreements.HeldCache):
    """Reads every subject again for every source: the rule as it was before the cache."""

    def held(self, subject: str, source_id: str) -> list[disagreements.Held] | None:
        return None

    def keep(self, subject: str, rows: list[tuple[str, str, str, str]]) -> None:
        pass


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("held") / "notes"
    disagreeing_notes(folder)
    return folder


@pytest.fixture(scope="module")
def uncached(notes: Path) -> tuple[dict[str, list[tuple[Any, ...]]], dict[str, int]]:
    patch = pytest.MonkeyPatch()
    patch.setattr(disagreements, "HeldCache", NoCache)
    try:
        return ingest_decide_reread(notes)
    finally:
        patch.undo()


@pytest.mark.parametrize("limit", [disagreements.CACHE_CLAIMS, 400])
def test_the_cache_finds_what_reading_every_subject_again_finds(
    notes: Path, uncached: tuple[dict[str, list[tuple[Any, ...]]], int], limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(disagreements, "CACHE_CLAIMS", limit)
    asked: list[bool] = []
    held = disagreements.HeldCache.held

    def counting(self: disagreements.HeldCache, subject: str, source_id: str) -> list[disagreements.Held] | None:
        answer = held(self, subject, source_id)
        asked.append(answer is not None)
        return answer

    monkeypatch.setattr(disagreements.HeldCache, "held", counting)
    cached, counts = ingest_decide_reread(notes)
    assert counts["contradictions"] > 50 and counts["archived"] > 10 and counts == uncached[1]
    assert sum(asked) > len(asked) / 2  # most subjects were answered from the cache
    for table in TABLES:
        assert cached[table] == uncached[0][table], table


def _ingest_archiving_midway(folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[tuple[Any, ...]]]:
    """A first read during which, at each stage's third source, another transaction archives the
    first 40 statements whose claims are held (as a person's decisions would)."""
    store = Store(None, threading.RLock())
    each = pipeline._each

    def sources(work: pipeline.Work, items: Iterable[T]) -> Iterator[T]:
        for number, item in enumerate(each(work, items)):
            if number == 2:
                with store.transaction() as db:
                    db.execute(
                        "UPDATE statements SET status = 'Archived' WHERE knowledge_id IN (SELECT"
                        " knowledge_id FROM claims WHERE live AND subject != '' ORDER BY rowid LIMIT 40)"
                    )
            yield item

    monkeypatch.setattr(pipeline, "_each", sources)
    work = pipeline.Work(job_id="job_x", ref="base", kind="paths", inputs=[str(folder)], force=True)
    for stage in pipeline.STAGE_WORK.values():
        stage(store, work)
    monkeypatch.setattr(pipeline, "_each", each)
    rows = every_row(store)
    store.close()
    return rows


def test_a_transaction_between_two_sources_empties_the_cache(notes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cached = _ingest_archiving_midway(notes, monkeypatch)
    monkeypatch.setattr(disagreements, "HeldCache", NoCache)
    uncached = _ingest_archiving_midway(notes, monkeypatch)
    assert any("Archived" in row for row in uncached["statements"])
    for table in TABLES:
        assert cached[table] == uncached[table], table


def test_the_cache_forgets_the_least_recently_asked_subjects_first() -> None:
    cache = disagreements.HeldCache(limit=4)
    cache.keep("falcon", [("ki_1", "ships march", "date:a", "src_a"), ("ki_2", "ships april", "date:b", "src_b")])
    cache.keep("heron", [("ki_3", "employs engineers", "number:10", "src_a")])
    assert [h.knowledge_id for h in cache.held("falcon", "src_c") or []] == ["ki_1", "ki_2"]
    assert [h.knowledge_id for h in cache.held("falcon", "src_a") or []] == ["ki_2"]  # its own left out
    cache.keep("osprey", [("ki_4", "opens", "date:c", "src_b"), ("ki_5", "closes", "date:d", "src_b")])
    assert cache.held("heron", "src_c") is None  # asked least recently: forgotten
    assert cache.held("falcon", "src_c") is not None and cache.size == 4
    cache.written("src_d", [("ki_6", "base", "src_d", "falcon", "ships may", "w", "date:e")])
    assert [h.knowledge_id for h in cache.held("falcon", "src_c") or []] == ["ki_1", "ki_2", "ki_6"]
    cache.written("src_a", [])  # a source whose claims are held is read again
    assert cache.held("falcon", "src_c") is None


def _dedup_stopped_and_resumed(folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[tuple[Any, ...]]]:
    """A first read whose ``dedup_conflict`` stops at its fourth source (the engine stopping) and
    runs again from the start, as the next start runs it: the sources before keep their claims,
    which the second run keeps again."""
    store = Store(None, threading.RLock())
    work = pipeline.Work(job_id="job_x", ref="base", kind="paths", inputs=[str(folder)], force=True)
    each, loops = pipeline._each, []

    def stopping(work_now: pipeline.Work, items: Iterable[T]) -> Iterator[T]:
        loops.append(1)
        for number, item in enumerate(each(work_now, items)):
            if len(loops) == 2 and number == 3 and work_now.stopping is not None:  # the statements' loop
                work_now.stopping.set()
            yield item

    for name, stage in pipeline.STAGE_WORK.items():
        if name == "dedup_conflict":
            work.stopping = threading.Event()
            monkeypatch.setattr(pipeline, "_each", stopping)
            with pytest.raises(pipeline.Stopping):
                stage(store, work)
            monkeypatch.setattr(pipeline, "_each", each)
            work.stopping = None
            assert store.value("SELECT COUNT(*) FROM claims")  # the sources before kept theirs
        stage(store, work)
    rows = every_row(store)
    store.close()
    return rows


def test_a_stage_run_again_after_a_stop_finds_what_reading_every_time_finds(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = _dedup_stopped_and_resumed(notes, monkeypatch)
    monkeypatch.setattr(disagreements, "HeldCache", NoCache)
    uncached = _dedup_stopped_and_resumed(notes, monkeypatch)
    for table in TABLES:
        assert cached[table] == uncached[table], table
