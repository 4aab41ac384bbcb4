"""Chunk, statement and evidence ids: FORAGER's shape (a prefix and 16 hex digits), a function of
what the row is, and in a store this engine makes grouped by source (the first 4 digits are the
source's), so a source's rows stand together in the id indexes. A store an older engine made keeps
the hashed ids it was written with, so a source read again there keeps the ids its decided
disagreements name."""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from pathlib import Path

from hypothesis import given, strategies as st

from local_engine.ingestion import pipeline
from local_engine.store.database import Store
from tests.documents import disagreeing_notes, handbook

SHAPE = re.compile(r"(ch|ki|ev)_[0-9a-f]{16}")
TEXT = st.text(st.characters(codec="utf-8"), max_size=40)


def _ingest(store: Store, folder: Path) -> None:
    work = pipeline.Work(job_id=f"job_{store.generation}", ref="base", kind="paths", inputs=[str(folder)], force=True)
    for stage in pipeline.STAGE_WORK.values():
        stage(store, work)


def _ids(store: Store) -> list[tuple[str, str]]:
    """Every (id, source id) of the three kinds."""
    rows = [
        *store.rows("SELECT chunk_id, source_id FROM chunks"),
        *store.rows("SELECT knowledge_id, source_id FROM statements"),
        *store.rows("SELECT evidence_id, source_id FROM evidence"),
    ]
    return [(row[0], row[1]) for row in rows]


def _source_digits(source_id: str) -> str:
    return hashlib.sha256(source_id.encode()).hexdigest()[:4]


@given(st.sampled_from([True, False]), TEXT, st.integers(0, 10**9), TEXT)
def test_an_id_has_forager_shape_and_is_a_function_of_its_row(
    grouped: bool, source: str, start: int, statement: str
) -> None:
    ids, again = pipeline.Ids(grouped), pipeline.Ids(grouped)
    made = [ids.chunk(source, start), ids.statement(source, start, statement), ids.evidence("ki_x", source, start)]
    assert all(SHAPE.fullmatch(made_id) for made_id in made), made
    assert made == [
        again.chunk(source, start),
        again.statement(source, start, statement),
        again.evidence("ki_x", source, start),
    ]
    if grouped:
        assert {made_id[3:7] for made_id in made} == {_source_digits(source)}
    else:  # as the engine before grouping made them
        assert made == [
            pipeline.short_id("ch", source, start),
            pipeline.short_id("ki", source, start, statement),
            pipeline.short_id("ev", "ki_x", source, start),
        ]


@given(TEXT, st.lists(st.tuples(st.integers(0, 10**6), TEXT), min_size=2, max_size=30, unique=True))
def test_a_sources_rows_keep_distinct_ids(source: str, rows: list[tuple[int, str]]) -> None:
    ids = pipeline.Ids()
    assert len({ids.statement(source, start, statement) for start, statement in rows}) == len(rows)


def test_a_new_store_groups_each_sources_ids_and_a_reread_keeps_them(tmp_path: Path) -> None:
    folder = handbook(tmp_path)
    disagreeing_notes(folder / "notes")
    store = Store(tmp_path / "engine.sqlite3", threading.RLock())
    assert store.ids_grouped()
    _ingest(store, folder)
    first = _ids(store)
    assert len(first) > 300
    for made_id, source_id in first:
        assert SHAPE.fullmatch(made_id) and made_id[3:7] == _source_digits(source_id), (made_id, source_id)
    _ingest(store, folder)  # read again, forced: the same rows, the same ids
    assert sorted(_ids(store)) == sorted(first)
    store.clear()  # emptied, it is a new store
    assert store.ids_grouped()
    store.close()


def test_a_store_an_older_engine_made_keeps_its_hashed_ids(tmp_path: Path) -> None:
    folder = handbook(tmp_path)
    path = tmp_path / "engine.sqlite3"
    store = Store(path, threading.RLock())
    _ingest(store, folder)
    store.close()
    old = sqlite3.connect(path)  # as an engine before grouped ids left it: no `ids` row
    old.execute("DELETE FROM meta WHERE key = 'ids'")
    old.commit()
    old.close()

    store = Store(path, threading.RLock())
    assert not store.ids_grouped()
    _ingest(store, folder)  # read again by this engine: the old engine's ids
    statements = store.rows("SELECT knowledge_id, source_id, char_start, statement FROM statements")
    assert statements
    for row in statements:
        assert row["knowledge_id"] == pipeline.short_id("ki", row["source_id"], row["char_start"], row["statement"])
    for row in store.rows("SELECT chunk_id, source_id, idx FROM chunks"):
        assert row["chunk_id"] == pipeline.short_id("ch", row["source_id"], row["idx"])
    store.close()
    assert not Store(path, threading.RLock()).ids_grouped()  # and it stays so
