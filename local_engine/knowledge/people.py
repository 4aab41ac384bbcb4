"""People, organizations, projects and places: the ``entity_resolution`` stage's rules.

A documented rule set, no model (docs: ``local_engine/README.md``, "People and organizations").
**Precision before recall:** a run of capitalised words is only a candidate; it becomes an entity
when the document gives evidence of what it is, in one of the shapes documents use:

- **Names.** A candidate is a run of two to four capitalised words (``Robert Smith``, ``Acme
  Robotics``, ``José Joaquín Atria``), an initial and a surname (``R. Smith``), with name particles
  inside (``Frits van Bommel``); a leading common word or verb is dropped (``The``, ``Supplier``,
  a changelog's ``Add``); month and
  weekday names are never names; a possessive ends it (``Heron Foundation's`` is ``Heron
  Foundation``). ``of`` joins two parts when the first is one word or an organization word
  (``Bank of England``, ``University of British Columbia``; ``Ingrid Olsen of Kestrel Harbour
  Authority`` is two names); ``and``, ``&`` and ``and the`` always part two names.
- **A person** needs one of: an e-mail address or a handle right after the name (``R. Smith
  (rsmith@…)``, ``Ofek Lev (@ofek)``); a credit before it (``by`` after a word of authorship —
  ``patch by``, ``written by``, ``signed by``, ``(by``, ``#186 by``, ``; by`` —, ``thanks to``,
  ``report from``, ``(report:`` …) and the names listed with it (``thanks to A B and C D``); an author or maintainer
  field (``Author: …``, ``:Maintainer: …``, front matter ``author:``/``authors:``); a role
  (``X, the release manager``, ``X is the release manager``, ``The release manager is X``,
  ``Major developers are X``: a role noun of :data:`ROLE_NOUNS`); the subject of something people
  do (``Ada Lovelace approved …``: a verb of :data:`PEOPLE_VERBS` right after a name that starts
  the sentence); a given name of the short-form table (``Bob Smith``, ``Robert Carter``); a line
  that starts with a name in a people file (``AUTHORS``, ``THANKS``, ``CONTRIBUTORS`` …) or
  under a people heading (``Authors``, ``Maintainers``, ``Acknowledgements`` …); a signature
  (a name alone on the line after ``Regards,``, ``Thanks,`` …). A person's name is person-shaped:
  no organization or project word, no digit, at most its last word in capitals (``Takeshi
  KOMIYA``, ``John Thorvald Wodder II``; an acronym is none: ``Wing IDE``). A capitalised phrase
  alone (``Internet Explorer``, ``Bad Request``, ``San Marino``, ``GROUP BY``) is no one.
- **An organization** needs a legal or organizational form as its last word, written as such
  (``Inc``, ``GmbH``, ``Foundation``, ``University``, ``Laboratory`` …; ``GROUP`` in capitals is
  SQL; ``Library`` names software), or as its first before ``of`` (``University of Toronto``),
  or a legal form after a comma (``Fish Software, Inc.``), or a role in a sentence (``sponsored
  by X``, ``X, a company …``); a thing's name is none (``Pre-sorted Group keyword``).
- **A project** starts with Project, Programme, Operation; **a place** ends with a place word
  (Harbour, Street, City, …) — unless the name is evidenced as a person (``translation by Shinjo
  Park``).
- **A name said again.** Once a name is an entity, the same name elsewhere in the document, or in
  a document read after it, is a mention of it without evidence of its own.
- **One entity per name in a base**: names are compared folded (case, dots, white space), so
  ``ACME Robotics`` and ``Acme Robotics`` are one entity, and an abbreviation written beside a
  name (``Kestrel Harbour Authority (KHA)``) is its alias.
- **Mentions** are every place a document names it: the source, chunk, statement, exact text and
  offsets into the source's text (a field or a people list's line that is no statement is a
  mention without one).
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

No library was used: spaCy's English models are published on GitHub, not in a wheel of the
package index (the PyPI copies are third parties'), Flair and GLiNER fetch theirs from a hub at
run time, and a statistical tagger would not say why a name is a person; these shapes do
(measured: ``benchmarks/eval/precision.py``, docs/evaluation.md).
"""

from __future__ import annotations

import bisect
import json
import re
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

