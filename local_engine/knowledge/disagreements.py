"""Disagreements: the ``dedup_conflict`` stage's rules.

Documented in ``local_engine/README.md`` ("Disagreements"), in the order the stage applies them
to each source of a job. **Precision before recall**: a wrong ``Disputed`` costs a reader more
than a missed disagreement, so two statements disagree only when they make the same claim about
the same thing (measured: ``benchmarks/eval/precision.py``).

1. **Supersession.** A document whose frontmatter says ``supersedes: <name>`` (or a list) makes
   each named source of the base ``superseded_by`` it, and that source's statements
   ``Superseded``: served only with ``include_historical``.
2. **The same statement twice.** A statement whose text another source of the base already
   says is not kept twice: the first statement gains this source's sentence as evidence, and the
   later row goes. The same text is compared as a reader reads it: case, punctuation and markup
   aside (:func:`plain`: a link or an image as its text, a role, a badge, an address, the marks of
   code and emphasis left out; three words at least when the texts differ), so a changelog and
   the ``PKG-INFO`` that embeds it say each entry once.
3. **Said twice, worded differently.** Two statements of different sources with the same
   content words (stop words aside; an identifier is one word: ``module_import`` is not
   ``module``) but different text are a ``duplicate`` disagreement, unless either is of a series
   (below), is an image or a badge, introduces what follows (``For example, the following
   configuration:``), has fewer than :data:`MIN_DUPLICATE_WORDS` content words, or denies what the
   other says (``is not supported`` against ``is supported``).
4. **Contradictions.** Two statements of different sources about the same **subject with its
   qualifiers** (:func:`qualify`: the version or number written right after the subject —
   ``Heron 2.0``, ``Tutorial 3`` — and every ``version 2.1``, ``release 3``, ``edition …``,
   ``step 4`` the statement names; a name that starts the sentence with a version is its subject;
   a heading above is not a claim's subject), where one's claim words (content words less dates
   and numbers, at least :data:`MIN_CLAIM_WORDS`) are all in the other's, and each names a value
   of the same kind (a date, else a number outside the qualifiers — not a year, not a reference
   such as ``#57`` — else a name given for the subject: the last name it says that is not the
   subject) that differs, are a ``contradiction``. No value, so no contradiction, for a
   statement of a **series** (:func:`series`: its file is release notes, a changelog, history,
   news, ``whatsnew``, a blog post, or named as a version — ``2.1.md`` —, or it stands under a
   version's heading — ``## 2.1.0``, ``Changelog``: each says what held for its release), for a
   hedged one (``might``, ``probably``, ``may`` in lower case) and for an image. The suggested
   winner is the statement of the newer ``document_date``, then the one with more evidence, then
   the later read, and ``suggested_resolution`` says which of the three decided it (the last:
   check both); while the disagreement is open the other side is ``Disputed``. At most
   :data:`MAX_COMPARED` statements of a subject are compared.
5. **Copies.** A byte-for-byte copy of a source already held (found at registration) is a
   ``duplicate`` disagreement naming both sources; its sides are the original's first statements.

Every disagreement's id is a function of what it is about, so a re-read finds the one already
decided and keeps its decision.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import yaml

from local_engine.ingestion import extraction
from local_engine.knowledge import people
from local_engine.store.database import CLAIM_LIVE, file_words

MIN_CLAIM_WORDS = 3
MAX_COMPARED = 100
CACHED = 150
"""How many of a subject's held claims :class:`HeldCache` keeps: enough that the first
:data:`MAX_COMPARED` of other sources are among them unless the source asking holds a third."""
CACHE_CLAIMS = 100_000
"""The most claims :class:`HeldCache` keeps (about 40 MiB). Below what a job asks over and over it
only churns: at 50 MB the generated corpus's 1,945 subjects hold 74,000 (29.6 MiB), and a cache of
40,000 read 14,434 subjects again, one of 100,000 none (docs/history/benchmarks.md, "An eighth pass")."""
COPY_SIDES = 5
FRONTMATTER = re.compile(r"\A---\n(.*?)\n(?:---|\.\.\.)\n", re.DOTALL)
TOKENS = re.compile(r"[^\W_]+", re.UNICODE)
IDENTIFIERS = re.compile(r"\w+")
"""A statement's words as its content-word key counts them: ``module_import`` is not ``module``."""
NUMBER = re.compile(r"(?<![\w.#])\d+(?:[.,:]\d+)*(?![\w])")  # "#57" is a reference (an issue), not a value
YEAR = re.compile(r"(19|20)\d\d")
STOP_WORDS = {
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "from", "with", "by", "as",
    "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "there",
    "after", "before", "into", "onto", "than", "then", "so", "not", "no", "has", "have", "had", "do", "does",
    "did", "will", "shall", "would", "should", "can", "could", "may", "might", "must", "we", "our", "you",
    "your", "they", "their", "he", "she", "his", "her", "i", "me", "my", "which", "who", "whom", "what",
}  # fmt: skip
CALENDAR = set(extraction.MONTHS)
MIN_DUPLICATE_WORDS = 5
"""Content words a statement needs to be a duplicate of another (``For example, the following
configuration:`` says nothing twice)."""
MARKUP = (
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # an image: its text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # a Markdown link: its text
    (re.compile(r"`([^`<]*?)\s*<[^>`]*>`_{0,2}"), r"\1"),  # a reST link: its text
    (re.compile(r"<(?:https?|mailto|ftp):[^>\s]*>"), ""),
    (re.compile(r"\b(?:https?|ftp)://\S+"), ""),
    (re.compile(r":[\w-]+:`([^`]*)`"), r"\1"),  # a reST role: its text
    (re.compile(r"\|[\w -]{1,40}\|_{0,2}"), ""),  # a reST substitution (a badge)
    (re.compile(r"[`*]+"), ""),
)
"""Markup a plain-text file keeps, taken out before two statements are compared."""
MARKS = ("`", "*", "|", "[", "<", "://")
"""What every pattern of :data:`MARKUP` needs: a statement without any is left as it is."""
IMAGE = re.compile(r"(?:\bimage|\bfigure)::|:(?:alt|target):|!\[[^\]]*\]\(")
"""A statement that is an image (or a badge) says nothing to compare."""
IMAGE_HINTS = ("::", ":alt", ":target", "![")
"""What every image :data:`IMAGE` finds holds (looked for before the pattern is run)."""
SERIES = re.compile(
    r"(?i)(?:^|/)(?:changes|changelog|change[-_]log|history|news|releases?|release[-_]?notes|whatsnew|"
    r"whats[-_]new|upgrading|blog|posts|announcements?)(?:[-_.][^/]*)?(?:/|$)"
    r"|(?:^|/)(?:v|version[-_]?|release[-_]?)?\d+(?:\.\d+)+(?:\.[a-z]{1,4})?$"
)
"""Files that are one version of a series: release notes, changelogs, history, news, blog posts
(by their name or their folder's), or a file named as a version (``3.1.rst``, ``release-2.0.md``;
a date is no version: ``2026-03-04-steering.md`` is a meeting's notes)."""
VERSION_HEADING = re.compile(
    r"(?i)(?:^|›\s*)(?:v|version\s+|release\s+|changes\s+in\s+\S+\s+|what'?s\s+new\s+in\s+\S+\s+|\S+\s+)?"
    r"\d+(?:\.\d+)+\b|(?:^|›\s*)(?:changelog|changes|release\s+notes|history|news)\b"
)
"""A heading that opens one version's notes (``2.1.0 (2024-05-01)``, ``Version 0.21``,
``Changelog``): the statements under it belong to a series."""
QUALIFIER_AFTER = re.compile(r"[ \t]+((?:v|version[ \t]+)?\d+(?:\.\d+)*(?:[a-z]\w*)?|[IVX]{1,4})\b")
VERSIONED_START = re.compile(r"([A-Z][\w-]+)[ \t]+v?\d+(?:\.\d+)+\b")
QUALIFIER = re.compile(
    r"\b(?:[Vv]ersion|[Rr]elease|[Ee]dition|[Ss]tep|[Pp]art|[Pp]hase|[Cc]hapter|[Tt]utorial|[Ll]esson|[Ss]tage"
    r"|[Mm]ilestone|[Ss]print|[Rr]ound|[Ww]eek)[ \t]+(?:v?\d+(?:\.\d+)*\w*|[IVX]{1,4}\b|[A-Z]\w*)"
)
"""What qualifies a subject, written anywhere in the statement (``version 2.1``, ``step 4``)."""
QUALIFIER_WORDS = frozenset(
    {"version", "release", "edition", "step", "part", "phase", "chapter", "tutorial", "lesson", "stage", "milestone",
     "sprint", "round", "week"}
)  # fmt: skip
"""The words of :data:`QUALIFIER`, in lower case."""
HEDGED = re.compile(
    r"\b(?:might|could|possibly|probably|perhaps|likely|maybe|unclear|roughly|approximately|tentative(?:ly)?"
    r"|may)\b(?![ \t]+\d)"
)
"""A hedge (``may`` in lower case: ``May 6`` is a date): a hedged statement claims nothing firmly."""
HEDGE_WORDS = frozenset(
    {"might", "could", "possibly", "probably", "perhaps", "likely", "maybe", "unclear", "roughly", "approximately",
     "tentative", "tentatively", "may"}
)  # fmt: skip
"""The words of :data:`HEDGED`: a statement without any is not searched for it."""
NEGATION = re.compile(r"(?i)\b(?:not|no|never|cannot|without|none|neither|nor)\b|n['’]t\b")
HELD = "c.ref = ? AND c.source_id != ? AND c.live"
"""Other sources' live claims (their statements ``Active`` or ``Disputed``, kept so by the
store's triggers): the rules add which, and their order."""
KEEP_CLAIM = (
    "INSERT OR REPLACE INTO claims (knowledge_id, ref, source_id, subject, claim, words, value, live)"
    f" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, {CLAIM_LIVE.format(id='?1')})"
)
"""A statement's claim kept, ``live`` as its statement is now (a settled side may be archived)."""
KEEP_LIVE_CLAIM = (
    "INSERT OR REPLACE INTO claims (knowledge_id, ref, source_id, subject, claim, words, value, live)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1)"
)
""":data:`KEEP_CLAIM` for claims whose statements are known to be in play: a source's statements
are read ``Active``, and until a settled disagreement archives a side (:attr:`Detector.archived`)
the rules only delete one (merged: its claim is not kept) or make it ``Disputed`` (in play), so
each one's status need not be looked up again."""


