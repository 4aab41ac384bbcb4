"""How a question finds statements: three signals, fused by reciprocal rank (docs/ranking.md).

1. **Words, in the statement** (BM25 over the base's statement index): its own words, and those
   of its heading path and its source's title and file name (columns ``heading`` and
   ``source``, weighted less), so "rootless" finds the statements of a file named for it.
2. **Words, in its passage** (BM25 over the base's chunk index): a statement inherits the rank of
   the chunk it stands in, so the sentence after the one that names the thing is found too.
3. **Meaning** (cosine between the question's vector and the statement's, ``vectors.py``).

A question's words are its words less stop words and question words ("how do I", "what is",
"can I", "why"…): those never count as a match. Each signal ranks its own candidates (the
statements holding every word first, then, while too few do, those holding any word that is not
in most of the base); a statement's score is ``Σ weight / (RRF_K + rank)`` over the signals that
ranked it, scaled so a statement first in every signal scores 1. Only statements that match are
answered: one that neither signal of words found, and whose meaning is below
:data:`MEANING_FLOOR`, is never there to pad a list. The list is then taken best first, each
further statement from a source already taken counting :data:`SAME_SOURCE` less, so several
files answer when several do.
"""

# ruff: noqa: S608 - the SQL here is built from its own clauses, "?" placeholders and the base's
# table names (checked refs); a value is never formatted into a query.

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from local_engine.search import vectors
from local_engine.search.labels import QUERY_WORDS, label_of
from local_engine.search.words import STOP_WORDS
from local_engine.store.database import Store

TERMS = re.compile(r"[^\W_]+(?:[_.\-]+[^\W_]+)*", re.UNICODE)
"""A question's terms: a word, or a name joined by ``_``, ``.`` or ``-`` (``after_this_request``,
``app.config``), which the index holds as its words one after another."""
MAX_QUERY_WORDS = 32
COMMON_SHARE = 0.05
"""A word in more of a base's rows than this share is common: it joins an ``AND``, not an ``OR``."""
COMMON_FLOOR = 200
COMMON_KEPT = 100_000
_COMMON: dict[tuple[str, str, str], bool] = {}
"""(full-text table, the base's token, word) -> whether the word is common there."""
DEPTH = 30
"""How many statements each signal ranks (more when more are asked for)."""
OVERFETCH = 2
"""How many more statements than it ranks the words signal reads, for those not in play."""
CHUNK_DEPTH = 12
"""How many chunks the passage signal ranks: their statements inherit the chunk's rank."""
RRF_K = 20
"""Reciprocal rank fusion's constant: small, so the first few of a signal stand out."""
WEIGHTS = {"words": 1.0, "passage": 0.75, "meaning": 1.5}
"""Each signal's weight in the fusion (chosen on ``make eval``'s Flask set, where MRR moved by at
most 0.03 over a grid of these, the constants below and the vectors' two shares)."""
COLUMNS = "2.0, 1.0, 0.6, 0.4"
"""BM25 weights of the statement index's columns: title (the statement's opening), statement,
heading path, source title and file name."""
MEANING_FLOOR = 0.35
"""The cosine a statement needs to answer by meaning alone (what no word of the question found)."""
SAME_SOURCE = 0.8
"""Each statement taken from a source already answering counts this much of the one before."""
HIDDEN = ("Superseded", "Archived")
BACKEND_WORDS = "sqlite-fts5"
BACKEND_HYBRID = "sqlite-fts5+wordllama"
OPEN, CLOSE = "\x01", "\x02"


def content_words(query: str) -> list[str]:
    """The terms of a question that can match: lower-cased, once each, no stop or question words
    (a joined name is one term, its words a phrase, whatever they are: ``after this request``)."""
    terms = []
    for term in TERMS.findall(query):
        words = QUERY_WORDS.findall(term.lower())
        if len(words) > 1 or words[0] not in STOP_WORDS:
            terms.append(" ".join(words))
    return list(dict.fromkeys(terms))[:MAX_QUERY_WORDS]


def expression(words: Iterable[str], joined: str) -> str | None:
    """FTS5's MATCH text: each term quoted (FTS5's operators are words; a term of several words
    is a phrase), joined by AND or OR."""
    return f" {joined} ".join(f'"{w}"' for w in words) or None


# -- indexing: the rows a source's statements and chunks are found by ---------------------------------