UPPER = "".join(c for c in map(chr, range(0xC0, 0x250)) if c.isupper())
LOWER = "".join(c for c in map(chr, range(0xC0, 0x250)) if c.islower())
"""The Latin-1 and Latin Extended letters by case: ``Łukasz``, ``Åsheim`` are capitalised words."""
CAP = f"A-Z{UPPER}"
SMALL = f"a-z{LOWER}"
NAME_WORD = rf"(?:[{CAP}][{SMALL}][\w'’-]*+(?![.@]\w)|[{CAP}]{{2,}}+[\w'’-]*+(?![.@]\w)|[{CAP}]\.)"
"""A capitalised word, a word in capitals or an initial; never the start of an address
(``Nicholas.Herriot@…``) or of a dotted name (``Flask.run``)."""
PARTICLES = ("de", "da", "di", "du", "del", "della", "dos", "das", "van", "von", "der", "den", "ter", "ten", "le",
             "la", "bin", "ibn")  # fmt: skip
"""Lower-case words inside a person's name (``Artur de Sousa Rocha``, ``Adrian van den Dries``)."""
LINKS = ("of", "the", "and", "&")
JOINERS = (*LINKS, *PARTICLES)
"""Words a run holds between its capitalised words; a name's words are the others."""
NAME_RUN = re.compile(rf"(?<![\w.@]){NAME_WORD}(?:[ \t]+(?:(?:{'|'.join(JOINERS)})[ \t]+){{0,2}}{NAME_WORD})*")
POSSESSIVE = re.compile(r"['’]s?$")
EMAIL = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+")
EMAIL_AFTER = re.compile(r"\s*[(<]?[ \t]*(" + EMAIL.pattern + ")")
"""An e-mail address right after a name (``R. Smith (rsmith@…)``)."""
HANDLE_AFTER = re.compile(r"[ \t]*(?:[(\[][ \t]*(?:(?:gh|github|twitter)[ \t]*:[ \t]*)?@[\w-]+|<[\w.+-]+@[\w.-]+>)")
"""A handle or a masked address right after a name (``Ofek Lev (@ofek)``, ``A. B. <ab@MASKED>``)."""
INITIALLED = re.compile(r"[A-Z]\.(?: [A-Z]\.)* \S+")
"""A name written with initials (``R. Smith``, ``J. R. Smith``)."""
ABBREVIATION = re.compile(r"[ \t]*\(([A-Z]{2,8})\)")
TOKEN = re.compile(r"\S+")
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
LEADING_VERBS = {
    "add", "added", "adds", "fix", "fixed", "fixes", "use", "used", "uses", "update", "updated", "remove",
    "removed", "support", "supported", "allow", "allowed", "make", "made", "change", "changed", "drop",
    "dropped", "deprecate", "deprecated", "improve", "improved", "rename", "renamed", "move", "moved",
    "replace", "replaced", "refactor", "refactored", "enable", "enabled", "disable", "disabled", "implement",
    "implemented", "apply", "applied", "document", "documented", "let", "set", "raise", "return", "avoid",
    "ensure", "install", "run", "read", "create", "created", "configure", "import", "upgrade", "bump",
}  # fmt: skip
"""Verbs a changelog's or a guide's sentence starts with (``Add Pre-sorted Group``): never part of a name."""
CALENDAR = {
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
}  # fmt: skip
LEADING = COMMON | CALENDAR | LEADING_VERBS
"""Words a name never starts with: dropped from a run's start."""
PROJECT_WORDS = {"project", "programme", "program", "operation", "initiative"}
ORGANIZATION_WORDS = {
    "inc", "inc.", "incorporated", "ltd", "ltd.", "limited", "llc", "llp", "plc", "gmbh", "ag", "kg", "sa",
    "s.a.", "sarl", "srl", "bv", "b.v.", "nv", "n.v.", "oy", "pty", "corp", "corp.", "corporation", "company",
    "co.", "foundation", "university", "institute", "association", "society", "consortium", "council",
    "authority", "agency", "ministry", "department", "faculty", "laboratory", "laboratories", "lab", "labs",
    "group", "bank", "trust", "committee", "board", "college", "school", "hospital", "hospitals", "clinic",
    "museum", "academy", "alliance", "federation", "commission", "conservancy",
    "partners", "holdings", "technologies", "industries", "robotics", "logistics", "church", "club",
}  # fmt: skip
"""Legal and organizational forms: the last word of an organization's name (``Python Software
Foundation``, ``Acme Robotics``), written as a name writes it (``Group``, not SQL's ``GROUP``).
``Library`` is not one: in software it names a library far more often than a building."""
LEGAL_CASED = {"LLC", "LLP", "PLC", "GmbH", "AG", "KG", "SA", "S.A.", "SARL", "SRL", "BV", "B.V.", "NV", "N.V."}
ORGANIZATION_FIRST = {
    "university", "department", "institute", "ministry", "bank", "faculty", "school", "college", "academy",
    "society", "association", "federation", "board", "council", "agency", "commission", "museum", "library",
    "laboratory", "church", "office", "bureau", "league",
}  # fmt: skip
"""Organization words that start a name before ``of`` (``University of Toronto``)."""
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
GIVEN_NAMES = (set(SHORT_FORMS) | set(SHORT_FORMS.values())) - {"will", "bill", "pat", "sue", "rob", "dick", "ed"}
"""Given names that make a two-word name a person's (the short-form table's, less the words that
are as often something else: ``Will``, ``Bill``, ``Pat``)."""
GENERATIONS = {"II", "III", "IV"}
"""What may end a person's name in capitals (``John Thorvald Wodder II``)."""
ROLE_NOUNS = {
    "manager", "owner", "officer", "leader", "maintainer", "maintainers", "author", "authors",
    "director", "chair", "chairperson", "chairman", "chairwoman", "coordinator", "secretary",
    "treasurer", "president", "founder", "creator", "developer", "developers", "engineer", "architect",
    "reviewer", "champion", "steward", "captain", "supervisor", "administrator", "commissioner", "minister",
    "mayor", "professor", "researcher", "translator", "contributor", "contributors", "committer",
    "committers", "liaison", "representative", "spokesperson", "intern", "ceo", "cto", "writer",
}  # fmt: skip
"""What a person is in a sentence (``X, the release manager``; ``The harbour master is X``)."""
PEOPLE_VERBS = {
    "owns", "leads", "led", "approved", "approves", "signed", "signs", "chairs", "chaired", "manages",
    "managed", "wrote", "writes", "decided", "decides", "agreed", "agrees", "reviewed", "reviews", "said",
    "says", "asked", "asks", "proposed", "proposes", "presented", "presents", "joined", "joins", "attended",
    "attends", "drafted", "thanked", "founded", "resigned", "retired", "volunteered", "coordinates",
    "coordinated", "oversees", "oversaw", "mentors", "mentored",
}  # fmt: skip
"""What people do: a name that starts a sentence and is followed by one of these is a person's."""
BY_WORDS = {
    "patch", "patches", "written", "rewritten", "maintained", "contributed", "contribution", "contributions",
    "reported", "report", "submitted", "fixed", "fix", "done", "added", "extended", "translation",
    "translations", "translated", "mappings", "lexer", "lexers", "formatter", "article", "post", "created",
    "developed", "authored", "signed", "kept", "made", "proposed", "suggested", "requested", "implemented",
    "reviewed", "edited", "approved", "designed", "improved", "updated", "prepared", "led", "started",
    "founded", "owned", "organized", "organised", "ported", "drafted", "glued", "presented", "chaired",
    "coordinated", "compiled", "tested", "pr", "work", "idea", "ideas", "code", "docs", "documentation",
    "together",
}  # fmt: skip
"""The words after which ``by`` credits a person (``patch by``, ``written by``)."""
CREDIT_BEFORE = re.compile(
    r"(?:\b(?:[Tt]hanks|[Tt]hank\s+you|[Kk]udos|[Cc]redits?|[Cc]ongratulations)(?:\s+(?:go(?:es)?\s+)?to)?"
    r"|\b(?:[Cc]ourtesy\s+of|(?:[Rr]eports?|[Ff]eedback|[Hh]elp|[Ii]nput|[Pp]atch(?:es)?|[Ss]uggestions?)"
    r"\s+from)"
    r"|\((?:bug\s+)?(?:report(?:ed)?|patch|thanks)\s*:"
    r"|(?:\b([\w-]+)\s+|[#(\];]\s*)by)\s*:?\s+$"
)
"""A credit just before a name: ``thanks to``, ``report from``, ``(report:``, ``<word of
authorship> by``, ``(by``, ``#186 by``, ``; by``; the word before ``by`` is the group (checked
against :data:`BY_WORDS`)."""
ROLE_BEFORE_NOUNS = ROLE_NOUNS | {"master", "lead", "head", "editor"}
"""Role nouns that name a person only before ``is`` (``The harbour master is X``; ``X, the
master branch`` is no one's role)."""
ROLE_NAME_BEFORE = re.compile(r"\b([A-Za-z]+)(?:\s+(?:is|are|was|were)|:)\s+$")
ROLE_NAME_AFTER = re.compile(
    r"(?:,\s+(?:(?:the|our|a|an|its|their|his|her)\s+)?|\s+(?:is|was)\s+(?:the|our)\s+)"
    r"((?:[a-z-]+\s+){0,2}[a-z-]+)"
)
LIST_AFTER = re.compile(r"(?:,\s*(?:and\s+)?|\s+(?:and|&)\s+)$")
"""What stands between two names of one list (``A B, C D and E F``)."""
LIST_GOES_ON = re.compile(r"\s*(?:,|and\b|&)")
SUBJECT_START = re.compile(r"^[\W\d_]*$")
ORG_ROLE_BEFORE = re.compile(
    r"\b(?:(?:sponsored|funded|financed|acquired|backed|employed|hired|contracted)\s+by"
    r"|(?:works?|worked|working|employed)\s+(?:at|for))\s+(?:the\s+)?$"
)
ORG_ROLE_AFTER = re.compile(
    r",?\s+(?:is|was)?\s*(?:a|an)\s+(?:[\w-]+\s+){0,2}?(?:company|firm|startup|nonprofit|non-profit"
    r"|charity|corporation|organi[sz]ation|vendor|supplier|manufacturer|consultancy|publisher|employer)\b"
)
LEGAL_AFTER = re.compile(r",[ \t]*(?:Inc|Ltd|LLC|LLP|PLC|GmbH|AG|Corp)\b")
"""A legal form after a comma (``Fish Software, Inc.``): the name before it is an organization's."""
THING_AFTER = re.compile(
    r"[ \t]+(?:keyword|option|setting|directive|lexer|class|function|method|module|type|field|value|object"
    r"|policy|rule|command|plugin|package|component|feature|template|style|format|parameter|attribute)s?\b"
)
"""A noun after a name that makes it a thing's name (``Pre-sorted Group keyword``), not an organization."""
PEOPLE_FILES = {
    "authors", "contributors", "thanks", "credits", "maintainers", "acknowledgements", "acknowledgments",
    "committers", "people", "team",
}  # fmt: skip
"""Files that list people (``AUTHORS``, ``THANKS.txt``, ``docs/authors.md``)."""
PEOPLE_HEADINGS = PEOPLE_FILES | {"author", "maintainer", "contributor", "developers", "credit"}
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
LIST_LINE = re.compile(r"^[ \t]*(?:(?:[-*+•]|\d{1,3}[.)])[ \t]+)?(?=\S)", re.MULTILINE)
LINE_END = re.compile(r"[ \t]*(?:\Z|[,(<\[:&*]|--|[-–—][ \t]|for\b|and\b|[\w.+-]+@)")
"""What may follow a people list's name on its line: nothing, a separator or an address."""
LIST_BETWEEN = re.compile(r"[ \t]+(?:and|&)[ \t]+")
"""What joins two people of one list line (``Pierre Omidyar & Doug Solomon``; after a comma
stands as often an employer: ``David Hess, Fish Software, Inc.``)."""
FIELD = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+)?:?(?i:author|authors|maintainer|maintainers|author-email|maintainer-email"
    r"|written[ \t]+by|signed-off-by|co-authored-by|reviewed-by|editor|editors|owner|owners)"
    r"[ \t]*:[ \t]*(.*)$",
    re.MULTILINE,
)
"""An author or maintainer field (``Author: …``, ``:Author: …``, front matter ``author: …``); its
value, or the ``- name`` lines under it when it has none (a YAML list)."""
FIELD_ITEM = re.compile(r"\n[ \t]*-[ \t]+([^\n]*)")
SIGN_OFF = re.compile(
    r"^[ \t]*(?:[Rr]egards|[Bb]est(?:[ \t]+[Rr]egards|[ \t]+[Ww]ishes)?|[Kk]ind[ \t]+[Rr]egards|[Tt]hanks"
    r"|[Tt]hank[ \t]+you|[Ss]incerely|[Cc]heers|[Yy]ours(?:[ \t]+[Tt]ruly)?|[Ss]igned)"
    r"[ \t]*,?[ \t]*\n[ \t]*(?:[-–—]+[ \t]*)?",
    re.MULTILINE,
)
"""A sign-off line: the name alone on the next line is a signature."""
CONFIDENCE = {"project": 0.95, "organization": 0.9, "place": 0.9, "person": 0.85}
INITIAL_CONFIDENCE = 0.6
MAX_MENTIONS_PER_STATEMENT = 12
AUTOMATIC = "forager"
"""Who a merge the rules made on their own names."""


