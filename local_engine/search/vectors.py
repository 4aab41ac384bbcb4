"""Meaning: a dense vector for every statement and chunk, and the statements nearest a question.

The model is wordllama's ``l2_supercat`` at 256 dimensions, a *static* embedding model: a table
of one vector a token (32,000 × 256, a large language model's token embeddings trained to be
averaged), so a text's vector is the mean of its tokens' rows: numpy, microseconds, no GPU. Its
weights and tokenizer ship inside the wheel (pinned in ``pyproject.toml``); :func:`model` loads
them with ``WordLlama.load`` from the package's own folder, downloads off, so nothing is fetched
at run time: once a process (about half a second), on first use, under a lock.

A text is read as its words (``\\w+``), stop and question words left out (``words.py``: they
mean nothing a mean can use, and "how do I" must not bring a statement nearer), each word's
token ids learnt once a process. A statement's vector is its own words' direction plus
:data:`CONTEXT_WEIGHT` of where it stands (its heading path, its source's title and file name);
a chunk's is the mean of where it stands and all its statements. Each is stored as 256
float16s (512 bytes) in the base's own tables, ``vec_<ref>_s`` and ``vec_<ref>_c``, keyed by the
record's rowid (``Store.vectors``), by the ``indexing`` stage, which also writes a fresh token in
the ``meta`` row ``vectors:<ref>``.

A search keeps each base's statements as one float32 matrix (:class:`Matrix`: each row
:data:`CHUNK_MEANING` its chunk's vector and the rest its own, so one product scores both) for as
long as the token is the same. A statement read again may have been given a deleted one's rowid:
a read joins the vectors to statements that are the base's and indexed, and indexing replaces a
rowid's vector, so a stale vector is never a statement's (and :func:`prune` drops them).

``LOCAL_ENGINE_VECTORS=0`` (read once, when ``python -m local_engine`` starts, and handed down as
``Engine(vectors=…)``, the job's ``Work.vectors`` and the ranker's ``meaning``) turns vectors off: indexing
writes none, and search ranks by words alone. A base indexed without them gets them at its first
search with them on.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from local_engine.search.labels import vector_parts
from local_engine.search.words import STOP_WORDS
from local_engine.store.database import Store

ENV = "LOCAL_ENGINE_VECTORS"
MODEL = "wordllama l2_supercat 256"
DIMENSIONS = 256
STATEMENT_TOKENS = 256
"""A statement's own text is cut after this many tokens."""
CONTEXT_TOKENS = 64
"""Where a statement stands (its heading path, its source's title and file name), at most this many."""
WORDS_KEPT = 200_000
"""Words whose tokens a process remembers (about 30 MiB); past it, it starts again."""
BASES_KEPT = 4
"""Knowledge bases whose matrices a process keeps, the least recently searched let go first."""
ROWS_KEPT = 250_000
"""Statements kept over every base: a KiB each (256 float32s), half a KiB more in a large base."""
WORD = re.compile(r"\w+")
BESIDE_FROM = 30_000
"""A job with at least this many statements to index computes their vectors in the workers."""
COARSE_FROM = 20_000
"""A base with more statements than this is searched coarse first (:meth:`Matrix.nearest`)."""
COARSE_DIMENSIONS = 128
COARSE_KEEP = 1_000
CHUNK_MEANING = 0.5
"""The share of a statement's meaning score that is its chunk's cosine (what its passage is about)."""
CONTEXT_WEIGHT = 0.5
"""How much where a statement stands (its heading path, its source's title and file name) weighs in
its vector beside what it says (each a unit vector): enough to place it, not so much that a short
statement reads as its heading."""
Vectors = npt.NDArray[np.float32]
T = TypeVar("T")


def enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether statements get vectors and search ranks by meaning (``LOCAL_ENGINE_VECTORS``,
    on unless ``0``, ``false``, ``no`` or ``off``)."""
    raw = (os.environ if environ is None else environ).get(ENV, "").strip().lower()
    return raw not in ("0", "false", "no", "off")


class Model:
    """The token table and its tokenizer: a text's vector is the mean of its tokens' rows (its
    direction: the sum's, which is what :meth:`sums` answers, so texts can be joined by adding)."""

    def __init__(self, table: npt.NDArray[Any], tokenizer: Any) -> None:
        self.table = np.ascontiguousarray(table, dtype=np.float32)
        self.tokenizer = tokenizer
        self.pieces: dict[str, int] = tokenizer.get_vocab()
        self._lock = threading.Lock()  # the words are learnt by one thread at a time
        self._forget()

    def _forget(self) -> None:
        """No word known. A known word is a number (``index``); its token ids are ``count[n]`` ids
        of ``ids`` from ``first[n]`` (arrays that grow by doubling, ``size`` of them used)."""
        self.index: dict[str, int] = {}
        self.ids = np.zeros(1 << 16, dtype=np.int64)
        self.first = np.zeros(1 << 14, dtype=np.int64)
        self.count = np.zeros(1 << 14, dtype=np.int64)
        self.size = 0  # of ids

    def _learn(self, unknown: list[str]) -> None:
        """Each word's token ids: a stop word has none; a word that is one of the vocabulary's
        pieces (``▁`` and the word, as a word after a space is tokenized) is that piece; the
        others are tokenized."""
        found: dict[str, Sequence[int]] = {}
        rest = []
        for word in unknown:
            piece = self.pieces.get("\u2581" + word)
            if word.lower() in STOP_WORDS:
                found[word] = ()
            elif piece is not None:
                found[word] = (piece,)
            else:
                rest.append(word)
        if rest:
            encoded = self.tokenizer.encode_batch(rest, add_special_tokens=False)
            found.update(zip(rest, (e.ids for e in encoded), strict=True))
        if not found:
            return
        words, runs = len(self.index), [list(ids) for ids in found.values()]
        counts = np.array([len(run) for run in runs], dtype=np.int64)
        added = list(chain.from_iterable(runs))
        self.ids = _room(self.ids, self.size + len(added))
        self.first, self.count = _room(self.first, words + len(runs)), _room(self.count, words + len(runs))
        self.ids[self.size : self.size + len(added)] = added
        self.first[words : words + len(runs)] = self.size + np.cumsum(counts) - counts
        self.count[words : words + len(runs)] = counts
        self.index.update(zip(found, range(words, words + len(runs)), strict=True))
        self.size += len(added)

    def tokens(self, texts: Sequence[str], limit: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Every text's token ids, word by word and at most ``limit`` a text, one after another, and
        how many each text has (each word looked up once, its ids laid out by numpy)."""
        split = [WORD.findall(text) for text in texts]
        with self._lock:
            unknown = [word for word in set().union(*split) if word not in self.index]
            if len(self.index) + len(unknown) > WORDS_KEPT:
                self._forget()
                unknown = list(set().union(*split))
            self._learn(unknown)
            ids, first, count = self.ids, self.first, self.count
            said = np.fromiter(map(self.index.__getitem__, chain.from_iterable(split)), dtype=np.int64)
        spans = count[said]  # each word's number of tokens, word after word
        total = int(spans.sum())
        place = np.arange(total) - np.repeat(np.cumsum(spans) - spans, spans)  # a token's place in its word
        flat = ids[np.repeat(first[said], spans) + place]
        owner = np.repeat(np.repeat(np.arange(len(texts)), [len(words) for words in split]), spans)
        lengths = np.bincount(owner, minlength=len(texts))
        kept = np.arange(total) - (np.cumsum(lengths) - lengths)[owner] < limit  # a token's place in its text
        return flat[kept], np.minimum(lengths, limit)

    def sums(self, texts: Sequence[str], limit: int = STATEMENT_TOKENS) -> Vectors:
        """Each text's tokens' rows summed (a text with no words: zeros): the texts longest first,
        each text's first token's row added to it, then its second's (for the texts that long)…,
        a row of the table read once for each token and nothing made as large as the texts."""
        flat, lengths = self.tokens(texts, limit)
        order = np.argsort(-lengths, kind="stable")
        ordered = lengths[order]
        starts = (np.cumsum(lengths) - lengths)[order]
        summed = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        for place in range(int(ordered[0]) if len(ordered) else 0):
            longer = int(np.count_nonzero(ordered > place))
            summed[:longer] += self.table.take(flat[starts[:longer] + place], axis=0)
        found = np.empty_like(summed)
        found[order] = summed
        return found

    def embed(self, texts: Sequence[str], limit: int = STATEMENT_TOKENS) -> Vectors:
        """One unit vector a text (a text with no words: zeros, near nothing)."""
        return unit(self.sums(texts, limit))


def _room(array: npt.NDArray[np.int64], wanted: int) -> npt.NDArray[np.int64]:
    """``array``, or a copy twice as long (or more) when it holds fewer than ``wanted``."""
    if wanted <= len(array):
        return array
    grown = np.zeros(max(wanted, 2 * len(array)), dtype=np.int64)
    grown[: len(array)] = array
    return grown


def unit(vectors: Vectors) -> Vectors:
    """Each row at length 1 (a zero row stays zero)."""
    norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9).astype(np.float32)
    found: Vectors = vectors / norms
    return found


_model: Model | None = None
_model_lock = threading.Lock()


def model() -> Model:
    """The model, loaded on first use (once a process, whichever thread asks first)."""
    global _model  # noqa: PLW0603 - one model a process, loaded when first wanted
    with _model_lock:
        if _model is None:
            _model = _load()
        return _model


def _load() -> Model:
    """wordllama's model from the wheel's own folder, downloads off. wordllama configures the root
    logger when imported (``logging.basicConfig``): the engine's logging is put back as it was."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama  # type: ignore[import-untyped]
        from wordllama import WordLlama
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    loaded = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
    tokenizer = loaded.tokenizer
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return Model(loaded.embedding, tokenizer)


def pack(vectors: Vectors) -> list[bytes]:
    """Each row as 256 little-endian float16s."""
    half = vectors.astype("<f2")
    return [row.tobytes() for row in half]


def unpack(blobs: Sequence[bytes]) -> Vectors:
    if not blobs:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype="<f2").reshape(len(blobs), -1).astype(np.float32)


# -- at indexing: a source's vectors ------------------------------------------------------------------


def source_vectors(
    chunks: Sequence[tuple[int, str]], statements: Sequence[tuple[int, int, str]]
) -> tuple[list[tuple[int, bytes]], list[tuple[int, bytes]]]:
    """A source's vectors: ``chunks`` as ``(rowid, where it stands)`` (its heading path, its
    source's title and file name) and ``statements`` as ``(rowid, its chunk's place in chunks or
    -1, text)``. A statement's vector is its own words' direction and :data:`CONTEXT_WEIGHT` of
    its chunk's context's; a chunk's is the mean of its context's tokens and all its statements'
    (what a reader reads of it: prose, not code or tables), so each text is tokenized once.
    Answers ``(rowid, vector)`` rows to store, statements', then chunks'."""
    embedder = model()
    context = embedder.sums([text for _, text in chunks], CONTEXT_TOKENS)
    said = embedder.sums([text for _, _, text in statements], STATEMENT_TOKENS)
    place = np.fromiter((p for _, p, _ in statements), dtype=np.int64, count=len(statements))
    placed = place >= 0
    whole = unit(said)
    whole[placed] += CONTEXT_WEIGHT * unit(context)[place[placed]]
    read = context.copy()  # each chunk's context and, added in, its statements
    if placed.any():
        order = np.argsort(place[placed], kind="stable")
        chunk, first = np.unique(place[placed][order], return_index=True)
        read[chunk] += np.add.reduceat(said[placed][order], first, axis=0)
    return (
        [(rowid, blob) for (rowid, _, _), blob in zip(statements, pack(unit(whole)), strict=True)],
        [(rowid, blob) for (rowid, _), blob in zip(chunks, pack(unit(read)), strict=True)],
    )


def alongside(items: Iterable[T], parts: Callable[[T], tuple[Any, Any]]) -> Iterator[tuple[T, Any]]:
    """``(item, its vectors)`` in order, each item's computed on a thread of its own while the
    caller writes the one before (numpy and SQLite let go of the GIL for most of their work, so
    the two share the machine's cores); ``parts(item)`` is read on the caller's thread."""
    with ThreadPoolExecutor(1, thread_name_prefix="vectors") as pool:
        held: tuple[T, Future[Any]] | None = None
        for item in items:
            coming = (item, pool.submit(source_vectors, *parts(item)))
            if held is not None:
                yield held[0], held[1].result()
            held = coming
        if held is not None:
            yield held[0], held[1].result()


def worth_workers(store: Store, job_id: str) -> bool:
    """Whether a job's vectors are worth the worker processes: each loads the model first (about
    a second of CPU), and a statement costs some 20 to 40 µs, so a job with fewer than
    :data:`BESIDE_FROM` statements to index has them computed in the engine's own process (on a
    thread beside the writes: :func:`alongside`), which has the model loaded already."""
    waiting = store.value(
        "SELECT COUNT(*) FROM (SELECT 1 FROM statements s JOIN sources c USING (source_id)"
        " WHERE c.job_id = ? AND c.status = 'evidenced' AND s.indexed = 0 LIMIT ?)",
        job_id,
        BESIDE_FROM,
    )
    return int(waiting or 0) >= BESIDE_FROM


def write(db: sqlite3.Connection, store: Store, ref: str, found: tuple[list[Any], list[Any]]) -> None:
    """A source's vectors stored (a rowid's old vector replaced), in the caller's transaction."""
    statements, chunks = found
    store.ensure_vectors(db, ref)
    if statements:
        db.executemany(f"INSERT OR REPLACE INTO {store.vectors(ref, 's')} (rowid, vector) VALUES (?, ?)", statements)  # noqa: S608
    if chunks:
        db.executemany(f"INSERT OR REPLACE INTO {store.vectors(ref, 'c')} (rowid, vector) VALUES (?, ?)", chunks)  # noqa: S608


def prune(store: Store, ref: str) -> None:
    """Vectors whose statement or chunk is no longer the base's (a source read again or gone)
    dropped. A read never serves them meanwhile (it joins them to the base's indexed records)."""
    if not store.has_vectors(ref):
        return
    with store.transaction() as db:
        for kind, records in (("s", "statements"), ("c", "chunks")):
            table = store.vectors(ref, kind)
            kept = f"SELECT rowid FROM {records} WHERE ref = ?"  # noqa: S608 - our own names
            db.execute(f"DELETE FROM {table} WHERE rowid NOT IN ({kept})", (ref,))  # noqa: S608


def touch(db: sqlite3.Connection, ref: str) -> None:
    """The base's statements changed: a new token, so a search reads its vectors again."""
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (f"vectors:{ref}", secrets.token_hex(8)))