def keep_claims(db: sqlite3.Connection, rows: list[tuple[Any, ...]], *, in_play: bool = False) -> None:
    """Claims kept (:data:`KEEP_CLAIM`'s rows) with their content-word keys (``store.WORDS``),
    the keys filed when enough are fresh. ``in_play``: every row's statement is known to be in
    play (:data:`KEEP_LIVE_CLAIM`)."""
    db.executemany(KEEP_LIVE_CLAIM if in_play else KEEP_CLAIM, rows)
    db.executemany(
        "INSERT OR IGNORE INTO claim_words_fresh (ref, words, knowledge_id) VALUES (?, ?, ?)",
        [(ref, words, knowledge_id) for knowledge_id, ref, _, _, _, words, _ in rows],
    )
    file_words(db)


class Held(NamedTuple):
    """A claim another source holds: its words are split again at each comparison rather than
    kept as a set (a source compares a hundred claims of each subject it names, most of them once
    or twice)."""

    knowledge_id: str
    padded: str  # the claim's words with a space on each side: a word is in it when " word " is
    value: str
    size: int  # how many words (a claim's words are distinct: see :func:`claim_of`)


def held_claims(rows: Iterable[tuple[str, str, str]]) -> list[Held]:
    """Claims as read, ``(id, claim, value)``, held for comparing: each with its size, and each
    value once (a subject's claims give few)."""
    values: dict[str, str] = {}
    return [
        Held(knowledge_id, f" {claim} ", values.setdefault(value, value), claim.count(" ") + 1 if claim else 0)
        for knowledge_id, claim, value in rows
    ]


