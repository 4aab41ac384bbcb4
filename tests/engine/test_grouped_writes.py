"""A stage writes small sources together: one transaction for sources up to
``pipeline.GROUP_TEXT`` characters of text, a larger source alone. What lands is the same as
writing each source in a transaction of its own, and a stop still ends a stage between two
sources, with every source answered before it written."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from local_engine.ingestion import pipeline
from local_engine.store.database import TABLES, Store
from tests.documents import disagreeing_notes, ingest_decide_reread

T = TypeVar("T")
SMALL_NOTES = 12


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Notes that disagree (small: all of them fit one group), and a large file, last by name."""
    root = tmp_path_factory.mktemp("grouped")
    disagreeing_notes(root / "notes")
    for n in range(SMALL_NOTES - 8):
        (root / "notes" / f"short-{n}.md").write_text(f"# Short {n}\n\nThe harbour crane {n} lifts forty tonnes.\n")
    line = "The long report says the tide gauge at pier {0} reads high water at {0} past the hour.\n\n"
    (root / "notes" / "zz-report.md").write_text("# Report\n\n" + "".join(line.format(n) for n in range(1_200)))
    assert len((root / "notes" / "zz-report.md").read_text()) > pipeline.GROUP_TEXT
    return root / "notes"


def test_small_sources_share_a_transaction_and_a_large_one_has_its_own(folder: Path) -> None:
    store = Store(None, threading.RLock())
    work = pipeline.Work(job_id="job_x", ref="base", kind="paths", inputs=[str(folder)], force=True)
    commits = {}
    for name, stage in pipeline.STAGE_WORK.items():
        before = store.commits
        stage(store, work)
        commits[name] = store.commits - before
    sources = int(store.value("SELECT COUNT(*) FROM sources WHERE status = 'completed'"))
    store.close()
    assert sources == SMALL_NOTES + 1
    for name in ("parsing_extraction", "normalization", "chunking", "semantic_extraction", "provenance", "indexing"):
        assert commits[name] == 2, name  # the notes together, then the report alone


def test_what_lands_is_what_a_transaction_a_source_writes(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grouped, grouped_counts = ingest_decide_reread(folder)
    monkeypatch.setattr(pipeline, "GROUP_TEXT", 0)  # every source alone, as before groups
    alone, alone_counts = ingest_decide_reread(folder)
    assert grouped_counts == alone_counts and grouped_counts["decided"] > 0
    for table in TABLES:
        assert grouped[table] == alone[table], table


def test_a_stop_writes_the_sources_answered_before_it(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(None, threading.RLock())
    work = pipeline.Work(job_id="job_x", ref="base", kind="paths", inputs=[str(folder)], force=True)
    for stage in (pipeline.source_registration, pipeline.parsing_extraction, pipeline.normalization):
        stage(store, work)
    each = pipeline._each

    def stopping(work_now: pipeline.Work, items: Iterable[T]) -> Iterator[T]:
        for number, item in enumerate(each(work_now, items)):
            if number == 3 and work_now.stopping is not None:
                work_now.stopping.set()  # the engine stops while the fourth source is being read
            yield item

    work.stopping = threading.Event()
    monkeypatch.setattr(pipeline, "_each", stopping)
    with pytest.raises(pipeline.Stopping):
        pipeline.chunking(store, work)
    chunked = [r[0] for r in store.rows("SELECT name FROM sources WHERE status = 'chunked' ORDER BY name")]
    assert len(chunked) == 4  # the four answered, in one transaction, and no more
    assert int(store.value("SELECT COUNT(DISTINCT source_id) FROM chunks")) == 4

    monkeypatch.setattr(pipeline, "_each", each)
    work.stopping = None
    assert pipeline.chunking(store, work).processed == SMALL_NOTES + 1 - 4  # the next start takes the rest
    store.close()
