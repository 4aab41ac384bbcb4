"""The demo knowledge bases' records, found by what they say.

The demo is documents (``local_engine/demo/``) the engine reads at its first start; every id
is the engine's own, a function of the document and what it says, so the in-process engine,
the engine on loopback and the local stack's engine all mint the same ones. Tests name a record
by its words here, never by a key written into the engine.
"""

from __future__ import annotations

from local_engine.demo import corpus as demo

_store = demo.template()


def _one(sql: str, *args: object) -> str:
    rows = _store.rows(sql, *args)
    if len(rows) != 1:
        raise LookupError(f"{len(rows)} demo records answer {args!r}")
    return str(rows[0][0])


def statement(base: str, words: str) -> str:
    """The statement of ``base`` whose text holds ``words``."""
    return _one("SELECT knowledge_id FROM statements WHERE ref = ? AND instr(statement, ?) > 0", base, words)


def entity(base: str, name: str) -> str:
    return _one("SELECT entity_id FROM entities WHERE ref = ? AND name = ?", base, name)


def candidate(base: str, first: str, second: str) -> str:
    """The possible duplicate between the entities named ``first`` and ``second``."""
    a, b = entity(base, first), entity(base, second)
    return _one(
        "SELECT candidate_id FROM candidates WHERE (entity_a = ? AND entity_b = ?) OR (entity_a = ? AND entity_b = ?)",
        a,
        b,
        b,
        a,
    )


def conflict(base: str, kind: str) -> str:
    """The base's one disagreement of ``kind`` (contradiction or duplicate)."""
    return _one("SELECT conflict_id FROM conflicts WHERE ref = ? AND type = ?", base, kind)


def source(base: str, name: str) -> str:
    return _one("SELECT source_id FROM sources WHERE ref = ? AND name = ?", base, name)


def unknown(prefix: str) -> str:
    """A well-formed id no record has."""
    return f"{prefix}_{'0' * 16}"


def job(base: str) -> str:
    """The job that read the base's documents at the first start."""
    return _one("SELECT job_id FROM jobs WHERE ref = ?", base)