class Subject:
    """What other sources hold on one subject: the first :data:`MAX_COMPARED` claims giving a
    value for it, in the order they were held."""

    def __init__(self, name: str, claims: list[Held]) -> None:
        self.name = name
        self.claims = claims
        self._joined: str | None = None  # every claim's padded words end to end, made when first asked

    def nested(self, words: set[str]) -> Iterator[Held]:
        """The held claims that with these words make a pair one of whose words are all in the
        other's, the smaller of at least :data:`MIN_CLAIM_WORDS`, in the order they were held."""
        size = len(words)
        # A word is in a claim when it stands whole between the spaces that join the claim's words
        # (a word has none): no list of the claim's words is made to ask.
        probes = [f" {word} " for word in words]
        if self._joined is None:
            self._joined = "".join(held.padded for held in self.claims)
        # A held claim holding all these words holds each of them somewhere in the claims end to
        # end (a probe cannot span two: a word has no space): when one is in none, no larger held
        # claim can nest these words, and only the smaller ones are asked (86% of the calls at 50 MB).
        joined = self._joined
        larger = size >= MIN_CLAIM_WORDS and all(probe in joined for probe in probes)
        for held in self.claims:
            if size <= held.size:
                if larger:
                    padded = held.padded
                    for probe in probes:
                        if probe not in padded:
                            break
                    else:
                        yield held
            elif held.size >= MIN_CLAIM_WORDS:
                padded = held.padded
                # its last word first (a slice, not a list): held claims are rarely all in this one
                if padded[padded.rindex(" ", 0, -1) + 1 : -1] in words and words.issuperset(padded.split()):
                    yield held


