"""Disagreements: the ``dedup_conflict`` stage's rules.

Documented in ``local_engine/README.md`` ("Disagreements"), in the order the stage applies them
to each source of a job:

1. **Supersession.** A document whose frontmatter says ``supersedes: <name>`` (or a list) makes
   each named source of the base ``superseded_by`` it, and that source's statements
   ``Superseded``: served only with ``include_historical``.
2. **The same statement twice.** A statement whose text another source of the base already
   says (case aside) is not kept twice: the first statement gains this source's sentence as
   evidence, and the later row goes.
3. **Said twice, worded differently.** Two statements of different sources with the same
   content words (stop words aside) but different text are a ``duplicate`` disagreement.
4. **Contradictions.** Two statements of different sources with the same subject named in them
   (a heading above is not a claim's subject), where one's
   claim words (content words less dates and numbers, at least :data:`MIN_CLAIM_WORDS`) are all
   in the other's, and each names a value of the same kind (a date, else a number — not a
   reference such as ``#57`` — else a name given for the subject: the last name it says that is
   not the subject) that differs, are a ``contradiction``. The suggested winner is the statement
   of the newer ``document_date``, then the one with more evidence, then the later read; while
   the disagreement is open the other side is ``Disputed``. At most :data:`MAX_COMPARED`
   statements of a subject are compared.
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
40,000 read 14,434 subjects again, one of 100,000 none (docs/benchmarks.md, "An eighth pass")."""
COPY_SIDES = 5
FRONTMATTER = re.compile(r"\A---\n(.*?)\n(?:---|\.\.\.)\n", re.DOTALL)
TOKENS = re.compile(r"[^\W_]+", re.UNICODE)
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


def claim_of(statement: str, subject: str | None, effective_date: str | None) -> dict[str, Any]:
    """What a statement is about (its claim words) and the value it gives."""
    words = _words(statement)
    claim = [w for w in words if w.isalpha() and w not in CALENDAR]
    value = None
    if effective_date:
        value = f"date:{effective_date}"
    else:
        number = NUMBER.search(statement)
        if number is not None and not YEAR.fullmatch(number.group(0)):
            value = f"number:{number.group(0)}"
        elif subject:  # a name given for the subject: the last name it says that is not the subject
            named = [n for n, _, _ in people.names_in(statement, 0, len(statement))]
            others = [n for n in named if people.fold(n) != people.fold(subject)]
            if others and len(named) >= 2:
                value = f"name:{people.fold(others[-1])}"
                said = set(people.fold(others[-1]).split())
                claim = [w for w in claim if w not in said]
    return {
        "subject": (subject or "").lower(),
        "claim": " ".join(dict.fromkeys(claim)),  # each word once: a held claim's size is its spaces
        # the content words as a key (only ever compared whole): a short index, not the words
        "words": hashlib.blake2b(" ".join(sorted(set(words))).encode(), digest_size=8).hexdigest(),
        "value": value,
    }


def claims_of(statements: list[tuple[str, str, str | None]]) -> dict[str, dict[str, Any]]:
    """The claim of each ``(knowledge_id, statement, effective_date)``, by id, as
    :meth:`Detector.statements` makes it."""
    return {
        knowledge_id: claim_of(statement, extraction.subject(statement, ""), effective_date)
        for knowledge_id, statement, effective_date in statements
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
            "SELECT knowledge_id, chunk_id, statement, subject, effective_date, char_start, char_end"
            " FROM statements WHERE source_id = ? AND status = 'Active' ORDER BY char_start",
            (source["source_id"],),
        ).fetchall()
        computed = computed or {}
        claims = []
        for item in items:
            claim = computed.get(item["knowledge_id"])
            if claim is None:
                named = extraction.subject(item["statement"], "")  # named in it: a heading is no claim's subject
                claim = claim_of(item["statement"], named, item["effective_date"])
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
                "SELECT c.knowledge_id, c.words, s.statement FROM"
                f" (SELECT knowledge_id FROM claim_words WHERE ref = ?1 AND words IN ({keys})"
                f" UNION SELECT knowledge_id FROM claim_words_fresh WHERE ref = ?1 AND words IN ({keys})) k"
                " JOIN claims c USING (knowledge_id) JOIN statements s USING (knowledge_id)"
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
        for other in held:
            if other["statement"].lower() == item["statement"].lower():
                self._merge(source, item, other["knowledge_id"])
                return True
            self._open(
                "duplicate",
                [other["knowledge_id"], item["knowledge_id"]],
                f"{item['subject'] or extraction.title(other['statement'], 60)}, said twice",
                "Archive the duplicate: both say the same thing in other words.",
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
            won = self._winner(sides)
            wording = other.padded if other.size <= len(mine) else claim["claim"]
            subject_words = set(claim["subject"].split())
            about = " ".join(w for w in wording.split() if w not in subject_words)
            subject = item["subject"] or held.name
            dated = f" ({won['document_date']})" if won["document_date"] else ""
            self._open(
                "contradiction",
                sides,
                f"{subject} {about}".strip(),
                f"Keep the statement of {won['name']}{dated}, the newer document, and archive the other.",
                won["knowledge_id"],
            )

    def _winner(self, sides: list[str]) -> sqlite3.Row:
        """Newer ``document_date``, then more evidence, then the later read: the winning one of the
        two sides, with its source's name and date (both read in one query)."""
        ranked = self.db.execute(
            "SELECT i.knowledge_id, s.name, s.document_date, i.rowid AS item_row,"
            " (SELECT COUNT(*) FROM evidence e WHERE e.knowledge_id = i.knowledge_id) AS evidence"
            " FROM statements i JOIN sources s USING (source_id) WHERE i.knowledge_id IN (?, ?)",
            sides,
        ).fetchall()
        won: sqlite3.Row = max(
            ranked, key=lambda row: (row["document_date"] or "", int(row["evidence"]), int(row["item_row"]))
        )
        return won

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
