"""The shapes of identifiers, held before anything is sent anywhere."""

from __future__ import annotations

import re

from knowledge_service.errors import BadRequest

# Each shape is written once, as a pattern both this module and the API's own description
# use: ``^…$`` means the same in Python's ``re.fullmatch``, pydantic's Rust regex and the
# ECMA regex of JSON Schema (no flags, no lookaround, ASCII classes only).

PROJECT_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"
PROJECT_ID = re.compile(PROJECT_ID_PATTERN)
"""An ANTHILL project id: lower case, digits, '-' and '_', at most 63 characters."""

PROJECT_OR_DEFAULT_PATTERN = r"^([a-z0-9][a-z0-9_-]{0,62})?$"
"""A project id, or ``""``: the console default (as the parameter left out)."""

KNOWLEDGE_BASE_PATTERN = r"^[a-z0-9_]{1,64}$"
KNOWLEDGE_BASE = re.compile(KNOWLEDGE_BASE_PATTERN)
"""A FORAGER project ref, as FORAGER mints them (docs/upstream-contract.md)."""

KNOWLEDGE_BASE_OR_UNBIND_PATTERN = r"^([a-z0-9_]{1,64})?$"
"""A FORAGER project ref, or ``""``: unbind."""

BLANK = " \t\n\r\f\v"
"""What a text field is trimmed of (ASCII whitespace, the same in every regex dialect)."""
BLANK_CLASS = r" \t\n\r\f\v"
"""``BLANK`` as the inside of a regex character class."""

NOT_BLANK_PATTERN = r"[^ \t\n\r\f\v]"
"""Text with something in it besides ``BLANK`` (unanchored: a search, as JSON Schema's pattern is)."""

PROJECT_PROBLEM = "is not a project id (lower-case letters, digits, '-' and '_', at most 63)."
KNOWLEDGE_BASE_PROBLEM = "is not a FORAGER project ref (lower-case letters, digits and '_', at most 64)."


def project_id(value: str, field: str = "project") -> str:
    if not PROJECT_ID.fullmatch(value):
        raise BadRequest(field, PROJECT_PROBLEM)
    return value


def knowledge_base(value: str, field: str = "knowledge_base") -> str:
    if not KNOWLEDGE_BASE.fullmatch(value):
        raise BadRequest(field, KNOWLEDGE_BASE_PROBLEM)
    return value


RECORD_KINDS = {
    "ki": "statement",
    "ent": "entity",
    "src": "source",
    "cf": "disagreement",
    "mc": "possible duplicate",
    "exp": "export",
}
"""The record ids FORAGER mints: ``<prefix>_`` and 16 lower-case hex digits."""

FORAGER_WORD = re.compile(r"^[a-z0-9_]+$")
"""A FORAGER filter word: lower case, digits and underscores."""

FORAGER_WORDS_PATTERN = r"^( *[a-z0-9_]+ *(, *[a-z0-9_]+ *)*)?$"
"""A filter: FORAGER's words, comma-separated, spaces around each allowed; ``""`` filters nothing."""

FORAGER_WORDS_PROBLEM = "takes FORAGER's words: lower-case letters, digits and '_', comma-separated."


def record_pattern(prefix: str) -> str:
    """The shape of a FORAGER ``prefix`` id: ``<prefix>_`` and 16 lower-case hex digits."""
    return rf"^{prefix}_[0-9a-f]{{16}}$"


def record_problem(prefix: str) -> str:
    return f"is not a FORAGER {RECORD_KINDS[prefix]} id ({prefix}_ and 16 hex digits)."


def record_id(value: str, prefix: str, field: str = "id") -> str:
    """``value`` held to the shape of a FORAGER ``prefix`` id before anything is sent."""
    if not re.fullmatch(record_pattern(prefix), value):
        raise BadRequest(field, record_problem(prefix))
    return value


def forager_words(value: str | None, field: str) -> list[str]:
    """A filter of FORAGER's own words, one or several comma-separated; [] when absent."""
    if value is None or value == "":
        return []
    words = [word.strip(" ") for word in value.split(",")]
    if any(not FORAGER_WORD.fullmatch(word) for word in words):
        raise BadRequest(field, FORAGER_WORDS_PROBLEM)
    return list(dict.fromkeys(words))