class HeldCache:
    """What other sources hold on each subject, kept from one source of a stage to the next, so a
    common subject is not read again for every source that names it: the first :data:`CACHED`
    live claims giving a value for the subject, in the order they were held, whichever source
    holds them (a source asking leaves its own out). At most :data:`CACHE_CLAIMS` claims in all:
    the subjects asked least recently go first.

    Exact, or not used: a source is answered from the cache only when it holds the source's first
    :data:`MAX_COMPARED` claims of other sources, or every claim of the subject. What changes the
    held claims changes the cache: a source's kept claims join the subjects whose claims are all
    here (they are held last), a subject holding a claim of the source is read again (kept again,
    the claim moves to the end), an archived side empties it, and so does any other transaction
    between two sources (the stage watches ``Store.commits``)."""

    def __init__(self, limit: int = 0) -> None:
        self.limit = limit or CACHE_CLAIMS
        self.size = 0
        self.kept: OrderedDict[str, Kept] = OrderedDict()  # by subject, the least recently asked first

    def clear(self) -> None:
        self.kept.clear()
        self.size = 0

    def held(self, subject: str, source_id: str) -> list[Held] | None:
        """The subject's first :data:`MAX_COMPARED` claims of other sources than this one, or None
        when the cache cannot say."""
        entry = self.kept.get(subject)
        if entry is None:
            return None
        self.kept.move_to_end(subject)
        claims = entry.claims
        if source_id in entry.sources:
            claims = [held for held, owner in zip(claims, entry.owners, strict=True) if owner != source_id]
        return claims[:MAX_COMPARED] if entry.complete or len(claims) >= MAX_COMPARED else None

    def keep(self, subject: str, rows: list[tuple[str, str, str, str]]) -> None:
        """A subject's first claims as read, ``(id, claim, value, source id)``: all of them when
        fewer than :data:`CACHED`."""
        self._drop(subject)
        claims = held_claims(row[:3] for row in rows)
        self.kept[subject] = Kept(claims, [row[3] for row in rows], {row[3] for row in rows}, len(rows) < CACHED)
        self.size += len(rows)
        self._fit()

    def written(self, source_id: str, kept: list[tuple[Any, ...]]) -> None:
        """A source's claims were kept (:data:`KEEP_CLAIM`'s rows, in the order written, every one
        live: the caller empties the cache instead when a side of the source was archived)."""
        by_subject: dict[str, list[tuple[Any, ...]]] = {}
        for row in kept:
            if row[6] is not None:
                by_subject.setdefault(row[3], []).append(row)
        for subject, entry in list(self.kept.items()):
            if source_id in entry.sources:
                self._drop(subject)
            elif entry.complete and subject in by_subject:  # held after every claim here
                room = CACHED - len(entry.claims)
                added = by_subject[subject]
                entry.claims += held_claims((r[0], r[4], r[6]) for r in added[:room])
                entry.owners += [source_id] * len(added[:room])
                entry.sources.add(source_id)
                entry.complete = len(added) < room
                self.size += len(added[:room])
        self._fit()

    def _fit(self) -> None:
        while self.size > self.limit and self.kept:
            self._drop(next(iter(self.kept)))

    def _drop(self, subject: str) -> None:
        entry = self.kept.pop(subject, None)
        if entry is not None:
            self.size -= len(entry.claims)


@dataclass(slots=True)
class Kept:
    """A subject's first claims in :class:`HeldCache`, the source of each, and whether they are
    all the subject's."""

    claims: list[Held]
    owners: list[str]
    sources: set[str]
    complete: bool


def _words(statement: str) -> list[str]:
    return [w for w in map(str.lower, TOKENS.findall(statement)) if w not in STOP_WORDS]


def marked(statement: str) -> bool:
    return any(mark in statement for mark in MARKS)


def strip_markup(statement: str) -> str:
    """A statement as a reader reads it: links and images as their text, link targets, bare
    addresses, roles and substitutions left out (a plain-text file keeps its markup)."""
    if not marked(statement):
        return statement  # most statements: no mark any pattern needs
    for pattern, replacement in MARKUP:
        statement = pattern.sub(replacement, statement)
    return statement


def plain(statement: str, stripped: str | None = None) -> str:
    """What a statement says, compared: its words in order, markup and punctuation aside
    (``stripped``: its markup already taken out)."""
    return " ".join(TOKENS.findall((stripped if stripped is not None else strip_markup(statement)).lower()))


def series(source_name: str, heading: str | None = None) -> bool:
    """Whether a statement belongs to one version of a series: its file is release notes, a
    changelog, history, news, ``whatsnew`` or a post of a blog (by its name or folder), named as a
    version, or the statement stands under a version's heading (``## 2.1.0``, ``Release 0.21``)."""
    return bool(SERIES.search(source_name) or (heading and VERSION_HEADING.search(heading)))


def subject_of(statement: str) -> str | None:
    """The statement's subject (``extraction.subject``), or a name that starts it with a version
    (``Heron 2.0 needs …``: one capitalised word starting a sentence is otherwise no subject)."""
    named = extraction.subject(statement, "")
    if named is None:
        versioned = VERSIONED_START.match(statement)
        named = versioned.group(1) if versioned else None
    return named


def qualify(statement: str, subject: str, words: Iterable[str] = QUALIFIER_WORDS) -> tuple[str, list[tuple[int, int]]]:
    """The subject with its qualifiers, and where they stand: the version or number written right
    after the subject (``Heron 2.0``, ``Tutorial 3``) and every ``version 2.1``, ``step 4``,
    ``edition``… the statement names, so ``2.0 supports …`` and ``2.1 supports …`` are two subjects.
    ``words``: the statement's words in lower case, when known (none of :data:`QUALIFIER_WORDS`:
    no qualifier to look for)."""
    parts = [subject]
    spans: list[tuple[int, int]] = []
    at = statement.find(subject) if subject else -1
    if at >= 0:
        after = QUALIFIER_AFTER.match(statement, at + len(subject))
        if after is not None:
            parts.append(after.group(1))
            spans.append(after.span(1))
    for named in QUALIFIER.finditer(statement) if not QUALIFIER_WORDS.isdisjoint(words) else ():
        if not any(s <= named.start() < e for s, e in spans):
            parts.append(named.group(0))
            spans.append(named.span())
    return " ".join(parts), spans