def write_words(db: sqlite3.Connection, store: Store, ref: str, source_id: str, label: str, clause: str) -> None:
    """A source's statements and chunks into the base's full-text index (``clause`` over ``x``,
    the record, says which: those not indexed yet, or all), in the caller's transaction."""
    statements, chunks = store.fts(ref, "s"), store.fts(ref, "c")
    db.execute(
        f"INSERT INTO {statements} (rowid, title, statement, heading, source)"
        " SELECT x.rowid, x.title, x.statement, coalesce(c.heading, ''), ? FROM statements x"
        f" LEFT JOIN chunks c ON c.chunk_id = x.chunk_id WHERE x.source_id = ? AND {clause}",
        (label, source_id),
    )
    db.execute(
        f"INSERT INTO {chunks} (rowid, text)"
        " SELECT x.rowid, ? || ' ' || x.heading || char(10) || x.text FROM chunks x"
        f" WHERE x.source_id = ? AND {clause}",
        (label, source_id),
    )


def upgrade(store: Store, ref: str) -> None:
    """A base an older engine indexed (no ``heading`` and ``source`` columns) indexed again."""
    table = store.fts(ref, "s")
    columns = {row[1] for row in store.rows(f"PRAGMA table_info({table})")}
    if not columns or "heading" in columns:
        return
    with store.transaction() as db:
        db.execute(f"DROP TABLE {table}")
        db.execute(f"DROP TABLE IF EXISTS {store.fts(ref, 'c')}")
        store.ensure_index(db, ref)
        for (source_id,) in db.execute("SELECT source_id FROM sources WHERE ref = ?", (ref,)).fetchall():
            write_words(db, store, ref, source_id, label_of(store, source_id), "x.indexed = 1")
        vectors.touch(db, ref)


# -- search ------------------------------------------------------------------------------------------


@dataclass
class Candidate:
    """A statement some signal ranked: its rank in each, and what each found."""

    rowid: int
    ranks: dict[str, int] = field(default_factory=dict)
    meaning: float | None = None
    chunk: int | None = None  # the rowid of the chunk whose match it inherits
    source: str = ""
    score: float = 0.0


@dataclass
class Ranked:
    """What a search answers: ``(score, {"row", "why"})`` best first, and what ranked them."""

    hits: list[tuple[float, dict[str, Any]]]
    backend: str