def fold(name: str) -> str:
    """A name compared: lower case, dots and white space folded (``R. Smith`` → ``r smith``)."""
    return " ".join(name.replace(".", " ").lower().split())


def _words(name: str) -> list[str]:
    return [w for w in name.split() if w not in JOINERS]


def _organization_form(words: list[str]) -> bool:
    last = words[-1]
    return last in LEGAL_CASED or (last.lower() in ORGANIZATION_WORDS and last[:1].isupper() and not last.isupper())


def name_type(name: str) -> str:
    """What the name's own form says it is: ``project``, ``organization``, ``place``, or ``""``
    (a form that says nothing: evidence must)."""
    words = _words(name)
    if words[0].lower() in PROJECT_WORDS and words[0][:1].isupper() and not words[0].isupper():
        return "project"
    if _organization_form(words) or (words[0].lower() in ORGANIZATION_FIRST and " of " in f" {name} "):
        return "organization"
    if words[-1].lower() in PLACE_WORDS and not words[-1].isupper():
        return "place"
    return ""


def person_shaped(name: str) -> bool:
    """Whether a name can be a person's: no digit, no organization or project word, its first
    word written as a name (``KOMIYA`` may only end it) and no joiner but a particle."""
    words = name.split()
    if any(w in LINKS for w in words) or any(ch.isdigit() for ch in name):
        return False
    named = _words(name)
    if named[0].isupper() and not _initial_word(named[0]):
        return False
    if any(w.isupper() and not _initial_word(w) for w in named[:-1]) or (
        named[-1].isupper() and len(named[-1]) < 4 and named[-1] not in GENERATIONS
    ):
        return False  # a surname may be written in capitals (``Takeshi KOMIYA``), an acronym (``Wing IDE``) is none
    lowered = {w.lower() for w in named}
    return not (lowered & ORGANIZATION_WORDS or lowered & PROJECT_WORDS)