def _value(statement: str, subject: str | None, spans: list[tuple[int, int]]) -> tuple[str | None, set[str]]:
    """The value a statement gives (a number outside its subject's qualifiers, not a year, not a
    reference; else a name given for the subject), and the words of a name given."""
    number = NUMBER.search(statement)
    while number is not None and any(s <= number.start() < e for s, e in spans):
        number = NUMBER.search(statement, number.end())
    if number is not None:
        return (None if YEAR.fullmatch(number.group(0)) else f"number:{number.group(0)}"), set()
    if subject:  # a name given for the subject: the last name it says that is not the subject
        named = [n for n, _, _ in people.names_in(statement, 0, len(statement))]
        others = [n for n in named if people.fold(n) != people.fold(subject)]
        if others and len(named) >= 2:
            return f"name:{people.fold(others[-1])}", set(people.fold(others[-1]).split())
    return None, set()


def claim_of(
    statement: str, subject: str | None, effective_date: str | None, in_series: bool = False
) -> dict[str, Any]:
    """What a statement is about (its qualified subject and claim words) and the value it gives.
    A statement of a series, a hedged one or an image gives no value: it contradicts nothing."""
    text = strip_markup(statement)
    tokens = [w.lower() for w in TOKENS.findall(text)]  # read once: the words, the key and the plain text
    words = [w for w in tokens if w not in STOP_WORDS]
    key = {w for w in map(str.lower, IDENTIFIERS.findall(text)) if w not in STOP_WORDS} if "_" in text else set(words)
    claim = [w for w in words if w.isalpha() and w not in CALENDAR]
    label, spans = qualify(text, subject or "", tokens)
    value = None
    hedged = not HEDGE_WORDS.isdisjoint(tokens) and HEDGED.search(text) is not None
    image = any(hint in statement for hint in IMAGE_HINTS) and IMAGE.search(statement) is not None
    if in_series or hedged or image:
        pass
    elif effective_date:
        value = f"date:{effective_date}"
    else:
        value, said = _value(text, subject, spans)
        claim = [w for w in claim if w not in said]
    return {
        "subject": label.lower().strip(),
        "label": label.strip(),
        "plain": " ".join(tokens),
        "claim": " ".join(dict.fromkeys(claim)),  # each word once: a held claim's size is its spaces
        # the content words as a key (only ever compared whole): a short index, not the words
        "words": hashlib.blake2b(" ".join(sorted(key)).encode(), digest_size=8).hexdigest(),
        "value": value,
        "series": in_series,
    }


def claims_of(statements: list[tuple[str, str, str | None, str | None]], source_name: str = ""
              ) -> dict[str, dict[str, Any]]:  # fmt: skip
    """The claim of each ``(knowledge_id, statement, effective_date, heading)`` of one source, by
    id, as :meth:`Detector.statements` makes it."""
    return {
        knowledge_id: claim_of(statement, subject_of(statement), effective_date, series(source_name, heading))
        for knowledge_id, statement, effective_date, heading in statements
    }


def supersedes(text: str) -> list[str]:
    """The names a document's frontmatter says it supersedes."""
    match = FRONTMATTER.match(text)
    if match is None:
        return []
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return []
    named = data.get("supersedes") if isinstance(data, dict) else None
    if isinstance(named, str):
        return [named]
    return [str(n) for n in named if isinstance(n, str | int)] if isinstance(named, list) else []