class Ranker:
    """Search over one store's knowledge bases."""

    def __init__(self, store: Store, meaning: bool = True) -> None:
        self.store = store
        self.meaning = meaning  # rank by meaning too (the engine's switch, read at its start)

    def search(self, ref: str, query: str, limit: int, include_historical: bool) -> Ranked:
        words = content_words(query)
        meaning = self.meaning
        backend = BACKEND_HYBRID if meaning else BACKEND_WORDS
        if not self.store.has_index(ref) or not (words or meaning):
            return Ranked([], backend)
        upgrade(self.store, ref)
        depth = max(limit, DEPTH)
        said = self._said(ref, words, depth * OVERFETCH)
        passages = self._passages(ref, words)
        meant = self._meant(ref, query, depth * OVERFETCH) if meaning else []
        play = self._in_play(ref, [*said, *passages, *(r for r, _ in meant)], HIDDEN if not include_historical else ())
        found: dict[int, Candidate] = {}
        for rank, rowid in enumerate([r for r in said if r in play][:depth], start=1):
            found.setdefault(rowid, Candidate(rowid)).ranks["words"] = rank
        for rowid, (rank, chunk) in passages.items():
            if rowid in play:
                held = found.setdefault(rowid, Candidate(rowid))
                held.ranks["passage"], held.chunk = rank, chunk
        for rank, (rowid, cosine) in enumerate([m for m in meant if m[0] in play][:depth], start=1):
            held = found.get(rowid) or Candidate(rowid)
            held.ranks["meaning"], held.meaning = rank, cosine
            if rowid in found or cosine >= MEANING_FLOOR:  # meaning alone answers only above its floor
                found[rowid] = held
        for held in found.values():
            held.source = play[held.rowid]
        return Ranked(self._hits(ref, self._chosen(list(found.values()), limit), words), backend)

    # -- the signals: each a list, best first, of statements it ranks (in play or not) ----------------

    def _said(self, ref: str, words: list[str], wanted: int) -> list[int]:
        """Statement rowids by BM25 over their own words, heading and source: the index alone ranks
        (a join to each match's statement cost a lookup a match, most of a common word's query);
        ``wanted`` is :data:`OVERFETCH` times those kept, for those not in play."""
        table = self.store.fts(ref, "s")
        sql = f"SELECT rowid, bm25({table}, {COLUMNS}) AS rank FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT ?"
        return self._ranked(ref, table, words, wanted, lambda match: self.store.tuples(sql, match, wanted))

    def _passages(self, ref: str, words: list[str]) -> dict[int, tuple[int, int]]:
        """Statement rowid -> (its chunk's rank by BM25 over the chunks, the chunk's rowid)."""
        table = self.store.fts(ref, "c")
        sql = f"SELECT rowid, rank FROM {table} WHERE {table} MATCH ? ORDER BY rank, rowid LIMIT ?"
        chunks = self._ranked(ref, table, words, CHUNK_DEPTH, lambda match: self.store.tuples(sql, match, CHUNK_DEPTH))
        if not chunks:
            return {}
        rank_of = {rowid: n for n, rowid in enumerate(chunks, start=1)}
        held = vectors.matrix(self.store, ref) if self.meaning else None
        if held is not None:  # the base's chunks' statements, kept beside its vectors
            return {s: (rank_of[c], c) for c in chunks for s in held.members.get(c, ())}
        found = self.store.tuples(
            "SELECT s.rowid, c.rowid FROM chunks c JOIN statements s ON s.source_id = c.source_id"
            f" AND s.chunk_id = c.chunk_id WHERE c.rowid IN ({','.join('?' * len(chunks))})",
            *chunks,
        )
        return {int(s): (rank_of[int(c)], int(c)) for s, c in found}

    def _in_play(self, ref: str, rowids: list[int], hidden: Sequence[str]) -> dict[int, str]:
        """Those of ``rowids`` that are the base's indexed statements in play, each with its source
        (read by rowid alone: a condition the base's own index could serve reads all of the base)."""
        wanted = list(dict.fromkeys(rowids))
        if not wanted:
            return {}
        return {
            int(rowid): str(source)
            for rowid, base, indexed, status, review, source in self.store.tuples(
                "SELECT rowid, ref, indexed, status, review_status, source_id FROM statements"
                f" WHERE rowid IN ({','.join('?' * len(wanted))})",
                *wanted,
            )
            if base == ref and indexed == 1 and status not in hidden and review != "rejected"
        }

    def _ranked(self, ref: str, table: str, words: list[str], depth: int, read: Any) -> list[int]:
        """Rowids best first: those holding every word, then, while fewer than ``depth`` do, those
        holding any of the informative words, all ranked by BM25 (``read(match)`` answers
        ``(rowid, rank)`` rows)."""
        every = expression(words, "AND")
        if every is None:
            return []
        rows = [(float(rank), int(rowid)) for rowid, rank in read(every)]
        if len(rows) < depth and len(words) > 1:
            either = expression(self._informative(ref, table, words), "OR")
            if either is not None:
                seen = {rowid for _, rowid in rows}
                more = [(float(rank), int(rowid)) for rowid, rank in read(either) if int(rowid) not in seen]
                rows = sorted(rows + more[: depth - len(rows)])
        return [rowid for _, rowid in rows]

    def _informative(self, ref: str, table: str, words: list[str]) -> list[str]:
        """The words that are not in most of the base: a word in more than :data:`COMMON_SHARE` of
        its rows ranks little and costs a pass over them all (its count is read with a cap, so
        asking costs at most that many index rows). What a word is, is remembered while the base's
        index is the same (its ``vectors:<ref>`` token, new at every indexing)."""
        token = self.store.meta(f"vectors:{ref}") or ""
        common = {w: _COMMON.get((table, token, w)) for w in words}
        unknown = [w for w, known in common.items() if known is None]
        if unknown:
            total = int(self.store.value(f"SELECT count(*) FROM {table}_docsize") or 0)
            cap = max(COMMON_FLOOR, int(total * COMMON_SHARE))
            for word in unknown:
                seen = self.store.value(
                    f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)", f'"{word}"', cap
                )
                common[word] = int(seen or 0) >= cap
            if len(_COMMON) > COMMON_KEPT:
                _COMMON.clear()
            _COMMON.update({(table, token, w): bool(common[w]) for w in unknown})
        return [w for w in words if not common[w]]

    def _meant(self, ref: str, query: str, wanted: int) -> list[tuple[int, float]]:
        """``(rowid, score)`` of the ``wanted`` statements nearest the question's meaning."""
        held = vectors.matrix(self.store, ref)
        if held is None or not len(held.rowids):
            return []
        asked = vectors.model().embed([query])[0]  # its stop and question words weigh nothing
        if not asked.any():
            return []
        rows, scores = held.nearest(asked, wanted)
        return [(int(r), round(float(s), 3)) for r, s in zip(held.rowids[rows], scores, strict=True)]

    # -- fusion --------------------------------------------------------------------------------------

    def _chosen(self, found: list[Candidate], limit: int) -> list[Candidate]:
        """The candidates fused and taken best first, a source's each further statement counting
        :data:`SAME_SOURCE` less than its one before."""
        if not found:
            return []
        best = sum(WEIGHTS.values()) / (RRF_K + 1)
        for held in found:
            held.score = sum(WEIGHTS[signal] / (RRF_K + rank) for signal, rank in held.ranks.items()) / best
        pool = sorted(found, key=lambda h: (-h.score, h.rowid))[: limit * 5]  # what the picks can reach
        taken: list[Candidate] = []
        count: dict[str, int] = {}
        while pool and len(taken) < limit:
            pick = max(pool, key=lambda h: h.score * SAME_SOURCE ** count.get(h.source, 0))
            pool.remove(pick)
            count[pick.source] = count.get(pick.source, 0) + 1
            taken.append(pick)
        return taken

    # -- what is answered ---------------------------------------------------------------------------

    def _hits(self, ref: str, chosen: list[Candidate], words: list[str]) -> list[tuple[float, dict[str, Any]]]:
        if not chosen:
            return []
        marks = ",".join("?" * len(chosen))
        rows = {
            int(r["rowid"]): r
            for r in self.store.rows(
                f"SELECT s.rowid AS rowid, s.*, c.heading AS heading FROM statements s"
                f" LEFT JOIN chunks c ON c.chunk_id = s.chunk_id WHERE s.rowid IN ({marks})",
                *(h.rowid for h in chosen),
            )
        }
        said = self._marked(self.store.fts(ref, "s"), words, [h.rowid for h in chosen if "words" in h.ranks], 1, 2, 3)
        unsaid = [h.chunk for h in chosen if h.chunk is not None and not said.get(h.rowid, [[]])[0]]
        passages = self._marked(self.store.fts(ref, "c"), words, unsaid, 0)
        hits = []
        for held in chosen:
            row = rows[held.rowid]
            found: Sequence[list[str]] = said.get(held.rowid) or [[], [], []]
            passage = passages.get(held.chunk, [[]])[0] if held.chunk is not None else []
            why = _why(found, passage, held.meaning, row["heading"])
            hits.append((round(held.score, 3), {"row": row, "why": why}))
        return hits

    def _marked(self, table: str, words: list[str], rowids: list[int], *columns: int) -> dict[int, list[list[str]]]:
        """For each rowid, the words FTS5 matched in each of ``columns`` (as the text says them)."""
        either = expression(words, "OR")
        if either is None or not rowids:
            return {}
        marks = ",".join("?" * len(rowids))
        lit = ", ".join(f"highlight({table}, {c}, char(1), char(2))" for c in columns)
        found: dict[int, list[list[str]]] = {}
        for rowid, *texts in self.store.tuples(
            f"SELECT rowid, {lit} FROM {table} WHERE {table} MATCH ? AND rowid IN ({marks})", either, *rowids
        ):
            found[int(rowid)] = [_between(text or "") for text in texts]
        return found


def _between(text: str) -> list[str]:
    """The marked words of a ``highlight()``, lower-cased, once each."""
    marked = re.findall(f"{OPEN}(.*?){CLOSE}", text, flags=re.DOTALL)
    return list(dict.fromkeys(w.lower() for span in marked for w in QUERY_WORDS.findall(span)))


def _why(found: Sequence[list[str]], passage: list[str], meaning: float | None, heading: str | None) -> str:
    """The signals that matched, in a person's words: ``words: ferry, timetable; meaning 0.62;
    section: Harbour › Ferries``."""
    said, headed, named = found
    parts = []
    if said:
        parts.append(f"words: {', '.join(said)}")
    if headed:
        parts.append(f"heading: {', '.join(headed)}")
    if named:
        parts.append(f"title or file name: {', '.join(named)}")
    if passage and not said:
        parts.append(f"passage: {', '.join(passage)}")
    if meaning is not None and meaning >= MEANING_FLOOR:
        parts.append(f"meaning {meaning:.2f}")
    if heading:
        parts.append(f"section: {heading}")
    return "; ".join(parts)
