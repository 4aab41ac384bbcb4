"""What a source is called, and what its rows' words and vectors are made of.

A statement is found by the words of its heading path and of its source's title and file name
too (a word only in a heading or a file name finds it): ``source_label`` says them, ``label_of``
reads them from the store, and ``vector_parts`` gathers what ``vectors.source_vectors`` embeds.
Both ranking (the full-text rows) and vectors (their backfill) read them here.
"""

from __future__ import annotations

import re

from local_engine.store.database import Store

QUERY_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
"""A word of a question or a text: letters and digits (an underscore splits, as in a name)."""


def file_words(name: str) -> str:
    """A file's path as words, its suffix left out: ``docs/rootless-mode.md`` → ``docs rootless mode``."""
    folder, _, base = name.rpartition("/")
    stem = base.rsplit(".", 1)[0] if "." in base.strip(".") else base
    return " ".join(QUERY_WORDS.findall(f"{folder} {stem}".replace("_", " ")))


def source_label(name: str, first_heading: str | None) -> str:
    """What a source is called: its title (its first heading) and its file's words."""
    title = (first_heading or "").split(" › ", 1)[0]
    return " · ".join(dict.fromkeys(part for part in (title, file_words(name)) if part))


def label_of(store: Store, source_id: str) -> str:
    row = store.row(
        "SELECT s.name, (SELECT c.heading FROM chunks c WHERE c.source_id = s.source_id ORDER BY c.idx LIMIT 1)"
        " FROM sources s WHERE s.source_id = ?",
        source_id,
    )
    return "" if row is None else source_label(row[0], row[1])


def vector_parts(store: Store, source_id: str, clause: str) -> tuple[list[tuple[int, str]], list[tuple[int, int, str]]]:
    """What a source's vectors are made of (``vectors.source_vectors``), for its chunks and
    statements where ``clause`` holds (``x`` is the record): each chunk's rowid and where it
    stands (its heading path, its source's title and file name), each statement's rowid, its
    chunk's place among them (-1: none) and its text."""
    label = label_of(store, source_id)
    chunks = store.tuples(
        f"SELECT x.rowid, x.chunk_id, x.heading FROM chunks x WHERE x.source_id = ? AND {clause} ORDER BY x.idx",  # noqa: S608 - clause: the callers' own
        source_id,
    )
    place = {chunk_id: n for n, (_, chunk_id, _) in enumerate(chunks)}
    statements = store.tuples(
        f"SELECT x.rowid, x.chunk_id, x.statement FROM statements x WHERE x.source_id = ? AND {clause}",  # noqa: S608
        source_id,
    )
    return (
        [(int(rowid), f"{heading} {label}".strip()) for rowid, _, heading in chunks],
        [(int(rowid), place.get(chunk_id, -1), text) for rowid, chunk_id, text in statements],
    )