class Detector:
    """The rules over one base, writing in the stage's transaction ``db``."""

    def __init__(
        self,
        db: sqlite3.Connection,
        short_id: Any,
        ref: str,
        at: str,
        locate: Any,
        evidence_id: Any,
        cache: HeldCache | None = None,
    ) -> None:
        self.db = db
        self.short_id = short_id
        self.ref = ref
        self.at = at
        self.locate = locate  # (source row, start) -> (line, location): provenance's own rule
        self.evidence_id = evidence_id  # (statement id, source id, start) -> id: provenance's own rule
        self.cache = cache  # other sources' held claims, kept from the source before (None: read each)
        self.found = 0
        self.archived = False  # a settled disagreement archived a side
        self.held: dict[str, Subject] = {}  # by name: those open at this point of a source's text

    # -- 1. supersession ---------------------------------------------------------------------

    def supersede(self, source: sqlite3.Row) -> None:
        for name in supersedes(source["text"] or ""):
            for old in self.db.execute(
                "SELECT source_id FROM sources WHERE ref = ? AND source_id != ? AND (name = ? OR relative_path = ?"
                " OR relative_path LIKE ?)",
                (self.ref, source["source_id"], name, name, "%/" + name),
            ).fetchall():
                self.db.execute(
                    "UPDATE sources SET superseded_by = ? WHERE source_id = ?", (source["source_id"], old[0])
                )
                self.db.execute(
                    "UPDATE statements SET status = 'Superseded'"
                    " WHERE source_id = ? AND status IN ('Active', 'Disputed')",
                    (old[0],),
                )
                self.db.execute("DELETE FROM claims WHERE source_id = ?", (old[0],))

    # -- 2.-4. statements ----------------------------------------------------------------------

    def statements(self, source: sqlite3.Row, computed: dict[str, dict[str, Any]] | None = None) -> None:
        """Rules 2–4 for a source's ``Active`` statements; ``computed`` holds claims already made
        (:func:`claims_of`, in a worker), by statement id: a claim is a function of its statement's
        text, which its id names, so it is the same whenever it was made."""
        items = self.db.execute(
            "SELECT s.knowledge_id, s.chunk_id, s.statement, s.subject, s.effective_date, s.char_start, s.char_end,"
            " c.heading FROM statements s LEFT JOIN chunks c ON c.chunk_id = s.chunk_id"
            " WHERE s.source_id = ? AND s.status = 'Active' ORDER BY s.char_start",
            (source["source_id"],),
        ).fetchall()
        computed = computed or {}
        claims = []
        for item in items:
            claim = computed.get(item["knowledge_id"])
            if claim is None:
                named = subject_of(item["statement"])  # named in it: a heading is no claim's subject
                in_series = series(source["name"], item["heading"])
                claim = claim_of(item["statement"], named, item["effective_date"], in_series)
            claims.append((item, claim))
        # What other sources hold (a statement of this one never compares with its own): the
        # content-word keys read once a source, a subject's claims at its first statement and let
        # go after its last, so only the subjects open at one point of the text are held. A read
        # late in the loop sees what one at its start would: the loop deletes only this source's
        # statements, and a settled disagreement archives only sides of the subject being compared.
        by_words = self._held_by_words({c["words"] for _, c in claims}, source["source_id"])
        last = {c["subject"]: index for index, (_, c) in enumerate(claims) if c["value"] and c["subject"]}
        self.held = {}
        kept = []
        for index, (item, claim) in enumerate(claims):
            subject = claim["subject"] if claim["value"] else ""
            if not self._same(source, item, claim, by_words.get(claim["words"], [])):
                kept.append(
                    (item["knowledge_id"], self.ref, source["source_id"], claim["subject"], claim["claim"],
                     claim["words"], claim["value"])
                )  # fmt: skip
                if subject:
                    if subject not in self.held:
                        self.held[subject] = self._held_by_subject(subject, source["source_id"])
                    self._contradictions(item, claim, self.held[subject])
            if subject and last[subject] == index:
                self.held.pop(subject, None)
        keep_claims(self.db, kept, in_play=not self.archived)
        if self.cache is not None and self.archived:
            self.cache.clear()  # a side archived in this source: its kept claims may not all be live
        elif self.cache is not None:
            self.cache.written(source["source_id"], kept)

    def _held_by_words(self, values: set[str], source_id: str) -> dict[str, list[sqlite3.Row]]:
        """Other sources' live claims with one of these content-word keys (filed or fresh, see
        ``store.WORDS``): the first :data:`MAX_COMPARED` of each, in the order they were held. A
        key is rarely held at all, so a source's keys are asked in batches (one query for
        hundreds)."""
        found: dict[str, list[sqlite3.Row]] = {}
        ordered = sorted(values)
        for start in range(0, len(ordered), 500):
            batch = ordered[start : start + 500]
            keys = ",".join(f"?{number}" for number in range(3, len(batch) + 3))
            for row in self.db.execute(
                "SELECT c.knowledge_id, c.words, s.statement, src.name AS source_name, ch.heading FROM"
                f" (SELECT knowledge_id FROM claim_words WHERE ref = ?1 AND words IN ({keys})"
                f" UNION SELECT knowledge_id FROM claim_words_fresh WHERE ref = ?1 AND words IN ({keys})) k"
                " JOIN claims c USING (knowledge_id) JOIN statements s USING (knowledge_id)"
                " JOIN sources src ON src.source_id = c.source_id LEFT JOIN chunks ch ON ch.chunk_id = s.chunk_id"
                " WHERE c.ref = ?1 AND c.source_id != ?2 AND c.live ORDER BY c.rowid",
                (self.ref, source_id, *batch),
            ):
                kept = found.setdefault(row["words"], [])
                if len(kept) < MAX_COMPARED:
                    kept.append(row)
        return found

    def _held_by_subject(self, subject: str, source_id: str) -> Subject:
        """Other sources' live claims giving a value for this subject: the first
        :data:`MAX_COMPARED`, in the order they were held. The query stops at the limit: a common
        subject's claims (a project every document dates) grow with the base, and reading them all
        made the stage quadratic."""
        read = self.db.cursor()
        read.row_factory = None  # plain tuples: a hundred rows a read, millions in a large batch
        if self.cache is not None:
            held = self.cache.held(subject, source_id)
            if held is None:
                self.cache.keep(
                    subject,
                    read.execute(
                        "SELECT c.knowledge_id, c.claim, c.value, c.source_id FROM claims c WHERE c.ref = ?"
                        f" AND c.live AND c.subject = ? AND c.value IS NOT NULL ORDER BY c.rowid LIMIT {CACHED}",
                        (self.ref, subject),
                    ).fetchall(),
                )
                held = self.cache.held(subject, source_id)
            if held is not None:
                return Subject(subject, held)
        rows = read.execute(
            f"SELECT c.knowledge_id, c.claim, c.value FROM claims c WHERE {HELD}"
            f" AND c.subject = ? AND c.value IS NOT NULL ORDER BY c.rowid LIMIT {MAX_COMPARED}",
            (self.ref, source_id, subject),
        ).fetchall()
        return Subject(subject, held_claims(rows))

    def _same(self, source: sqlite3.Row, item: sqlite3.Row, claim: dict[str, Any], held: list[sqlite3.Row]) -> bool:
        """Rules 2 and 3; True when the statement was merged into one already held."""
        said = claim.get("plain") or plain(item["statement"])
        for other in held:
            theirs = other["statement"]
            # the same text, or the same words in order (three or more): markup and punctuation aside
            if theirs.lower() == item["statement"].lower() or (said.count(" ") >= 2 and plain(theirs) == said):
                self._merge(source, item, other["knowledge_id"])
                return True
        for other in held:
            if restated(item["statement"], claim["series"], other):
                self._open(
                    "duplicate",
                    [other["knowledge_id"], item["knowledge_id"]],
                    f"{item['subject'] or extraction.title(other['statement'], 60)}, said twice",
                    f"Archive the duplicate: {other['source_name']} says the same thing in other words.",
                    None,
                )
        return False

    def _merge(self, source: sqlite3.Row, item: sqlite3.Row, kept: str) -> None:
        line, where = self.locate(source, item["char_start"])
        excerpt = (source["text"] or "")[item["char_start"] : item["char_end"]]
        self.db.execute(
            "INSERT OR REPLACE INTO evidence (evidence_id, knowledge_id, source_id, chunk_id, char_start, char_end,"
            " line, location, excerpt_hash, extractor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.evidence_id(kept, source["source_id"], item["char_start"]),
                kept,
                source["source_id"],
                item["chunk_id"],
                item["char_start"],
                item["char_end"],
                line,
                where,
                extraction.excerpt_hash(excerpt),
                extraction.EXTRACTOR,
            ),
        )
        self.db.execute("UPDATE mentions SET knowledge_id = ? WHERE knowledge_id = ?", (kept, item["knowledge_id"]))
        self.db.execute("DELETE FROM statements WHERE knowledge_id = ?", (item["knowledge_id"],))
        self.found += 1

    def _contradictions(self, item: sqlite3.Row, claim: dict[str, Any], held: Subject) -> None:
        mine = set(claim["claim"].split())
        kind = claim["value"].split(":", 1)[0]
        for other in held.nested(mine):
            if other.value.split(":", 1)[0] != kind or other.value == claim["value"]:
                continue
            sides = [other.knowledge_id, item["knowledge_id"]]
            won, why = self._winner(sides)
            wording = other.padded if other.size <= len(mine) else claim["claim"]
            subject_words = set(claim["subject"].split())
            about = " ".join(w for w in wording.split() if w not in subject_words)
            subject = claim.get("label") or item["subject"] or held.name
            self._open("contradiction", sides, f"{subject} {about}".strip(), why, won)

    def _winner(self, sides: list[str]) -> tuple[str, str]:
        """Newer ``document_date``, then more evidence, then the later read: the winning one of the
        two sides, and the suggested resolution saying which of the three decided it (the sides'
        sources' names and dates read in the same query)."""
        ranked = self.db.execute(
            "SELECT i.knowledge_id, s.name, s.document_date, i.rowid AS item_row,"
            " (SELECT COUNT(*) FROM evidence e WHERE e.knowledge_id = i.knowledge_id) AS evidence"
            " FROM statements i JOIN sources s USING (source_id) WHERE i.knowledge_id IN (?, ?)",
            sides,
        ).fetchall()
        order = sorted(ranked, key=lambda row: (row["document_date"] or "", int(row["evidence"]), int(row["item_row"])))
        lost, won = order[0], order[-1]
        return str(won["knowledge_id"]), resolution(won, lost)

    def _open(self, kind: str, sides: list[str], title: str, resolution: str, winner: str | None) -> None:
        conflict_id = self.short_id("cf", self.ref, kind, *sorted(sides))
        inserted = self.db.execute(
            "INSERT OR IGNORE INTO conflicts (conflict_id, ref, title, type, status, suggested_resolution,"
            " suggested_winner, detected_at) VALUES (?, ?, ?, ?, 'open', ?, ?, ?)",
            (conflict_id, self.ref, title, kind, resolution, winner, self.at),
        ).rowcount
        for position, knowledge_id in enumerate(sides):
            self.db.execute(
                "INSERT OR IGNORE INTO conflict_sides (conflict_id, knowledge_id, position) VALUES (?, ?, ?)",
                (conflict_id, knowledge_id, position),
            )
            self.db.execute(
                "INSERT OR IGNORE INTO conflict_sources (conflict_id, source_id)"
                " SELECT ?, source_id FROM statements WHERE knowledge_id = ?",
                (conflict_id, knowledge_id),
            )
        self.found += inserted
        if kind != "contradiction":
            return  # a duplicate changes no status (settle's rule)
        if inserted:
            # new, so open with its suggested winner, and with these two sides only (a
            # disagreement is never deleted): what settle would read back
            dispute(self.db, sides, winner)
        elif settle(self.db, conflict_id):  # held already: settled as its state says (it may be decided)
            self.archived = True
            if self.cache is not None:
                self.cache.clear()  # an archived side is held no more: every subject is read again

    # -- 5. copies -----------------------------------------------------------------------------

    def copy(self, source: sqlite3.Row) -> None:
        original = self.db.execute("SELECT * FROM sources WHERE source_id = ?", (source["duplicate_of"],)).fetchone()
        if original is None:
            return
        conflict_id = self.short_id("cf", self.ref, "copy", source["source_id"])
        inserted = self.db.execute(
            "INSERT OR IGNORE INTO conflicts (conflict_id, ref, title, type, status, suggested_resolution,"
            " suggested_winner, detected_at) VALUES (?, ?, ?, 'duplicate', 'open', ?, NULL, ?)",
            (
                conflict_id,
                self.ref,
                f"{source['name']} is a copy of {original['name']}",
                f"Archive the copy: {original['name']} says every word of it.",
                self.at,
            ),
        ).rowcount
        for position, row in enumerate(
            self.db.execute(
                "SELECT knowledge_id FROM statements WHERE source_id = ? ORDER BY char_start LIMIT ?",
                (original["source_id"], COPY_SIDES),
            ).fetchall()
        ):
            self.db.execute(
                "INSERT OR IGNORE INTO conflict_sides (conflict_id, knowledge_id, position) VALUES (?, ?, ?)",
                (conflict_id, row[0], position),
            )
        for source_id in (original["source_id"], source["source_id"]):
            self.db.execute(
                "INSERT OR IGNORE INTO conflict_sources (conflict_id, source_id) VALUES (?, ?)",
                (conflict_id, source_id),
            )
        self.found += inserted


