"""A base's full-text tables merge their segments 16 at a time (``store.AUTOMERGE``), fewer
rewrites while a job adds a segment a source; what a query answers, and its BM25 scores, do not
depend on how the index is cut in segments."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

from local_engine.ingestion import pipeline
from local_engine.store import database as store_module
from local_engine.store.database import Store

WORDS = ["harbour", "ferry", "pier", "lantern", "tide", "crane", "berth", "quay", "anchor", "signal", "beacon", "dock"]


def _folder(root: Path) -> Path:
    """40 files (40 segments a table, more than either merge width) sharing words unevenly."""
    rng = random.Random(7)
    folder = root / "notes"
    folder.mkdir()
    for n in range(40):
        lines = [f"# Notes {n}", ""]
        for _ in range(6):
            lines.append(" ".join(rng.choice(WORDS) for _ in range(8)).capitalize() + " by the harbour office.")
        (folder / f"notes-{n:02d}.md").write_text("\n".join(lines) + "\n")
    return folder


def _indexed(folder: Path) -> Store:
    store = Store(None, threading.RLock())
    work = pipeline.Work(job_id="job_x", ref="base", kind="paths", inputs=[str(folder)], force=True)
    for stage in pipeline.STAGE_WORK.values():
        stage(store, work)
    return store


def _answers(store: Store) -> dict[str, list[tuple[int, float]]]:
    return {
        query: [
            (row[0], round(row[1], 9))
            for row in store.db.execute(
                "SELECT rowid, bm25(fts_base_s, 2.0, 1.0) FROM fts_base_s WHERE fts_base_s MATCH ? ORDER BY rank",
                (query,),
            )
        ]
        for query in ("harbour", "ferry", "lantern OR beacon", "tide crane", "signal dock anchor")
    }


def test_the_tables_merge_16_segments_at_a_time_and_answer_as_at_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _folder(tmp_path)
    store = _indexed(folder)
    for table in ("fts_base_s", "fts_base_c"):
        assert store.value(f"SELECT v FROM {table}_config WHERE k = 'automerge'") == 16  # noqa: S608
    assert store.value("SELECT COUNT(*) FROM sources WHERE status = 'completed'") == 40
    answers = _answers(store)
    assert all(answers.values())
    store.close()

    monkeypatch.setattr(store_module, "AUTOMERGE", 4)  # SQLite's default
    at_four = _indexed(folder)
    assert at_four.value("SELECT v FROM fts_base_s_config WHERE k = 'automerge'") == 4
    assert _answers(at_four) == answers
    at_four.close()
