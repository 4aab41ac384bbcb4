"""The question files: ``benchmarks/eval/questions/<set>.yaml``, read and held to their shape.

A file is a mapping with ``set`` (the set's name) and ``questions``: a list of mappings, each with
``question`` (text), ``kind`` (one of :data:`KINDS`), ``files`` (a non-empty list of distinct paths
relative to the set's root, written with ``/``, none leaving the root) and ``phrase`` (a short phrase
of the answer as the documentation says it). Nothing else is allowed, so a typo is an error rather
than a question silently scored without its label.

:func:`parse` checks the shape alone (what the unit tests hold); :func:`check_against` checks the
questions against the fetched files: every ``files`` entry exists and the phrase is in one of
them (white space folded, case aside), which the runner does before any system is asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

KINDS = ("docs_words", "own_words", "named")
"""The three kinds of question, in the order the tables list them."""

FIELDS = frozenset({"question", "kind", "files", "phrase"})
QUESTIONS = Path(__file__).parent / "questions"


class QuestionError(ValueError):
    """A question file that does not hold to its shape, or a question its set cannot answer."""


@dataclass(frozen=True)
class Question:
    number: int
    """1-based position in its file."""
    question: str
    kind: str
    files: tuple[str, ...]
    phrase: str


def _text(entry: dict[str, Any], field: str, where: str) -> str:
    value = entry.get(field)
    if not isinstance(value, str) or not value.strip():
        raise QuestionError(f"{where}: {field} must be non-empty text")
    return value.strip()


def _files(entry: dict[str, Any], where: str) -> tuple[str, ...]:
    value = entry.get("files")
    if not isinstance(value, list) or not value:
        raise QuestionError(f"{where}: files must be a non-empty list")
    files: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise QuestionError(f"{where}: every file must be non-empty text")
        path = PurePosixPath(item)
        if path.is_absolute() or "\\" in item or any(part in ("..", ".") for part in path.parts):
            raise QuestionError(f"{where}: {item!r} is not a path relative to the set's root")
        if path.as_posix() != item:
            raise QuestionError(f"{where}: {item!r} is not written as {path.as_posix()!r}")
        if item in files:
            raise QuestionError(f"{where}: {item!r} is listed twice")
        files.append(item)
    return tuple(files)


def parse(document: Any, expected_set: str | None = None) -> list[Question]:
    """The questions of one file's parsed YAML, in order; :class:`QuestionError` names what is wrong."""
    if not isinstance(document, dict) or set(document) != {"set", "questions"}:
        raise QuestionError("a question file is a mapping of exactly: set, questions")
    if expected_set is not None and document["set"] != expected_set:
        raise QuestionError(f"the file is for set {document['set']!r}, not {expected_set!r}")
    entries = document["questions"]
    if not isinstance(entries, list) or not entries:
        raise QuestionError("questions must be a non-empty list")
    found: list[Question] = []
    seen: set[str] = set()
    for number, entry in enumerate(entries, 1):
        where = f"question {number}"
        if not isinstance(entry, dict):
            raise QuestionError(f"{where}: must be a mapping")
        if set(entry) != FIELDS:
            missing, extra = sorted(FIELDS - set(entry)), sorted(set(entry) - FIELDS)
            raise QuestionError(f"{where}: fields must be {sorted(FIELDS)} (missing {missing}, unknown {extra})")
        text = _text(entry, "question", where)
        if text.casefold() in seen:
            raise QuestionError(f"{where}: asked twice")
        seen.add(text.casefold())
        kind = _text(entry, "kind", where)
        if kind not in KINDS:
            raise QuestionError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
        found.append(Question(number, text, kind, _files(entry, where), _text(entry, "phrase", where)))
    return found


def load(name: str, folder: Path = QUESTIONS) -> list[Question]:
    path = folder / f"{name}.yaml"
    with path.open(encoding="utf-8") as handle:
        document = yaml.safe_load(handle)
    try:
        return parse(document, expected_set=name)
    except QuestionError as error:
        raise QuestionError(f"{path}: {error}") from None


def folded(text: str) -> str:
    """Text with white space folded to single spaces and case aside, for finding a phrase."""
    return re.sub(r"\s+", " ", text).strip().casefold()


def check_against(questions: list[Question], root: Path) -> None:
    """Every question's files exist under ``root`` and its phrase is in one of them."""
    texts: dict[str, str] = {}
    problems: list[str] = []
    for q in questions:
        for name in q.files:
            if name not in texts:
                path = root / name
                texts[name] = folded(path.read_text(encoding="utf-8")) if path.is_file() else ""
                if not path.is_file():
                    problems.append(f"question {q.number}: {name} is not a file of the set")
        if not any(folded(q.phrase) in texts[name] for name in q.files):
            problems.append(f"question {q.number}: the phrase {q.phrase!r} is in none of {', '.join(q.files)}")
    if problems:
        raise QuestionError("; ".join(problems))