def resolution(won: sqlite3.Row, lost: sqlite3.Row) -> str:
    """Why the suggested side is preferred: the criterion that told the two apart."""
    if (won["document_date"] or "") > (lost["document_date"] or ""):
        than = f", against {lost['document_date']} for {lost['name']}" if lost["document_date"] else ""
        return (
            f"Keep the statement of {won['name']} ({won['document_date']}{than}): it is the newer document."
            " Archive the other."
        )
    if int(won["evidence"]) > int(lost["evidence"]):
        return (
            f"Keep the statement of {won['name']}: {won['evidence']} documents say it, against"
            f" {lost['evidence']} for {lost['name']}. Archive the other."
        )
    return (
        f"Keep the statement of {won['name']}, read after {lost['name']}: neither is dated newer nor said"
        " more often, so check both before archiving one."
    )


def restated(statement: str, in_series: bool, other: sqlite3.Row) -> bool:
    """Rule 3: two statements with the same content words are one said twice, unless either is of
    a series (a release note restating the docs is a change's note), an image, an introduction to
    what follows (``… the following configuration:``), says less than
    :data:`MIN_DUPLICATE_WORDS` words, or one denies what the other says."""
    theirs = other["statement"]
    if in_series or series(other["source_name"], other["heading"]):
        return False
    if (
        IMAGE.search(statement)
        or IMAGE.search(theirs)
        or statement.rstrip().endswith(":")
        or theirs.rstrip().endswith(":")
    ):
        return False
    if bool(NEGATION.search(statement)) != bool(NEGATION.search(theirs)):
        return False
    return len(set(map(str.lower, IDENTIFIERS.findall(strip_markup(statement)))) - STOP_WORDS) >= MIN_DUPLICATE_WORDS