# -- at search: the base's matrices, kept while its token holds ---------------------------------------


@dataclass(frozen=True)
class Matrix:
    """A base's vectors as a search reads them: its indexed statements' rowids and, a row each,
    what a question's vector is compared with (``meanings``: :data:`CHUNK_MEANING` of its chunk's
    vector and the rest its own, so one product of the matrix and the question scores both)."""

    token: str
    rowids: npt.NDArray[np.int64]
    meanings: Vectors
    members: dict[int, list[int]]  # a chunk's rowid -> its statements' rowids
    coarse: Vectors | None = None  # a large base's first COARSE_DIMENSIONS, each row at length 1

    @property
    def size(self) -> int:
        return int(self.meanings.shape[0])

    def nearest(self, asked: Vectors, wanted: int) -> tuple[npt.NDArray[np.intp], Vectors]:
        """The rows of the ``wanted`` statements nearest ``asked`` (a unit vector), nearest first,
        and their scores. A large base is first narrowed to its :data:`COARSE_KEEP` nearest by the
        first :data:`COARSE_DIMENSIONS` (the model is trained so that they are a vector of their
        own: a quarter of the memory read, 98% of the 50 nearest kept), then scored in full."""
        if self.coarse is not None and len(self.rowids) > COARSE_KEEP:
            head = asked[:COARSE_DIMENSIONS]
            near = _times(self.coarse, head / max(float(np.linalg.norm(head)), 1e-9))
            rows = np.argpartition(-near, COARSE_KEEP - 1)[:COARSE_KEEP]
            scores = _times(self.meanings[rows], asked)
        else:
            rows = np.arange(len(self.rowids))
            scores = _times(self.meanings, asked)
        wanted = min(wanted, len(rows))
        best = np.argpartition(-scores, wanted - 1)[:wanted]
        best = best[np.argsort(-scores[best], kind="stable")]
        return rows[best], scores[best]


