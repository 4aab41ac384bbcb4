"""The baselines a user builds in an hour: blank-line paragraphs of the raw files, ranked by BM25.

- :class:`Fts5`: SQLite FTS5 (its default ``unicode61`` tokenizer) over the paragraphs; a question's
  words (``\\w+``, lower-cased, each once) quoted and OR'ed; ``bm25()`` order.
- :class:`Bm25s`: bm25s over the same paragraphs, its tokenizer with English stop words, no stemmer;
  every paragraph scored and the top taken.

Both answer with paragraphs that match at least one word (no padding), ties broken by the
paragraphs' order (files in path order, paragraphs in file order), so a run is deterministic.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import bm25s  # type: ignore[import-untyped]

from benchmarks.eval.scoring import TOP_K

BLANK_LINE = re.compile(r"\n[ \t]*\n")
WORDS = re.compile(r"\w+")


@dataclass(frozen=True)
class Paragraph:
    file: str
    """Path relative to the set's root."""
    text: str


def split_paragraphs(text: str) -> list[str]:
    """The text's blank-line paragraphs: line ends made ``\\n``, split at lines holding only spaces or
    tabs, each stripped, empty ones dropped. Markup is left as it is: these are the raw files."""
    normalized = text.replace("\r\n", "\n").replace("\r", "\n")
    return [part.strip() for part in BLANK_LINE.split(normalized) if part.strip()]


def paragraphs_of(root: Path, files: list[str]) -> list[Paragraph]:
    """Every paragraph of ``files`` (relative to ``root``), files in the order given."""
    found: list[Paragraph] = []
    for name in files:
        text = (root / name).read_text(encoding="utf-8", errors="replace")
        found.extend(Paragraph(name, part) for part in split_paragraphs(text))
    return found


def or_query(question: str) -> str | None:
    """An FTS5 query: each distinct word of the question quoted, OR'ed; None when it has none."""
    words = list(dict.fromkeys(word.lower() for word in WORDS.findall(question)))
    return " OR ".join(f'"{word}"' for word in words) or None


class Fts5:
    name = "fts5"
    label = "SQLite FTS5, paragraphs, words OR'ed"

    def __init__(self, paragraphs: list[Paragraph]) -> None:
        self._paragraphs = paragraphs
        self._db = sqlite3.connect(":memory:")
        self._db.execute("CREATE VIRTUAL TABLE p USING fts5(body)")
        self._db.executemany(
            "INSERT INTO p (rowid, body) VALUES (?, ?)", [(i + 1, p.text) for i, p in enumerate(paragraphs)]
        )
        self._db.commit()

    def rank(self, question: str, k: int = TOP_K) -> list[tuple[str, ...]]:
        query = or_query(question)
        if query is None:
            return []
        rows = self._db.execute("SELECT rowid FROM p WHERE p MATCH ? ORDER BY bm25(p), rowid LIMIT ?", (query, k))
        return [(self._paragraphs[int(rowid) - 1].file,) for (rowid,) in rows]

    def close(self) -> None:
        self._db.close()


class Bm25s:
    name = "bm25s"
    label = "bm25s, paragraphs, English stop words"

    def __init__(self, paragraphs: list[Paragraph]) -> None:
        self._paragraphs = paragraphs
        corpus = bm25s.tokenize([p.text for p in paragraphs], stopwords="en", show_progress=False)
        self._model = bm25s.BM25()
        self._model.index(corpus, show_progress=False)
        self._vocabulary: dict[str, int] = dict(self._model.vocab_dict)

    def rank(self, question: str, k: int = TOP_K) -> list[tuple[str, ...]]:
        (tokens,) = bm25s.tokenize([question], stopwords="en", return_ids=False, show_progress=False)
        known = [token for token in tokens if token in self._vocabulary]
        if not known:
            return []
        scores = self._model.get_scores(known)
        order = sorted((-float(score), i) for i, score in enumerate(scores) if score > 0)
        return [(self._paragraphs[i].file,) for _, i in order[:k]]

    def close(self) -> None:
        return None