def settle(db: sqlite3.Connection, conflict_id: str) -> bool:
    """The sides' statuses as the disagreement's state says: while it is open, every side but the
    suggested winner is ``Disputed``; resolved with a winner, the others are ``Archived``. True
    when sides were archived (so no longer held)."""
    conflict = db.execute("SELECT * FROM conflicts WHERE conflict_id = ?", (conflict_id,)).fetchone()
    if conflict is None or conflict["type"] != "contradiction":
        return False
    sides = [r[0] for r in db.execute("SELECT knowledge_id FROM conflict_sides WHERE conflict_id = ?", (conflict_id,))]
    decision = json.loads(conflict["decision"]) if conflict["decision"] else {}
    if conflict["status"] == "open":
        dispute(db, sides, conflict["suggested_winner"])
    elif decision.get("winner_id"):
        for knowledge_id in sides:
            if knowledge_id != decision["winner_id"]:
                db.execute("UPDATE statements SET status = 'Archived' WHERE knowledge_id = ?", (knowledge_id,))
        return True
    return False


def dispute(db: sqlite3.Connection, sides: list[str], winner: str | None) -> None:
    """An open disagreement's sides as it leaves them: every ``Active`` one but the suggested
    winner ``Disputed``."""
    for knowledge_id in sides:
        if knowledge_id != winner:
            db.execute(
                "UPDATE statements SET status = 'Disputed' WHERE knowledge_id = ? AND status = 'Active'",
                (knowledge_id,),
            )