def _times(matrix: Vectors, vector: Vectors) -> Vectors:
    """``matrix @ vector`` on this thread alone: a product this size is bound by memory, and BLAS's
    threads wait for each other, tens of milliseconds on a machine whose cores are busy (einsum's
    own loop: 2 ms for 100,000 × 128 where ``@`` took 8 beside other work)."""
    found: Vectors = np.einsum("ij,j->i", matrix, vector)
    return found


_kept: OrderedDict[tuple[str, str], Matrix] = OrderedDict()
_kept_lock = threading.Lock()


def matrix(store: Store, ref: str) -> Matrix | None:
    """The base's vectors (None: it has no index). Statements indexed without a vector (by an
    engine that had none, or with vectors off) are given theirs first."""
    if not store.has_index(ref):
        return None
    with _kept_lock:
        token = store.meta(f"vectors:{ref}") or ""
        held = _kept.get((ref, token))
        if held is not None:
            _kept.move_to_end((ref, token))
            return held
        if _backfill(store, ref):
            token = store.meta(f"vectors:{ref}") or ""
        held = _read(store, ref, token)
        if token:  # a base with no token yet has no statements to keep
            _kept[(ref, token)] = held
        while len(_kept) > BASES_KEPT or (len(_kept) > 1 and sum(m.size for m in _kept.values()) > ROWS_KEPT):
            _kept.popitem(last=False)
        return held