def _initial_word(word: str) -> bool:
    return len(word) == 2 and word.endswith(".")


@dataclass
class Found:
    """A name found in a document: where it is, what it is, and what was said beside it."""

    name: str
    type: str  # "" for a name with no evidence: an entity only when the base already holds it
    start: int  # offsets into the source's text
    end: int
    knowledge_id: str | None
    chunk_id: str | None
    emails: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    abbreviation: str | None = None
    next_word: str | None = None


def _groups(tokens: list[tuple[str, int, int]]) -> list[list[tuple[str, int, int]]]:
    """A run cut into names: a particle stays inside a name; ``of`` (or ``of the``) joins when the
    part before is one word or ends with an organization word that starts names (``Bank of
    England``, ``University of Toronto``); any other joiner parts two names; a possessive ends one."""
    groups: list[list[tuple[str, int, int]]] = [[]]
    links: list[tuple[str, int, int]] = []
    for token in tokens:
        if token[0] in JOINERS:
            links.append(token)
            continue
        if links:
            if groups[-1] and _joins(groups[-1], [t[0] for t in links]):
                groups[-1].extend(links)
            else:
                groups.append([])
            links = []
        word = token[0]
        possessive = POSSESSIVE.search(word) if ("'" in word or "’" in word) else None
        if possessive:
            groups[-1].append((word[: possessive.start()], token[1], token[1] + possessive.start()))
            groups.append([])
            continue
        groups[-1].append(token)
    return [group for group in groups if group]


