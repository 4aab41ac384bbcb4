"""A claim is ``live`` exactly while its statement exists and is ``Active`` or ``Disputed``: the
flag ``dedup_conflict`` reads instead of joining every held claim to its statement. The store's
triggers keep it through any sequence of writes (Hypothesis), and a store an older engine wrote
is brought to it on open."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from hypothesis import given, settings, strategies as st

from local_engine.knowledge import disagreements
from local_engine.store.database import SCHEMA_VERSION, Store

STATUSES = ["Active", "Disputed", "Archived", "Superseded"]
IDS = [f"ki_{n}" for n in range(4)]
WRITES = st.one_of(
    st.tuples(st.just("insert statement"), st.sampled_from(IDS), st.sampled_from(STATUSES)),
    st.tuples(st.just("replace statement"), st.sampled_from(IDS), st.sampled_from(STATUSES)),
    st.tuples(st.just("set status"), st.sampled_from(IDS), st.sampled_from(STATUSES)),
    st.tuples(st.just("delete statement"), st.sampled_from(IDS), st.none()),
    st.tuples(st.just("keep claim"), st.sampled_from(IDS), st.none()),
    st.tuples(st.just("delete claim"), st.sampled_from(IDS), st.none()),
)


def _statement(db: sqlite3.Connection, verb: str, knowledge_id: str, status: str) -> None:
    db.execute(
        f"{verb} INTO statements (knowledge_id, ref, source_id, title, statement, type, support, status,"
        " confidence, char_start, char_end, created_at)"
        " VALUES (?, 'base', 'src_a', 't', 's', 'fact', 'DirectFact', ?, 0.9, 0, 1, 'now')",
        (knowledge_id, status),
    )


def _live_wrong(db: sqlite3.Connection) -> list[str]:
    """Claims whose flag says other than their statement does."""
    return [
        row[0]
        for row in db.execute(
            "SELECT knowledge_id FROM claims c WHERE live != EXISTS (SELECT 1 FROM statements s"
            " WHERE s.knowledge_id = c.knowledge_id AND s.status IN ('Active', 'Disputed'))"
        )
    ]


@settings(max_examples=100)
@given(st.lists(WRITES, max_size=25))
def test_a_claim_is_live_exactly_while_its_statement_is(writes: list[tuple[str, str, str | None]]) -> None:
    store = Store(None, threading.RLock())
    for verb, knowledge_id, status in writes:
        with store.transaction() as db:
            if verb == "insert statement":
                _statement(db, "INSERT OR IGNORE", knowledge_id, status or "Active")
            elif verb == "replace statement":
                _statement(db, "INSERT OR REPLACE", knowledge_id, status or "Active")
            elif verb == "set status":
                db.execute("UPDATE statements SET status = ? WHERE knowledge_id = ?", (status, knowledge_id))
            elif verb == "delete statement":
                db.execute("DELETE FROM statements WHERE knowledge_id = ?", (knowledge_id,))
            elif verb == "keep claim":
                db.execute(disagreements.KEEP_CLAIM, (knowledge_id, "base", "src_a", "falcon", "ships", "k", "date:x"))
            else:
                db.execute("DELETE FROM claims WHERE knowledge_id = ?", (knowledge_id,))
        assert _live_wrong(store.db) == [], (verb, knowledge_id, status)
    store.close()


def test_a_store_written_before_claims_were_flagged_is_flagged_on_open(tmp_path: Path) -> None:
    path = tmp_path / "engine.sqlite3"
    store = Store(path, threading.RLock())
    with store.transaction() as db:
        for knowledge_id, status in zip(IDS, STATUSES, strict=True):
            _statement(db, "INSERT", knowledge_id, status)
            db.execute(disagreements.KEEP_CLAIM, (knowledge_id, "base", "src_a", "falcon", "ships", "k", "date:x"))
        db.execute(disagreements.KEEP_CLAIM, ("ki_gone", "base", "src_a", "falcon", "ships", "k", "date:x"))
    store.close()
    old = sqlite3.connect(path)  # as version 2 left it: no flag, no triggers
    for (trigger,) in old.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        old.execute(f"DROP TRIGGER {trigger}")
    old.execute("ALTER TABLE claims DROP COLUMN live")
    old.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    old.commit()
    old.close()

    store = Store(path, threading.RLock())
    live = dict(store.rows("SELECT knowledge_id, live FROM claims"))
    assert live == {"ki_0": 1, "ki_1": 1, "ki_2": 0, "ki_3": 0, "ki_gone": 0}
    assert store.value("SELECT value FROM meta WHERE key = 'schema_version'") == str(SCHEMA_VERSION)
    with store.transaction() as db:  # and the triggers keep it from now on
        db.execute("UPDATE statements SET status = 'Archived' WHERE knowledge_id = 'ki_0'")
    assert store.value("SELECT live FROM claims WHERE knowledge_id = 'ki_0'") == 0
    store.close()
