"""A reset while a stage runs: the stage's work from before the reset is never written after it."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from local_engine.ingestion import pipeline
from local_engine.store.database import Emptied, Store


def test_a_stage_bound_before_a_reset_writes_nothing_after_it(tmp_path: Path) -> None:
    store = Store(None, threading.RLock())
    (tmp_path / "notes.md").write_text("# Notes\n\nThe night ferry leaves pier four at nine.\n")
    work = pipeline.Work(job_id="job_x", ref="base", kind="paths", inputs=[str(tmp_path)], force=False)
    pipeline.source_registration(store, work)
    with store.bound():
        (held,) = store.rows("SELECT source_id FROM sources")  # what the stage read before the reset
        reset = threading.Thread(target=store.clear)  # the control port's reset, from another request
        reset.start()
        reset.join()
        with pytest.raises(Emptied), store.transaction() as db:  # the stage's write after it
            db.execute(
                "INSERT INTO chunks (chunk_id, source_id, ref, idx, heading, line, char_start, char_end, text)"
                " VALUES ('ch_1', ?, 'base', 0, '', 1, 0, 1, 'x')",
                (held[0],),
            )
    assert store.value("SELECT COUNT(*) FROM sources") == store.value("SELECT COUNT(*) FROM chunks") == 0
    # work bound after the reset writes as usual
    with store.bound():
        pipeline.source_registration(store, work)
    assert store.value("SELECT COUNT(*) FROM sources") == 1