def _joins(before: list[tuple[str, int, int]], links: list[str]) -> bool:
    if all(link in PARTICLES for link in links):
        return True
    named = [w for w, _, _ in before if w not in JOINERS]
    if links in (["of"], ["of", "the"]):
        return len(named) == 1 or named[-1].lower() in ORGANIZATION_FIRST
    # "Department of Molecular and Cellular Biology": an organization's name goes on after "and"
    return links == ["and"] and named[0].lower() in ORGANIZATION_FIRST and any(w == "of" for w, _, _ in before)


def names_in(text: str, start: int, end: int) -> list[tuple[str, int, int]]:
    """(name, start, end) of every candidate name in ``text[start:end]`` (offsets into ``text``)."""
    found = []
    for match in NAME_RUN.finditer(text, start, end):
        for grouped in _groups(_run_tokens(text, match.start(), match.end())):
            group = _trimmed(grouped)
            if _name_words([w for w, _, _ in group if w not in JOINERS]):
                found.append((text[group[0][1] : group[-1][2]], group[0][1], group[-1][2]))
    return found


def _run_tokens(text: str, start: int, end: int) -> list[tuple[str, int, int]]:
    """(word, start, end) of each word of a run, from the first that is no common word, month,
    weekday or verb (``LEADING``)."""
    tokens = [(m.group(0), m.start(), m.end()) for m in TOKEN.finditer(text, start, end)]
    while tokens and tokens[0][0].lower() in LEADING:
        tokens = tokens[1:]
    return tokens