JOB_ID_PATTERN = r"^job_[0-9a-f]{16}$"
JOB_ID_PROBLEM = "is not a job id (job_ and 16 lower-case hex digits)."
SESSION_ID_PATTERN = r"^ups_[0-9a-f]{32}$"
SESSION_ID_PROBLEM = "is not an upload session id (ups_ and 32 lower-case hex digits)."
ADMISSION_ID_PATTERN = r"^adm_[0-9a-f]{16}$"
ADMISSION_ID_OR_NONE_PATTERN = r"^(adm_[0-9a-f]{16})?$"
"""An admission id, or ``""``: none (a form field left empty)."""
ADMISSION_ID_PROBLEM = "is not an admission id (adm_ and 16 lower-case hex digits)."
DEAD_LETTER_ID_PATTERN = r"^dl_[0-9a-f]{20}$"
DEAD_LETTER_ID_PROBLEM = "is not a dead letter id (dl_ and 20 lower-case hex digits)."

EVENT_ACT_PATTERN = r"^[a-z][a-z0-9_]{0,63}(\.[a-z][a-z0-9_]{0,63}){0,3}$"
"""An event type (``knowledge_curated``, or dotted as ``platform.deadletter.discarded``) or a
curation act; at most 64 characters (``EVENT_ACT_MAX``), which the pattern alone does not bound."""
EVENT_ACT_MAX = 64
EVENT_ACT_PROBLEM = (
    "is an event type or a curation act (at most 64 lower-case letters, digits and '_', words joined by '.')."
)

EVENTS_CURSOR_PATTERN = r"^([0-9T:.+\-]{10,40}#[0-9a-f]{32})?$"
"""``GET /knowledge/events``' cursor: a position in the log, newest first — a row's ``recorded``
key (its time, ``#``, its event id), as ``next_cursor`` gives it; ``""`` is the start. Every
value of this shape is a position: the page is the rows recorded before it (none, if it is
older than the log), never a refusal."""
EVENTS_CURSOR_PROBLEM = "is not a position in the log (a next_cursor this route gave)."

CHANGES_CURSOR_PATTERN = r"^[0-9T:.+\-Z]{10,40}#[0-9a-f]{1,64}$"
"""``GET /knowledge/changes``' cursor: a place in the knowledge base's findings, newest first — a
finding's ``detected_at``, ``#``, its id, as ``next_cursor`` gives it. Every value of this shape
is a position: the page is the findings after it (none, if it is older than them all)."""
CHANGES_CURSOR_MAX = 110
CHANGES_CURSOR_PROBLEM = "is not a place in the findings (a next_cursor this route gave)."

ACTIONS_CURSOR_PATTERN = r"^[^#]{1,64}#[\s\S]*$"
"""``GET /knowledge/feed``'s ``actions_after``: a position in the actions' order,
``<claimed_at>#<effect_key>`` (split at the first ``#``; a claim time never holds one). Every
value of this shape is a position: one that names no action answers the actions older than it
(none, or all), never a refusal."""
ACTIONS_CURSOR_PROBLEM = "is not a position in the actions (<claimed_at>#<effect_key>, as actions_cursor gives)."

PATTERN_PROBLEMS: dict[str, str] = {
    EVENTS_CURSOR_PATTERN: EVENTS_CURSOR_PROBLEM,
    ACTIONS_CURSOR_PATTERN: ACTIONS_CURSOR_PROBLEM,
    PROJECT_ID_PATTERN: PROJECT_PROBLEM,
    PROJECT_OR_DEFAULT_PATTERN: PROJECT_PROBLEM,
    KNOWLEDGE_BASE_PATTERN: KNOWLEDGE_BASE_PROBLEM,
    KNOWLEDGE_BASE_OR_UNBIND_PATTERN: KNOWLEDGE_BASE_PROBLEM,
    FORAGER_WORDS_PATTERN: FORAGER_WORDS_PROBLEM,
    NOT_BLANK_PATTERN: "is required.",
    JOB_ID_PATTERN: JOB_ID_PROBLEM,
    EVENT_ACT_PATTERN: EVENT_ACT_PROBLEM,
    SESSION_ID_PATTERN: SESSION_ID_PROBLEM,
    ADMISSION_ID_PATTERN: ADMISSION_ID_PROBLEM,
    ADMISSION_ID_OR_NONE_PATTERN: ADMISSION_ID_PROBLEM,
    DEAD_LETTER_ID_PATTERN: DEAD_LETTER_ID_PROBLEM,
    **{record_pattern(prefix): record_problem(prefix) for prefix in RECORD_KINDS},
}
"""What a value that misses each declared pattern is told: the same words the checks above use,
so a refusal reads the same whether the edge's validation or the domain's check caught it."""
