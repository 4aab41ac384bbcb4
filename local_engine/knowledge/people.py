"""People, organizations, projects and places: the ``entity_resolution`` stage's rules.

A documented rule set, no model (docs: ``local_engine/README.md``, "People and organizations"):

- **Names.** A name is a run of two or more capitalised words in a statement's text (``Robert
  Smith``, ``Acme Robotics``), or an initial and a surname (``R. Smith``). A run that starts a
  sentence with a common word loses it (``The``, ``Supplier Acme Robotics`` → ``Acme Robotics``);
  month and weekday names are never names; a run of more than four words is a title, not a name.
- **Types.** ``project`` when the first word is Project, Programme, Operation; ``organization``
  when the last is a company or body word (Inc, Ltd, Robotics, Authority, …); ``place`` when the
  last is a place word (Harbour, Street, City, …); else ``person``.
- **One entity per name in a base**: names are compared folded (case, dots, white space), so
  ``ACME Robotics`` and ``Acme Robotics`` are one entity, and an abbreviation written beside a
  name (``Kestrel Harbour Authority (KHA)``) is its alias.
- **Mentions** are every place a statement names it: the source, chunk, statement, exact text and
  offsets into the source's text.
- **Attributes** found beside a name: an e-mail address right after it (``R. Smith
  (rsmith@…)``), a role (``Bob Smith owns the launch checklist`` → ``launch checklist owner``;
  ``The harbour master is Ingrid Olsen`` → ``harbour master``).
- **Relationships**: a statement naming two entities links the first to the second by the word
  that follows the first (``Acme Robotics supplies … Project Falcon`` → ``supplies``).
- **The same person named two ways.** A short form of a given name with the same surname
  (``Bob Smith`` and ``Robert Smith``) is merged on its own into the full name, the short one an
  alias; an initial with the same surname (``R. Smith``), or two names beside the same e-mail
  address, is a *pending* possible duplicate with a confidence and a reason. A pair a person kept
  apart is never suggested again (its decided row stays).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

NAME_WORD = r"(?:[A-Z][a-z][\w'’-]*|[A-Z]{2,}[\w'’-]*|[A-Z]\.)"
NAME_RUN = re.compile(rf"(?<![\w.@]){NAME_WORD}(?:[ \t]+(?:of[ \t]+|the[ \t]+|and[ \t]+|&[ \t]+)?{NAME_WORD})*")
EMAIL = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+")
EMAIL_AFTER = re.compile(r"[ \t]*[(<]?[ \t]*(" + EMAIL.pattern + ")")
"""An e-mail address right after a name (``R. Smith (rsmith@…)``)."""
INITIALLED = re.compile(r"[A-Z]\.(?: [A-Z]\.)* \S+")
"""A name written with initials (``R. Smith``, ``J. R. Smith``)."""
ABBREVIATION = re.compile(r"[ \t]*\(([A-Z]{2,8})\)")
TOKEN = re.compile(r"\S+")
JOINERS = ("of", "the", "and", "&")
NEXT_WORD = re.compile(r"[ \t,]*([a-z]{3,20})\b")
MAX_NAME_WORDS = 4
COMMON = {
    "the", "a", "an", "this", "that", "these", "those", "our", "your", "their", "its", "his", "her", "new",
    "every", "each", "all", "some", "any", "no", "if", "when", "while", "after", "before", "since", "until",
    "signed", "supplier", "dear", "hello", "hi", "thanks", "please", "see", "note", "notes", "and", "but",
    "or", "so", "then", "also", "only", "meet", "ask", "contact", "call", "email", "write", "send", "per",
    "in", "on", "at", "for", "from", "with", "by", "of", "to", "as", "is", "was", "are", "were", "we", "i",
    "you", "they", "he", "she", "it", "there", "here", "today", "yesterday", "tomorrow",
}  # fmt: skip
CALENDAR = {
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
}  # fmt: skip
PROJECT_WORDS = {"project", "programme", "program", "operation", "initiative"}
ORGANIZATION_WORDS = {
    "inc", "inc.", "ltd", "ltd.", "llc", "plc", "gmbh", "ag", "sa", "corp", "corp.", "corporation", "company",
    "co", "co.", "group", "robotics", "systems", "labs", "authority", "council", "agency", "bank", "university",
    "institute", "foundation", "association", "ministry", "department", "partners", "holdings", "technologies",
    "industries", "services", "logistics", "committee", "board", "office", "team", "society", "trust",
    "library", "museum", "school", "hospital", "clinic", "church", "club",
}  # fmt: skip
PLACE_WORDS = {
    "harbour", "harbor", "street", "road", "avenue", "city", "island", "bay", "port", "river", "airport",
    "station", "county", "valley", "lake", "mountain", "park", "square", "bridge", "quay", "pier",
}  # fmt: skip
SHORT_FORMS = {
    "bob": "robert", "bobby": "robert", "rob": "robert", "robbie": "robert", "bill": "william",
    "billy": "william", "will": "william", "jim": "james", "jimmy": "james", "liz": "elizabeth",
    "beth": "elizabeth", "betty": "elizabeth", "kate": "katherine", "katie": "katherine", "mike": "michael",
    "dave": "david", "dan": "daniel", "danny": "daniel", "tom": "thomas", "tommy": "thomas",
    "chris": "christopher", "alex": "alexander", "sam": "samuel", "ben": "benjamin", "joe": "joseph",
    "nick": "nicholas", "tony": "anthony", "steve": "stephen", "jen": "jennifer", "jenny": "jennifer",
    "sue": "susan", "pat": "patricia", "ed": "edward", "ted": "edward", "andy": "andrew", "matt": "matthew",
    "pete": "peter", "rick": "richard", "dick": "richard", "greg": "gregory", "jon": "jonathan",
    "meg": "margaret", "maggie": "margaret", "peggy": "margaret", "kim": "kimberly", "fred": "frederick",
}  # fmt: skip
"""Common English short forms of given names: ``Bob Smith`` is ``Robert Smith``."""
ROLE_AFTER = re.compile(r"[ \t]+owns[ \t]+the[ \t]+((?:[a-z]+[ \t]+){0,3}[a-z]+)\b")
ROLE_BEFORE = re.compile(r"\b[Tt]he[ \t]+((?:[a-z]+[ \t]+){0,2}[a-z]+)[ \t]+is[ \t]+$")
ROLE_APPOSITIVE = re.compile(r",[ \t]+(?:the[ \t]+|our[ \t]+)?((?:[a-z]+[ \t]+){0,2}[a-z]+),")
CONFIDENCE = {"project": 0.95, "organization": 0.9, "place": 0.9, "person": 0.85}
INITIAL_CONFIDENCE = 0.6
MAX_MENTIONS_PER_STATEMENT = 12
AUTOMATIC = "forager"
"""Who a merge the rules made on their own names."""


def fold(name: str) -> str:
    """A name compared: lower case, dots and white space folded (``R. Smith`` → ``r smith``)."""
    return " ".join(name.replace(".", " ").lower().split())


def name_type(words: list[str]) -> str:
    first, last = words[0].lower(), words[-1].lower()
    if first in PROJECT_WORDS:
        return "project"
    if any(w.lower() in ORGANIZATION_WORDS for w in words):
        return "organization"
    if last in PLACE_WORDS:
        return "place"
    return "person"


@dataclass
class Found:
    """A name found in a statement: where it is, and what was said beside it."""

    name: str
    type: str
    start: int  # offsets into the source's text
    end: int
    knowledge_id: str
    chunk_id: str | None
    emails: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    abbreviation: str | None = None
    next_word: str | None = None


def _groups(tokens: list[tuple[str, int, int]]) -> list[list[tuple[str, int, int]]]:
    """A run split at its joiners, unless the part before is one word (``Bank of England`` is one
    name, ``Ingrid Olsen of Kestrel Harbour Authority`` two)."""
    groups: list[list[tuple[str, int, int]]] = [[]]
    pending: tuple[str, int, int] | None = None
    for token in tokens:
        if token[0] in JOINERS:
            pending = token
            continue
        if pending is not None:
            if len(groups[-1]) == 1:
                groups[-1].append(pending)
            else:
                groups.append([])
            pending = None
        groups[-1].append(token)
    return groups


def names_in(text: str, start: int, end: int) -> list[tuple[str, int, int]]:
    """(name, start, end) of every name in ``text[start:end]`` (offsets into ``text``)."""
    found = []
    for match in NAME_RUN.finditer(text, start, end):
        tokens = [(m.group(0), m.start(), m.end()) for m in TOKEN.finditer(text, match.start(), match.end())]
        while tokens and (tokens[0][0].lower() in COMMON or tokens[0][0].lower() in CALENDAR):
            tokens = tokens[1:]
        for grouped in _groups(tokens):
            group = grouped
            while group and (group[-1][0].lower() in CALENDAR or group[-1][0] in JOINERS):
                group = group[:-1]
            words = [w for w, _, _ in group if w not in JOINERS]
            if len(words) < 2 or len(words) > MAX_NAME_WORDS:
                continue
            if any(w.lower() in CALENDAR for w in words) or all(len(w) <= 2 for w in words):
                continue
            if words[-1].endswith("."):
                continue  # "Smith R." is no name of ours
            found.append((" ".join(w for w, _, _ in group), group[0][1], group[-1][2]))
    return found


def find(text: str, statements: Iterable[tuple[str, str | None, int, int]]) -> list[Found]:
    """Every name the statements of one source say (``(knowledge_id, chunk_id, char_start,
    char_end)`` each), with what stands beside each."""
    found: list[Found] = []
    for knowledge_id, chunk_id, s, e in statements:
        for name, start, end in names_in(text, s, e)[:MAX_MENTIONS_PER_STATEMENT]:
            words = name.split()
            entity = Found(name, name_type(words), start, end, knowledge_id, chunk_id)
            after = text[end:e]
            email = EMAIL_AFTER.match(after)
            if email:
                entity.emails.append(email.group(1))
            abbreviation = ABBREVIATION.match(after)
            if abbreviation and abbreviation.group(1) == "".join(w[0] for w in words if w[0].isupper()):
                entity.abbreviation = abbreviation.group(1)
            if entity.type == "person":
                owns = ROLE_AFTER.match(after)
                if owns:
                    entity.roles.append(f"{owns.group(1)} owner")
                before = ROLE_BEFORE.search(text[s:start])
                if before:
                    entity.roles.append(before.group(1))
                appositive = ROLE_APPOSITIVE.match(after)
                if appositive:
                    entity.roles.append(appositive.group(1))
            word = NEXT_WORD.match(after)
            entity.next_word = word.group(1) if word and word.group(1) not in COMMON else None
            found.append(entity)
    return found


def entity_id(short_id: Any, ref: str, name: str) -> str:
    return str(short_id("ent", ref, fold(name)))


def _merge_json(old: str, new: dict[str, list[str]]) -> str:
    held: dict[str, Any] = json.loads(old or "{}")
    for key, values in new.items():
        kept = list(held.get(key) or [])
        kept.extend(v for v in values if v not in kept)
        if kept:
            held[key] = kept
    return json.dumps(held, sort_keys=True)


def record(db: sqlite3.Connection, short_id: Any, ref: str, source_id: str, found: list[Found], at: str) -> int:
    """Write one source's names: entities (created or enriched), mentions, aliases, relationships.

    Each table's rows are written in one batch, in the order the names were found (a name's
    attributes are merged one by one, in that order too)."""
    db.execute("DELETE FROM mentions WHERE source_id = ?", (source_id,))
    db.execute("DELETE FROM relationships WHERE source_id = ?", (source_id,))
    entities: list[tuple[Any, ...]] = []
    enriched: list[tuple[str, Found]] = []
    aliases: list[tuple[str, str, str, float]] = []
    mentions: list[tuple[Any, ...]] = []
    by_statement: dict[str, list[tuple[Found, str]]] = {}
    for entity in found:
        eid = entity_id(short_id, ref, entity.name)
        confidence = INITIAL_CONFIDENCE if _initial(entity.name) else CONFIDENCE[entity.type]
        entities.append((eid, ref, entity.name, fold(entity.name), entity.type, confidence, at))
        if entity.emails or entity.roles:
            enriched.append((eid, entity))
        aliases.extend((eid, email, "email", 0.8) for email in entity.emails)
        if entity.abbreviation:
            aliases.append((eid, entity.abbreviation, "abbreviation", 0.9))
        mentions.append(
            (eid, ref, source_id, entity.chunk_id, entity.knowledge_id, entity.start, entity.end, entity.name)
        )
        by_statement.setdefault(entity.knowledge_id, []).append((entity, eid))
    db.executemany(
        "INSERT OR IGNORE INTO entities (entity_id, ref, name, normalized, type, confidence, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        entities,
    )
    for eid, entity in enriched:
        held = db.execute("SELECT attributes FROM entities WHERE entity_id = ?", (eid,)).fetchone()
        attributes = _merge_json(held["attributes"], {"emails": entity.emails, "roles": entity.roles})
        db.execute("UPDATE entities SET attributes = ? WHERE entity_id = ?", (attributes, eid))
    db.executemany(
        "INSERT OR IGNORE INTO aliases (entity_id, alias, kind, confidence) VALUES (?, ?, ?, ?)",
        aliases,
    )
    db.executemany(
        "INSERT OR IGNORE INTO mentions (entity_id, ref, source_id, chunk_id, knowledge_id, char_start, char_end,"
        " text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        mentions,
    )
    links: list[tuple[str, str, str, str, str]] = []
    for knowledge_id, named in by_statement.items():
        distinct = list(dict.fromkeys(eid for _, eid in named))
        if len(distinct) < 2:
            continue
        first = next(entity for entity, eid in named if eid == distinct[0])
        links.extend(
            (distinct[0], first.next_word or "mentioned_with", other, knowledge_id, source_id) for other in distinct[1:]
        )
    db.executemany(
        "INSERT OR IGNORE INTO relationships (from_entity, type, to_entity, knowledge_id, source_id,"
        " confidence) VALUES (?, ?, ?, ?, ?, 0.7)",
        links,
    )
    return len(links)


def _initial(name: str) -> bool:
    return bool(INITIALLED.fullmatch(name))


def _given_and_surname(name: str) -> tuple[str, str] | None:
    words = fold(name).split()
    return (words[0], words[-1]) if len(words) >= 2 else None


def pair_id(short_id: Any, ref: str, a: str, b: str) -> str:
    return str(short_id("mc", ref, *sorted((a, b))))


def resolve(db: sqlite3.Connection, short_id: Any, ref: str, at: str) -> tuple[int, int]:
    """The same person named two ways, over the whole base: (merged on their own, suggested)."""
    people = db.execute(
        "SELECT entity_id, name, attributes FROM entities WHERE ref = ? AND type = 'person' AND merged_into IS NULL"
        " ORDER BY name",
        (ref,),
    ).fetchall()
    by_surname: dict[str, list[sqlite3.Row]] = {}
    for person in people:
        parts = _given_and_surname(person["name"])
        if parts is not None:
            by_surname.setdefault(parts[1], []).append(person)
    merged = suggested = 0
    decided = {
        (row["entity_a"], row["entity_b"])
        for row in db.execute("SELECT entity_a, entity_b FROM candidates WHERE ref = ?", (ref,))
    }
    for group in by_surname.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if (a["entity_id"], b["entity_id"]) in decided or (b["entity_id"], a["entity_id"]) in decided:
                    continue
                verdict = _same_person(a["name"], b["name"])
                if verdict is None:
                    continue
                kind, confidence, reason = verdict
                full, short = (a, b) if len(fold(a["name"]).split()[0]) >= len(fold(b["name"]).split()[0]) else (b, a)
                if kind == "short_form":
                    merge(db, full["entity_id"], short["entity_id"], reason, AUTOMATIC, at)
                    _candidate(db, short_id, ref, full, short, confidence, reason, "accepted", AUTOMATIC, at)
                    merged += 1
                else:
                    _candidate(db, short_id, ref, full, short, confidence, reason, "pending", None, at)
                    suggested += 1
                decided.add((full["entity_id"], short["entity_id"]))
    suggested += _same_email(db, short_id, ref, at, decided)
    return merged, suggested


def _same_person(a: str, b: str) -> tuple[str, float, str] | None:
    pa, pb = _given_and_surname(a), _given_and_surname(b)
    if pa is None or pb is None or pa[1] != pb[1] or pa[0] == pb[0]:
        return None
    (ga, _), (gb, _) = pa, pb
    if SHORT_FORMS.get(ga) == gb or SHORT_FORMS.get(gb) == ga:
        short, full = (ga, gb) if SHORT_FORMS.get(ga) == gb else (gb, ga)
        return "short_form", 0.9, f'"{short.title()}" is a short form of {full.title()}'
    initial, other = (a, b) if _initial(a) else (b, a) if _initial(b) else (None, None)
    if initial is not None and other is not None and not _initial(other):
        letter = fold(initial).split()[0]
        if fold(other).split()[0].startswith(letter):
            return "initial", 0.7, f'Initial "{letter.upper()}." matches {other}'
    return None


def _candidate(
    db: sqlite3.Connection,
    short_id: Any,
    ref: str,
    a: sqlite3.Row,
    b: sqlite3.Row,
    confidence: float,
    reason: str,
    status: str,
    by: str | None,
    at: str,
) -> None:
    db.execute(
        "INSERT OR IGNORE INTO candidates (candidate_id, ref, entity_a, entity_b, confidence, reason, status,"
        " decided_by, decided_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            pair_id(short_id, ref, a["entity_id"], b["entity_id"]),
            ref,
            a["entity_id"],
            b["entity_id"],
            confidence,
            reason,
            status,
            by,
            at if by else None,
            at,
        ),
    )


def _same_email(db: sqlite3.Connection, short_id: Any, ref: str, at: str, decided: set[tuple[str, str]]) -> int:
    shared = db.execute(
        "SELECT a.entity_id AS a, b.entity_id AS b, a.alias AS email FROM aliases a"
        " JOIN aliases b ON a.alias = b.alias AND a.entity_id < b.entity_id AND a.kind = 'email' AND b.kind = 'email'"
        " JOIN entities ea ON ea.entity_id = a.entity_id JOIN entities eb ON eb.entity_id = b.entity_id"
        " WHERE ea.ref = ? AND eb.ref = ? AND ea.merged_into IS NULL AND eb.merged_into IS NULL",
        (ref, ref),
    ).fetchall()
    count = 0
    for row in shared:
        if (row["a"], row["b"]) in decided or (row["b"], row["a"]) in decided:
            continue
        a = db.execute("SELECT entity_id, name FROM entities WHERE entity_id = ?", (row["a"],)).fetchone()
        b = db.execute("SELECT entity_id, name FROM entities WHERE entity_id = ?", (row["b"],)).fetchone()
        _candidate(db, short_id, ref, a, b, 0.9, f"Both named beside {row['email']}", "pending", None, at)
        decided.add((row["a"], row["b"]))
        count += 1
    return count


def merge(db: sqlite3.Connection, kept: str, away: str, reason: str | None, by: str | None, at: str) -> None:
    """``away`` becomes an alias of ``kept``: its mentions count for ``kept``; it can be unmerged."""
    name = db.execute("SELECT name FROM entities WHERE entity_id = ?", (away,)).fetchone()["name"]
    db.execute(
        "UPDATE entities SET merged_into = ?, merge_reason = ?, merged_by = ?, merged_at = ? WHERE entity_id = ?",
        (kept, reason, by, at, away),
    )
    db.execute("UPDATE entities SET merged_into = ? WHERE merged_into = ?", (kept, away))
    db.execute(
        "INSERT OR IGNORE INTO aliases (entity_id, alias, kind, confidence) VALUES (?, ?, 'name', 0.8)", (kept, name)
    )


def unmerge(db: sqlite3.Connection, away: str) -> str:
    """``away`` on its own again; the entity it was merged into loses its name as an alias."""
    row = db.execute("SELECT name, merged_into FROM entities WHERE entity_id = ?", (away,)).fetchone()
    kept = str(row["merged_into"])
    db.execute(
        "UPDATE entities SET merged_into = NULL, merge_reason = NULL, merged_by = NULL, merged_at = NULL"
        " WHERE entity_id = ?",
        (away,),
    )
    db.execute("DELETE FROM aliases WHERE entity_id = ? AND alias = ? AND kind = 'name'", (kept, row["name"]))
    return kept


def prune(db: sqlite3.Connection, ref: str) -> None:
    """Names no document says any more go, with their aliases and every suggestion about them."""
    gone = [
        str(r[0])
        for r in db.execute(
            "SELECT entity_id FROM entities e WHERE ref = ? AND NOT EXISTS"
            " (SELECT 1 FROM mentions m WHERE m.entity_id = e.entity_id)"
            " AND NOT EXISTS (SELECT 1 FROM entities c WHERE c.merged_into = e.entity_id)",
            (ref,),
        )
    ]
    for eid in gone:
        row = db.execute("SELECT name, merged_into FROM entities WHERE entity_id = ?", (eid,)).fetchone()
        if row["merged_into"] is not None:  # the entity it was merged into loses its name as an alias
            db.execute(
                "DELETE FROM aliases WHERE entity_id = ? AND alias = ? AND kind = 'name'",
                (row["merged_into"], row["name"]),
            )
        db.execute("DELETE FROM aliases WHERE entity_id = ?", (eid,))
        # every suggestion about it goes too, decided ones included: no row may name a missing entity
        db.execute("DELETE FROM candidates WHERE entity_a = ? OR entity_b = ?", (eid, eid))
        db.execute("DELETE FROM entities WHERE entity_id = ?", (eid,))
