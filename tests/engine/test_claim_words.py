"""Each claim's content-word key is in ``claim_words`` or ``claim_words_fresh`` exactly while the
claim is held, whatever the order of keeping, keeping again, deleting and filing (Hypothesis): so
``dedup_conflict``'s lookup through them finds what a lookup on ``claims`` would. Filing moves the
fresh keys once there are enough, and a store an older engine wrote (its keys an index on
``claims``) gains the tables on open."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from local_engine.knowledge import disagreements
from local_engine.store import database as store_module
from local_engine.store.database import SCHEMA_VERSION, Store, file_words

IDS = [f"ki_{n}" for n in range(6)]
SOURCES = ["src_a", "src_b"]
WRITES = st.one_of(
    st.tuples(st.just("keep"), st.lists(st.sampled_from(IDS), min_size=1, max_size=4, unique=True)),
    st.tuples(st.just("delete claim"), st.sampled_from(IDS)),
    st.tuples(st.just("delete source"), st.sampled_from(SOURCES)),
    st.tuples(st.just("file"), st.integers(min_value=1, max_value=4)),
)


def _claim(knowledge_id: str) -> tuple[str, str, str, str, str, str, str]:
    """A claim row as the stage keeps it: its key, base and source a function of its id, as a
    statement's are of its text (two ids share a key, as two statements saying the same may)."""
    number = int(knowledge_id.removeprefix("ki_"))
    return (
        knowledge_id, f"base{number % 2}", SOURCES[number % 2], "falcon", "ships late", f"k{number % 3}", "date:x",
    )  # fmt: skip


def _keys(db: sqlite3.Connection, table: str) -> list[tuple[str, str, str]]:
    return [tuple(row) for row in db.execute(f"SELECT ref, words, knowledge_id FROM {table}")]  # noqa: S608


@settings(max_examples=150)
@given(st.lists(WRITES, max_size=30))
def test_a_claims_key_is_filed_or_fresh_exactly_while_it_is_held(writes: list[tuple[str, object]]) -> None:
    store = Store(None, threading.RLock())
    for verb, what in writes:
        with store.transaction() as db:
            if verb == "keep":
                assert isinstance(what, list)
                disagreements.keep_claims(db, [_claim(knowledge_id) for knowledge_id in what])
            elif verb == "delete claim":
                db.execute("DELETE FROM claims WHERE knowledge_id = ?", (what,))
            elif verb == "delete source":
                db.execute("DELETE FROM claims WHERE source_id = ?", (what,))
            else:
                assert isinstance(what, int)
                file_words(db, what)
        held = set(_keys(store.db, "claims"))
        filed, fresh = _keys(store.db, "claim_words"), _keys(store.db, "claim_words_fresh")
        assert set(filed) | set(fresh) == held, (verb, what)
    store.close()


def test_fresh_keys_are_filed_together_once_there_are_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "FRESH_WORDS", 4)
    store = Store(None, threading.RLock())
    with store.transaction() as db:
        disagreements.keep_claims(db, [_claim(knowledge_id) for knowledge_id in IDS[:3]])
        assert (len(_keys(db, "claim_words")), len(_keys(db, "claim_words_fresh"))) == (0, 3)
        disagreements.keep_claims(db, [_claim(IDS[3])])
        assert (len(_keys(db, "claim_words")), len(_keys(db, "claim_words_fresh"))) == (4, 0)
        assert file_words(db, 1) is False  # nothing fresh: nothing to file
    store.close()


def test_a_store_whose_keys_were_an_index_gains_the_tables_on_open(tmp_path: Path) -> None:
    path = tmp_path / "engine.sqlite3"
    store = Store(path, threading.RLock())
    with store.transaction() as db:
        db.executemany(disagreements.KEEP_CLAIM, [_claim(knowledge_id) for knowledge_id in IDS])
    store.close()
    old = sqlite3.connect(path)  # as version 3 left it: the keys an index on claims, no tables
    old.execute("DROP TRIGGER claim_words_on_delete")
    old.execute("DROP TABLE claim_words")
    old.execute("DROP TABLE claim_words_fresh")
    old.execute("CREATE INDEX claims_by_words ON claims (ref, words)")
    old.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    old.commit()
    old.close()

    store = Store(path, threading.RLock())
    assert sorted(_keys(store.db, "claim_words")) == sorted(_keys(store.db, "claims"))
    assert store.value("SELECT 1 FROM sqlite_master WHERE name = 'claims_by_words'") is None
    assert store.value("SELECT value FROM meta WHERE key = 'schema_version'") == str(SCHEMA_VERSION)
    with store.transaction() as db:  # and the trigger keeps them from now on
        db.execute("DELETE FROM claims WHERE knowledge_id = 'ki_0'")
    assert ("base0", "k0", "ki_0") not in _keys(store.db, "claim_words")
    store.close()
