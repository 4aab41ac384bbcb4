"""A knowledge base's vectors (``search/vectors.py``) live and die with its statements: one a
statement and one a chunk once indexed, a source read again leaves none of its old ones behind, a
search reads a base's new statements as soon as a job indexes them, and a reset drops them with
the full-text tables."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from local_engine.ingestion import pipeline
from local_engine.ingestion.workers import Workers
from local_engine.search import vectors
from local_engine.search.queries import Knowledge
from local_engine.store.database import Store

LAPTOPS = "Laptops are replaced every three years by the supplier."
QUESTION = "How often do we get new computers?"


def ingest(store: Store, folder: Path, job: str) -> None:
    work = pipeline.Work(job_id=job, ref="base", kind="paths", inputs=[str(folder)], force=False)
    for stage in pipeline.STAGE_WORK.values():
        stage(store, work)


def counts(store: Store) -> tuple[int, int, int, int]:
    """(indexed statements, statement vectors, indexed chunks, chunk vectors) of the base."""
    return (
        int(store.value("SELECT COUNT(*) FROM statements WHERE ref = 'base' AND indexed = 1")),
        int(store.value("SELECT COUNT(*) FROM vec_base_s")),
        int(store.value("SELECT COUNT(*) FROM chunks WHERE ref = 'base' AND indexed = 1")),
        int(store.value("SELECT COUNT(*) FROM vec_base_c")),
    )


def test_vectors_follow_the_statements_through_a_read_a_re_read_and_a_reset(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "garden.md").write_text("# Garden\n\nThe roses are pruned in late winter.\n\nThe hedge is cut in June.\n")
    (folder / "post.md").write_text("# Post\n\nParcels are collected by the courier at four.\n")
    store = Store(None, threading.RLock())
    ingest(store, folder, "job_1")
    statements, said, chunks, read = counts(store)
    assert (said, read) == (statements, chunks) and statements == 3
    assert {len(r[0]) for r in store.rows("SELECT vector FROM vec_base_s")} == {vectors.DIMENSIONS * 2}
    index = Knowledge(store)
    assert index.search("base", QUESTION, 5, False).hits == []  # nothing near it yet
    held = vectors.matrix(store, "base")
    assert held is not None and vectors.matrix(store, "base") is held  # kept while the base is unchanged

    (folder / "equipment.md").write_text(f"# Equipment\n\n{LAPTOPS}\n")  # a new file: a new job's statements
    (folder / "garden.md").write_text("# Garden\n\nThe roses are pruned in early spring.\n")  # one read again
    ingest(store, folder, "job_2")
    statements, said, chunks, read = counts(store)
    assert (said, read) == (statements, chunks) and statements == 3  # the old garden's vectors are gone
    kept = {int(r[0]) for r in store.rows("SELECT rowid FROM statements WHERE ref = 'base' AND indexed = 1")}
    again = vectors.matrix(store, "base")
    assert again is not held and again is not None and {int(r) for r in again.rowids} == kept
    (hit,) = index.search("base", QUESTION, 5, False).hits  # the search reads the base's new vectors
    assert hit[1]["row"]["statement"] == LAPTOPS

    store.clear()
    names = {r[0] for r in store.rows("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not {"vec_base_s", "vec_base_c", "fts_base_s", "fts_base_c"} & names
    assert store.value("SELECT COUNT(*) FROM meta WHERE key LIKE 'vectors:%'") == 0


def test_a_base_indexed_without_vectors_gets_them_at_its_first_search(tmp_path: Path) -> None:
    """Statements an engine indexed with vectors off (or before it had them) are given theirs."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "equipment.md").write_text(f"# Equipment\n\n{LAPTOPS}\n")
    store = Store(None, threading.RLock())
    ingest(store, folder, "job_1")
    with store.transaction() as db:
        db.execute("DROP TABLE vec_base_s")
        db.execute("DROP TABLE vec_base_c")
    (hit,) = Knowledge(store).search("base", QUESTION, 5, False).hits
    assert hit[1]["row"]["statement"] == LAPTOPS
    assert counts(store) == (1, 1, 1, 1)


def test_a_large_jobs_vectors_are_computed_in_the_workers_and_are_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From ``BESIDE_FROM`` statements up a job's vectors are computed in the worker processes
    (each loads the model), below it on a thread of the engine's: the same bytes either way."""
    folder = tmp_path / "notes"
    folder.mkdir()
    for n in range(3):
        said = f"The laptops of room {n} are replaced every three years.\n\nThe hedge of yard {n} is cut in June."
        (folder / f"n{n}.md").write_text(f"# Part {n}\n\n## Kit\n\n{said}\n")
    threaded = vectors.alongside
    stored, here = [], []
    monkeypatch.setattr(vectors, "alongside", lambda *given: here.append(True) or threaded(*given))
    for beside in (1, 10**9):
        monkeypatch.setattr(vectors, "BESIDE_FROM", beside)
        store = Store(None, threading.RLock())
        work = pipeline.Work(job_id="job_1", ref="base", kind="paths", inputs=[str(folder)], force=True)
        work.workers = Workers(1)
        try:
            for stage in pipeline.STAGE_WORK.values():
                stage(store, work)
        finally:
            work.workers.close()
        stored.append((store.tuples("SELECT * FROM vec_base_s"), store.tuples("SELECT * FROM vec_base_c"), len(here)))
    (in_workers, _, before), (in_place, _, after) = stored
    assert (before, after) == (0, 1)  # the workers, then the engine's thread
    assert stored[0][:2] == stored[1][:2] and len(in_workers) == len(in_place) == 6