def _trimmed(group: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """A group without the months, weekdays and joiners it ends with, or the joiners it starts with."""
    while group and (group[-1][0].lower() in CALENDAR or group[-1][0] in JOINERS):
        group = group[:-1]
    while group and group[0][0] in JOINERS:
        group = group[1:]
    return group


def _name_words(words: list[str]) -> bool:
    """Whether a group's words (its joiners left out) may be a name: two to ``MAX_NAME_WORDS`` of
    them, no month or weekday, not all of them two letters or fewer, and the last one no initial
    (a word with a full stop that is no organization word)."""
    if len(words) < 2 or len(words) > MAX_NAME_WORDS:
        return False
    if any(w.lower() in CALENDAR for w in words) or all(len(w) <= 2 for w in words):
        return False
    # "Smith R." is no name of ours
    return not (words[-1].endswith(".") and words[-1].lower() not in ORGANIZATION_WORDS)


# -- evidence -------------------------------------------------------------------------------------


def people_file(source_name: str) -> bool:
    """Whether a file lists people by its name (``AUTHORS``, ``THANKS.txt``, ``docs/authors.md``)."""
    stem = PurePosixPath(source_name).name.split(".", 1)[0]
    return stem.lower().replace("_", "-").split("-")[0] in PEOPLE_FILES


def _people_heading(heading: str) -> bool:
    words = re.sub(r"\([^)]*\)", " ", heading).lower().split()
    return bool(words) and len(words) <= 4 and words[-1].strip(":.") in PEOPLE_HEADINGS


class Document:
    """One source's text, read once for the shapes that stand outside a sentence: the headings
    above each offset, and the names its fields, people lists and signatures give."""

    def __init__(self, text: str, source_name: str) -> None:
        self.text = text
        self.people_file = people_file(source_name)
        heads = [(m.start(), _people_heading(m.group(1))) for m in HEADING.finditer(text)]
        self.heading_starts = [start for start, _ in heads]
        self.heading_people = [people for _, people in heads]
        self.named: dict[int, tuple[int, str]] = {}  # start -> (end, type) of each name given
        self._fields()
        self._lists()
        self._signatures()

    def listing(self, offset: int) -> bool:
        """Whether a line at this offset is in a list of people (a people file, or under a
        people heading)."""
        if self.people_file:
            return True
        index = bisect.bisect_right(self.heading_starts, offset) - 1
        return index >= 0 and self.heading_people[index]

    def _name(self, start: int, end: int, *, first_only: bool = False) -> None:
        for name, s, e in names_in(self.text, start, end):
            kind = name_type(name)
            if kind == "organization" or person_shaped(name):
                self.named.setdefault(s, (e, kind or "person"))
            if first_only:
                return

    def _fields(self) -> None:
        for match in FIELD.finditer(self.text):
            if match.group(1).strip():
                self._name(match.start(1), match.end(1))
                continue
            at = match.end()
            while item := FIELD_ITEM.match(self.text, at):  # a YAML list under the field
                self._name(item.start(1), item.end(1), first_only=True)
                at = item.end()

    def _sections(self) -> list[tuple[int, int]]:
        if self.people_file:
            return [(0, len(self.text))]
        starts = self.heading_starts
        ends = [*starts[1:], len(self.text)]
        return [(starts[n], ends[n]) for n, people in enumerate(self.heading_people) if people]

    def _lists(self) -> None:
        """A people list's lines: the name a line starts with, and those listed after it."""
        for begin, end in self._sections():
            for line in LIST_LINE.finditer(self.text, begin, end):
                at = line.end()
                stop = self.text.find("\n", at, end)
                stop = end if stop < 0 else stop
                if self.text.startswith("#", at) or at >= stop:
                    continue
                named = names_in(self.text, at, stop)
                if not named or named[0][1] != at or not LINE_END.match(self.text, named[0][2], stop):
                    continue
                previous = named[0][1]
                for name, s, e in named:
                    if s != at and not LIST_BETWEEN.fullmatch(self.text, previous, s):
                        break
                    kind = name_type(name)
                    if kind == "organization" or (not kind and person_shaped(name)):
                        self.named.setdefault(s, (e, kind or "person"))
                    previous = e

    def _signatures(self) -> None:
        for match in SIGN_OFF.finditer(self.text):
            stop = self.text.find("\n", match.end())
            stop = len(self.text) if stop < 0 else stop
            named = names_in(self.text, match.end(), stop)
            if named and named[0][1] == match.end() and named[0][2] == stop and person_shaped(named[0][0]):
                self.named.setdefault(named[0][1], (named[0][2], "person"))


def _credited(before: str) -> bool:
    credit = CREDIT_BEFORE.search(before)
    if credit is None:
        return False
    word = credit.group(1)
    return word is None or word.isdigit() or word.lower() in BY_WORDS


def _role_before(before: str) -> bool:
    role = ROLE_NAME_BEFORE.search(before)
    return role is not None and role.group(1).lower() in ROLE_BEFORE_NOUNS


def _role_after(after: str) -> bool:
    role = ROLE_NAME_AFTER.match(after)
    return role is not None and any(word in ROLE_NOUNS for word in role.group(1).split())


def _subject(before: str, after: str) -> bool:
    """The name starts the sentence and does something people do (``Ada Lovelace approved …``)."""
    if not SUBJECT_START.match(before):
        return False
    verb = NEXT_WORD.match(after)
    return verb is not None and verb.group(1) in PEOPLE_VERBS and after[: verb.start(1)].strip() == ""


def _given(name: str) -> bool:
    words = _words(name)
    return len(words) == 2 and words[0].lower() in GIVEN_NAMES and not words[1].isupper()


def evidence(text: str, s: int, start: int, end: int, e: int) -> str:
    """What the sentence ``text[s:e]`` says the name at ``start:end`` is: ``person``,
    ``organization``, ``project``, ``place``, or ``""`` (nothing)."""
    name = text[start:end]
    kind = name_type(name)
    if kind == "organization" and THING_AFTER.match(text, end, e):
        return ""
    if kind in ("project", "organization"):
        return kind
    if LEGAL_AFTER.match(text, end, e):
        return "organization"
    before, after = text[s:start], text[end:e]
    if person_shaped(name) and (
        EMAIL_AFTER.match(after)
        or HANDLE_AFTER.match(after)
        or _credited(before)
        or _role_before(before)
        or _role_after(after)
        or _subject(before, after)
        or _given(name)
    ):
        return "person"
    if kind:
        return kind
    if ORG_ROLE_BEFORE.search(before) or ORG_ROLE_AFTER.match(after):
        return "organization"
    return ""


def _typed(text: str, s: int, e: int, named: list[tuple[str, int, int]], document: Document) -> list[str]:
    """Each name of one sentence typed by its evidence; a name listed after a credited person
    (``thanks to A B and C D``) is one too."""
    kinds: list[str] = []
    for index, (_, start, end) in enumerate(named):
        given = document.named.get(start)
        kind = given[1] if given is not None and given[0] == end else evidence(text, s, start, end, e)
        if not kind and index and kinds[-1] == "person" and _listed(text, named[index - 1][2], start, end, e):
            kind = "person" if person_shaped(named[index][0]) else ""
        kinds.append(kind)
    return kinds


def _listed(text: str, previous: int, start: int, end: int, e: int) -> bool:
    """Whether a name stands in one list with the name before it: after ``and`` or ``&``, or
    after a comma when the list goes on after it (``A B, C D and E F``; in ``Markus Meyer,
    Nextron Systems --`` the second name is an employer)."""
    between = text[previous:start]
    if len(between) > 6 or not LIST_AFTER.search(between):
        return False
    return between.strip() != "," or bool(LIST_GOES_ON.match(text, end, e))


def find(text: str, statements: Iterable[tuple[str, str | None, int, int]], source_name: str = "") -> list[Found]:
    """Every name one source's statements say (``(knowledge_id, chunk_id, char_start, char_end)``
    each), typed by the evidence the document gives, with what stands beside each; then the names
    its fields, people lists and signatures give outside any statement. A name with no evidence
    is kept with type ``""`` only when the document types it elsewhere (or, in :func:`record`, the
    base already holds it)."""
    document = Document(text, source_name)
    found: list[Found] = []
    spans: list[tuple[int, int, str, str | None]] = []
    for knowledge_id, chunk_id, s, e in statements:
        spans.append((s, e, knowledge_id, chunk_id))
        named = names_in(text, s, e)[:MAX_MENTIONS_PER_STATEMENT]
        for (name, start, end), kind in zip(named, _typed(text, s, e, named, document), strict=True):
            found.append(_beside(Found(name, kind, start, end, knowledge_id, chunk_id), text, s, e))
    known = {fold(f.name): f.type for f in found if f.type}
    known.update({fold(text[s:e]): kind for s, (e, kind) in document.named.items()})
    for entity in found:
        entity.type = entity.type or known.get(fold(entity.name), "")
    found.extend(_outside(text, document, {f.start for f in found}, sorted(spans)))
    return sorted(found, key=lambda f: f.start)


def _outside(text: str, document: Document, said: set[int], spans: list[tuple[int, int, str, str | None]]
             ) -> Iterator[Found]:  # fmt: skip
    """The names a document gives that no statement's names hold: each a mention of the statement
    it stands in, if any."""
    starts = [span[0] for span in spans]
    for start, (end, kind) in sorted(document.named.items()):
        if start in said:
            continue
        index = bisect.bisect_right(starts, start) - 1
        inside = index >= 0 and spans[index][1] >= end
        knowledge_id, chunk_id = (spans[index][2], spans[index][3]) if inside else (None, None)
        line_end = text.find("\n", end)
        yield _beside(Found(text[start:end], kind, start, end, knowledge_id, chunk_id), text, start,
                      len(text) if line_end < 0 else line_end)  # fmt: skip


def _beside(entity: Found, text: str, s: int, e: int) -> Found:
    """What stands beside a name: an e-mail, an abbreviation, a role, the word after it."""
    words = _words(entity.name)
    after = text[entity.end : e]
    email = EMAIL_AFTER.match(after)
    if email:
        entity.emails.append(email.group(1))
    abbreviation = ABBREVIATION.match(after)
    if abbreviation and abbreviation.group(1) == "".join(w[0] for w in words if w[0].isupper()):
        entity.abbreviation = abbreviation.group(1)
    if entity.type in ("person", ""):
        owns = ROLE_AFTER.match(after)
        if owns:
            entity.roles.append(f"{owns.group(1)} owner")
        before = ROLE_BEFORE.search(text[s : entity.start])
        if before:
            entity.roles.append(before.group(1))
        appositive = ROLE_APPOSITIVE.match(after)
        if appositive:
            entity.roles.append(appositive.group(1))
    word = NEXT_WORD.match(after)
    entity.next_word = word.group(1) if word and word.group(1) not in COMMON else None
    return entity


ROLE_AFTER = re.compile(r"[ \t]+owns[ \t]+the[ \t]+((?:[a-z]+[ \t]+){0,3}[a-z]+)\b")
ROLE_BEFORE = re.compile(r"\b[Tt]he[ \t]+((?:[a-z]+[ \t]+){0,2}[a-z]+)[ \t]+is[ \t]+$")
ROLE_APPOSITIVE = re.compile(r",[ \t]+(?:the[ \t]+|our[ \t]+)?((?:[a-z]+[ \t]+){0,2}[a-z]+),")


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


def held_types(db: sqlite3.Connection, ref: str, names: Iterable[str]) -> dict[str, str]:
    """The type of each of these folded names the base already holds as an entity."""
    wanted = sorted(set(names))
    held: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        marks = ",".join("?" * len(batch))
        held.update(
            (str(row[0]), str(row[1]))
            for row in db.execute(
                f"SELECT normalized, type FROM entities WHERE ref = ? AND normalized IN ({marks})", (ref, *batch)
            )
        )
    return held


def record(db: sqlite3.Connection, short_id: Any, ref: str, source_id: str, found: list[Found], at: str) -> int:
    """Write one source's names: entities (created or enriched), mentions, aliases, relationships.

    A name found with no evidence (type ``""``) is a mention only of an entity the base already
    holds under that name; the others are dropped. Each table's rows are written in one batch, in
    the order the names were found (a name's attributes are merged one by one, in that order too)."""
    db.execute("DELETE FROM mentions WHERE source_id = ?", (source_id,))
    db.execute("DELETE FROM relationships WHERE source_id = ?", (source_id,))
    held = held_types(db, ref, (fold(entity.name) for entity in found if not entity.type))
    entities: list[tuple[Any, ...]] = []
    enriched: list[tuple[str, Found]] = []
    aliases: list[tuple[str, str, str, float]] = []
    mentions: list[tuple[Any, ...]] = []
    by_statement: dict[str, list[tuple[Found, str]]] = {}
    for entity in found:
        entity.type = entity.type or held.get(fold(entity.name), "")
        if not entity.type:
            continue
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
        if entity.knowledge_id is not None:
            by_statement.setdefault(entity.knowledge_id, []).append((entity, eid))
    db.executemany(
        "INSERT OR IGNORE INTO entities (entity_id, ref, name, normalized, type, confidence, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        entities,
    )
    for eid, entity in enriched:
        row = db.execute("SELECT attributes FROM entities WHERE entity_id = ?", (eid,)).fetchone()
        attributes = _merge_json(row["attributes"], {"emails": entity.emails, "roles": entity.roles})
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
