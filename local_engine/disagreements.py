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
   in the other's, and each names a value of the same kind (a date, else a number, else a name
   given for the subject: the last name it says that is not the subject) that differs, are a
   ``contradiction``. The suggested winner is the statement of the newer ``document_date``, then
   the one with more evidence, then the later read; while the disagreement is open the other
   side is ``Disputed``. At most :data:`MAX_COMPARED` statements of a subject are compared.
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
from typing import Any, NamedTuple

import yaml

from . import extraction, people

MIN_CLAIM_WORDS = 3
MAX_COMPARED = 100
COPY_SIDES = 5
FRONTMATTER = re.compile(r"\A---\n(.*?)\n(?:---|\.\.\.)\n", re.DOTALL)
TOKENS = re.compile(r"[^\W_]+", re.UNICODE)
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)*(?![\w])")
YEAR = re.compile(r"(19|20)\d\d")
STOP_WORDS = {
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "from", "with", "by", "as",
    "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "there",
    "after", "before", "into", "onto", "than", "then", "so", "not", "no", "has", "have", "had", "do", "does",
    "did", "will", "shall", "would", "should", "can", "could", "may", "might", "must", "we", "our", "you",
    "your", "they", "their", "he", "she", "his", "her", "i", "me", "my", "which", "who", "whom", "what",
}  # fmt: skip
CALENDAR = set(extraction.MONTHS)
HELD = (
    "FROM claims c JOIN statements s USING (knowledge_id)"
    " WHERE c.ref = ? AND c.source_id != ? AND s.status IN ('Active', 'Disputed')"
)
"""Other sources' live claims: the rules add which, and their order."""


class Held(NamedTuple):
    """A claim another source holds, with its claim words as a set (split once, compared often)."""

    row: sqlite3.Row
    words: frozenset[str]


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
        "claim": " ".join(dict.fromkeys(claim)),
        # the content words as a key (only ever compared whole): a short index, not the words
        "words": hashlib.blake2b(" ".join(sorted(set(words))).encode(), digest_size=8).hexdigest(),
        "value": value,
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

    def __init__(self, db: sqlite3.Connection, short_id: Any, ref: str, at: str, locate: Any) -> None:
        self.db = db
        self.short_id = short_id
        self.ref = ref
        self.at = at
        self.locate = locate  # (source row, start) -> (line, location): provenance's own rule
        self.found = 0

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

    def statements(self, source: sqlite3.Row) -> None:
        items = self.db.execute(
            "SELECT * FROM statements WHERE source_id = ? AND status = 'Active' ORDER BY char_start",
            (source["source_id"],),
        ).fetchall()
        claims = []
        for item in items:
            named = extraction.subject(item["statement"], "")  # named in it: a heading is no claim's subject
            claims.append((item, claim_of(item["statement"], named, item["effective_date"])))
        # what other sources hold, read once a source (a statement of this one never compares with its own)
        by_words = self._held_by_words({c["words"] for _, c in claims}, source["source_id"])
        valued = {c["subject"] for _, c in claims if c["value"] and c["subject"]}
        by_subject = self._held_by_subject(valued, source["source_id"])
        kept = []
        for item, claim in claims:
            if self._same(source, item, claim, by_words.get(claim["words"], [])):
                continue
            kept.append(
                (item["knowledge_id"], self.ref, source["source_id"], claim["subject"], claim["claim"],
                 claim["words"], claim["value"])
            )  # fmt: skip
            if claim["value"] and claim["subject"]:
                self._contradictions(item, claim, by_subject.get(claim["subject"], []))
        self.db.executemany(
            "INSERT OR REPLACE INTO claims (knowledge_id, ref, source_id, subject, claim, words, value)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            kept,
        )

    def _held_by_words(self, values: set[str], source_id: str) -> dict[str, list[sqlite3.Row]]:
        """Other sources' live claims with one of these content-word keys: the first
        :data:`MAX_COMPARED` of each, in the order they were held. A key is rarely held at all, so
        a source's keys are asked in batches (one query for hundreds)."""
        found: dict[str, list[sqlite3.Row]] = {}
        ordered = sorted(values)
        for start in range(0, len(ordered), 500):
            batch = ordered[start : start + 500]
            for row in self.db.execute(
                f"SELECT c.knowledge_id, c.words, s.statement {HELD}"
                f" AND c.words IN ({','.join('?' * len(batch))}) ORDER BY c.rowid",
                (self.ref, source_id, *batch),
            ):
                kept = found.setdefault(row["words"], [])
                if len(kept) < MAX_COMPARED:
                    kept.append(row)
        return found

    def _held_by_subject(self, subjects: set[str], source_id: str) -> dict[str, list[Held]]:
        """Other sources' live claims giving a value for one of these subjects: the first
        :data:`MAX_COMPARED` of each, in the order they were held, with their claim words as a set.
        One query a subject, stopping at the limit: a common subject's claims (a project every
        document dates) grow with the base, and reading them all made the stage quadratic."""
        found: dict[str, list[Held]] = {}
        for subject in sorted(subjects):
            rows = self.db.execute(
                f"SELECT c.knowledge_id, c.subject, c.claim, c.value {HELD}"
                f" AND c.subject = ? AND c.value IS NOT NULL ORDER BY c.rowid LIMIT {MAX_COMPARED}",
                (self.ref, source_id, subject),
            ).fetchall()
            if rows:
                found[subject] = [Held(row, frozenset(row["claim"].split())) for row in rows]
        return found

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
                self.short_id("ev", kept, source["source_id"], item["char_start"]),
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

    def _contradictions(self, item: sqlite3.Row, claim: dict[str, Any], candidates: list[Held]) -> None:
        mine = set(claim["claim"].split())
        kind = claim["value"].split(":", 1)[0]
        for held, theirs in candidates:
            small, large = (mine, theirs) if len(mine) <= len(theirs) else (theirs, mine)
            if len(small) < MIN_CLAIM_WORDS or not small <= large:
                continue
            if held["value"].split(":", 1)[0] != kind or held["value"] == claim["value"]:
                continue
            sides = [held["knowledge_id"], item["knowledge_id"]]
            won = self._winner(sides)
            wording = held["claim"] if len(theirs) <= len(mine) else claim["claim"]
            subject_words = set(claim["subject"].split())
            about = " ".join(w for w in wording.split() if w not in subject_words)
            subject = item["subject"] or held["subject"]
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
        settle(self.db, conflict_id)

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


def settle(db: sqlite3.Connection, conflict_id: str) -> None:
    """The sides' statuses as the disagreement's state says: while it is open, every side but the
    suggested winner is ``Disputed``; resolved with a winner, the others are ``Archived``."""
    conflict = db.execute("SELECT * FROM conflicts WHERE conflict_id = ?", (conflict_id,)).fetchone()
    if conflict is None or conflict["type"] != "contradiction":
        return
    sides = [r[0] for r in db.execute("SELECT knowledge_id FROM conflict_sides WHERE conflict_id = ?", (conflict_id,))]
    decision = json.loads(conflict["decision"]) if conflict["decision"] else {}
    if conflict["status"] == "open":
        for knowledge_id in sides:
            if knowledge_id != conflict["suggested_winner"]:
                db.execute(
                    "UPDATE statements SET status = 'Disputed' WHERE knowledge_id = ? AND status = 'Active'",
                    (knowledge_id,),
                )
    elif decision.get("winner_id"):
        for knowledge_id in sides:
            if knowledge_id != decision["winner_id"]:
                db.execute("UPDATE statements SET status = 'Archived' WHERE knowledge_id = ?", (knowledge_id,))