def _backfill(store: Store, ref: str) -> bool:
    """Vectors for the sources of the base that have an indexed statement or chunk without one;
    True when there were any."""
    if not store.has_vectors(ref):
        if store.value("SELECT 1 FROM statements WHERE ref = ? AND indexed = 1 LIMIT 1", ref) is None:
            return False
        with store.transaction() as db:
            store.ensure_vectors(db, ref)
    absent = (
        "SELECT x.source_id FROM {records} x WHERE x.ref = ? AND x.indexed = 1"
        " AND NOT EXISTS (SELECT 1 FROM {table} v WHERE v.rowid = x.rowid)"
    )
    lacking = [
        str(row[0])
        for row in store.tuples(
            absent.format(records="statements", table=store.vectors(ref, "s"))
            + " UNION "
            + absent.format(records="chunks", table=store.vectors(ref, "c")),
            ref,
            ref,
        )
    ]
    for source_id in lacking:
        found = source_vectors(*vector_parts(store, source_id, "x.indexed = 1"))
        with store.transaction() as db:
            write(db, store, ref, found)
            touch(db, ref)
    return bool(lacking)


def _read(store: Store, ref: str, token: str) -> Matrix:
    statements = store.tuples(
        f"SELECT v.rowid, v.vector, s.chunk_id FROM {store.vectors(ref, 's')} v"  # noqa: S608
        " JOIN statements s ON s.rowid = v.rowid WHERE s.ref = ? AND s.indexed = 1 ORDER BY v.rowid",
        ref,
    )
    chunks = {
        chunk_id: (rowid, vector)
        for chunk_id, rowid, vector in store.tuples(
            f"SELECT c.chunk_id, c.rowid, v.vector FROM {store.vectors(ref, 'c')} v"  # noqa: S608
            " JOIN chunks c ON c.rowid = v.rowid WHERE c.ref = ? AND c.indexed = 1",
            ref,
        )
    }
    members: dict[int, list[int]] = {}
    for rowid, _, chunk_id in statements:
        if chunk_id in chunks:
            members.setdefault(int(chunks[chunk_id][0]), []).append(int(rowid))
    own = unpack([r[1] for r in statements])
    inherited = unpack([chunks[r[2]][1] if r[2] in chunks else r[1] for r in statements])  # none: its own
    meanings = np.ascontiguousarray((1 - CHUNK_MEANING) * own + CHUNK_MEANING * inherited, dtype=np.float32)
    large = len(statements) > COARSE_FROM
    return Matrix(
        token=token,
        rowids=np.fromiter((r[0] for r in statements), dtype=np.int64, count=len(statements)),
        meanings=meanings,
        members=members,
        coarse=np.ascontiguousarray(unit(meanings[:, :COARSE_DIMENSIONS])) if large else None,
    )
