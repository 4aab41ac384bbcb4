"""What the middle stages do to a source's text: normalization, chunking, statements.

Everything here is a pure function of the text, so the same document always gives the same
chunks, statements and offsets. The rules (docs: ``local_engine/README.md``, "How the
engine reads a document"):

- **Normalization.** Line ends become ``\\n``, the text is NFC, control characters other than
  tab and newline are dropped. The normalized text is what the source stores and what every
  offset points into.
- **Blocks.** markdown-it-py parses the text (every converter writes the common shape of
  ``layout.py``: headings as ``#`` lines, items as ``- `` lines, code fenced, so one parser finds
  every format's structure): headings, paragraphs, lists, quotes, tables, code. A leading YAML
  frontmatter block is metadata, never a chunk or a statement.
- **Chunks.** A chunk starts at each heading and holds the blocks under it, closed before it
  would pass :data:`CHUNK_TARGET` characters; a block longer than that is cut first
  (:func:`pieces`: at a blank line, else at a list item's or a line's start, else — prose — at a
  sentence's end, else at a space), so no chunk is longer. Its ``char_start``/``char_end`` are
  offsets into the text, ``heading`` the path of headings above it, ``location`` its first line.
- **Statements.** A statement is one sentence of a paragraph, list item or quote (never a
  heading, table or code): at least :data:`MIN_WORDS` words, at most :data:`MAX_CHARS`
  characters, not a question (emphasis and quotes after its ``?`` aside). Its text is the
  sentence with white space folded (the converters wrote no markup: the text is what a reader
  reads); its evidence is the sentence's exact span, in the chunk its first character is in.
  ``type``: ``decision`` (decided, agreed, approved, signed, owns, will, shall), ``requirement``
  (must, required, should, needs to), ``definition`` (``X is a/an/the …``), else ``fact``.
  ``support`` is ``DirectFact`` (the text says it in these words). ``confidence`` starts at 0.9,
  less 0.2 for a hedge (may, might, could, probably, …) and 0.1 for a sentence over 300
  characters. ``effective_date`` is the first date the sentence names; ``subject`` its first
  run of capitalised words (a lone first word does not count), else its heading.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from markdown_it import MarkdownIt

EXTRACTOR = "sentence-rules/1"
"""The name evidence carries for the rules here: one sentence, its exact span."""
CHUNK_TARGET = 1_200
MIN_WORDS = 4
MAX_CHARS = 600
FRONTMATTER = re.compile(r"\A---\n.*?\n(?:---|\.\.\.)\n", re.DOTALL)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
PROSE_BLOCKS = {"paragraph_open", "bullet_list_open", "ordered_list_open", "blockquote_open"}
ABBREVIATIONS = {
    "e.g", "i.e", "mr", "mrs", "ms", "dr", "st", "vs", "etc", "inc", "ltd", "no", "fig", "cf", "jr", "sr", "prof",
    "approx", "dept", "est", "vol", "al",
}  # fmt: skip
CLOSERS = "\"'”’)]*_`"
"""What may close a sentence after its stop: quotes, brackets, emphasis left in a plain text."""
SENTENCE_END = re.compile(r"[.!?](?:[\"'”’)\]*_`]*)(?=\s+|$)")
BULLET = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")
QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
ITEM_START = re.compile(r"\n(?=[ \t]*(?:[-*+>]|\d{1,9}[.)])[ \t])")
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


class AnyCase:
    """A rule whose words match in any case (``re.IGNORECASE``), 2-4x faster on ASCII text: there
    ignoring case is exactly searching the lowered text case-sensitively (the other characters
    IGNORECASE folds to an ASCII letter — the Kelvin sign, the long s, the dotted and dotless i —
    are not ASCII, and lowering ASCII keeps every offset)."""

    def __init__(self, pattern: str) -> None:
        self.any_case = re.compile(pattern, re.IGNORECASE)
        self.lowered = re.compile(pattern)

    def said_in(self, text: str) -> bool:
        found = self.lowered.search(text.lower()) if text.isascii() else self.any_case.search(text)
        return found is not None


TYPES = (
    ("decision", AnyCase(r"\b(decided|decision|agreed|approved|signed|owns|own|will|shall)\b")),
    ("requirement", AnyCase(r"\b(must|required|requires|should|needs? to)\b")),
    ("definition", AnyCase(r"^[\w\s\-'’]{1,60}?\b(is|are) (a|an|the)\b")),
)
HEDGES = AnyCase(r"\b(may|might|could|possibly|probably|perhaps|likely|unclear|roughly|approximately)\b")
MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
         "november", "december")
    )
}  # fmt: skip
MONTH = r"(January|February|March|April|May|June|July|August|September|October|November|December)"
ORDINAL = r"(?:st|nd|rd|th)?"
MONTH_NAMED = re.compile(MONTH)
DATES = (
    (re.compile("-"), re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), lambda m: (int(m[1]), int(m[2]), int(m[3]))),
    (MONTH_NAMED, re.compile(MONTH + r"\s+(\d{1,2})" + ORDINAL + r",?\s+(\d{4})"), lambda m: (int(m[3]), MONTHS[m[1].lower()], int(m[2]))),  # noqa: E501
    (MONTH_NAMED, re.compile(r"\b(\d{1,2})" + ORDINAL + r"\s+" + MONTH + r",?\s+(\d{4})"), lambda m: (int(m[3]), MONTHS[m[2].lower()], int(m[1]))),  # noqa: E501
)  # fmt: skip
"""(what every match contains, the date's pattern, its year, month and day): a sentence without
the first (a hyphen, a month's name), most of them, is not searched for the second."""
CAPITALISED = re.compile(
    r"(?<![\w.])(?:[A-Z][\w&'’.-]*|[A-Z]\.)(?:\s+(?:of\s+|the\s+|and\s+)?(?:[A-Z][\w&'’.-]*|[A-Z]\.))*"
)


def excerpt_hash(excerpt: str) -> str:
    """The SHA-256 an evidence row keeps of its excerpt (its UTF-8), as ``sha256:<hex>``."""
    return "sha256:" + hashlib.sha256(excerpt.encode("utf-8")).hexdigest()


def normalize(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return CONTROL.sub("", unicodedata.normalize("NFC", text))


@dataclass(frozen=True)
class Block:
    kind: str  # heading | prose | table | code | other
    start: int
    end: int
    level: int = 0
    heading: str = ""


@dataclass(frozen=True)
class ChunkSpan:
    index: int
    start: int
    end: int
    heading: str
    line: int


@dataclass(frozen=True)
class SentenceSpan:
    start: int
    end: int
    statement: str
    chunk_index: int
    heading: str


class Lines:
    """Offsets to 1-based line numbers and back."""

    def __init__(self, text: str) -> None:
        self.starts = [0, *itertools.accumulate(len(line) + 1 for line in text.split("\n")[:-1])]
        self.length = len(text)

    def offset(self, line: int) -> int:  # line is 0-based here (markdown-it's maps)
        return self.starts[line] if line < len(self.starts) else self.length

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)


class LineMap:
    """For each line of a source's text, the line of the file it came from: what an excerpt's
    ``location`` names when a converter wrote the text a reader sees rather than the file as it
    is (reStructuredText, Markdown). Kept as runs, ``[[text line, file line], …]`` (1-based): from
    a run's first line on, each line is the next file line, until the next run. None: the text's
    lines are the file's (plain text, HTML, PDF, DOCX, a store an older engine wrote)."""

    def __init__(self, runs: Sequence[Sequence[int]] = ()) -> None:
        self.starts = [run[0] for run in runs]
        self.lines = [run[1] for run in runs]

    @classmethod
    def of(cls, file_lines: Sequence[int]) -> LineMap:
        """From each text line's file line, in order."""
        runs: list[list[int]] = []
        for number, line in enumerate(file_lines, 1):
            if not runs or line != runs[-1][1] + number - runs[-1][0]:
                runs.append([number, line])
        return cls(runs)

    @classmethod
    def loads(cls, kept: str | None) -> LineMap:
        return cls(json.loads(kept) if kept else ())

    def dumps(self) -> str | None:
        """What a source keeps (``sources.line_map``): none when each line is the file's own."""
        if all(start == line for start, line in zip(self.starts, self.lines, strict=True)):
            return None
        return json.dumps([[start, line] for start, line in zip(self.starts, self.lines, strict=True)])

    def file_line(self, line: int) -> int:
        """The file's line of the text's ``line`` (1-based)."""
        at = bisect.bisect_right(self.starts, line) - 1
        return line if at < 0 else self.lines[at] + line - self.starts[at]


_PARSER = MarkdownIt("commonmark").enable("table")


def blocks(text: str) -> list[Block]:
    """The text's top-level blocks, in order, as character spans (frontmatter skipped)."""
    lines = Lines(text)
    skip = 0
    front = FRONTMATTER.match(text)
    if front:
        skip = lines.line_of(front.end()) - 1
    found: list[Block] = []
    tokens = _PARSER.parse(text)
    for number, token in enumerate(tokens):
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        first, last = token.map
        if first < skip:
            continue
        start, end = lines.offset(first), lines.offset(last)
        while end > start and text[end - 1] == "\n":
            end -= 1
        if token.type == "heading_open":
            inline = tokens[number + 1].content if number + 1 < len(tokens) else ""
            found.append(Block("heading", start, end, int(token.tag[1]), clean(inline)))
        elif token.type in PROSE_BLOCKS:
            found.append(Block("prose", start, end))
        elif token.type == "table_open":
            found.append(Block("table", start, end))
        elif token.type in ("fence", "code_block"):
            found.append(Block("code", start, end))
        else:
            found.append(Block("other", start, end))
    return found


def chunk(text: str, structure: list[Block]) -> list[ChunkSpan]:
    """Heading-aware chunks: each heading opens one, and one is closed before it would pass
    CHUNK_TARGET (a block longer than that is cut into :func:`pieces` first)."""
    lines = Lines(text)
    spans: list[ChunkSpan] = []
    path: list[tuple[int, str]] = []
    current: list[tuple[int, int]] = []

    def close() -> None:
        if current:
            start, end = current[0][0], current[-1][1]
            heading = " › ".join(h for _, h in path)
            spans.append(ChunkSpan(len(spans), start, end, heading, lines.line_of(start)))
            current.clear()

    for block in structure:
        if block.kind == "heading":
            close()
            path[:] = [(lv, h) for lv, h in path if lv < block.level] + [(block.level, block.heading)]
            current.append((block.start, block.end))
            continue
        for start, end in pieces(text, block):
            if current and end - current[0][0] > CHUNK_TARGET:
                close()
            current.append((start, end))
    close()
    return spans


def pieces(text: str, block: Block) -> list[tuple[int, int]]:
    """A block as spans of at most CHUNK_TARGET characters: cut at a blank line, else at a list
    item's (or, not prose, a line's) start, else (prose) after a sentence, else at a space, else
    where it must be."""
    start, end = block.start, block.end
    if end - start <= CHUNK_TARGET:
        return [(start, end)]
    stops = _sentence_ends(text, start, end) if block.kind == "prose" else []
    found: list[tuple[int, int]] = []
    while end - start > CHUNK_TARGET:
        cut = _cut(text, block.kind, start, start + CHUNK_TARGET, stops)
        kept = len(text[start:cut].rstrip())
        if kept:
            found.append((start, start + kept))
        start = cut + len(text[cut:end]) - len(text[cut:end].lstrip())
    if end > start:
        found.append((start, end))
    return found


def _cut(text: str, kind: str, start: int, limit: int, stops: list[int]) -> int:
    """Where a piece of a long block starting at ``start`` ends, at most at ``limit``."""
    blank = text.rfind("\n\n", start + 1, limit)
    if blank > start:
        return blank + 1
    if kind == "prose":
        items = [found.start() for found in ITEM_START.finditer(text, start + 1, limit)]
        if items:
            return items[-1] + 1
        before = bisect.bisect_right(stops, limit) - 1
        if before >= 0 and stops[before] > start:
            return stops[before]
    else:
        line = text.rfind("\n", start + 1, limit)
        if line > start:
            return line + 1
    space = max(text.rfind(" ", start + 1, limit), text.rfind("\n", start + 1, limit))
    return space if space > start else limit


def clean(text: str) -> str:
    """White space folded (a no-break space that kept a line prose included): what a person reads.
    The converters wrote no markup, so there is none to take away."""
    return " ".join(text.split())


def is_question(statement: str) -> bool:
    """A sentence that asks (its ``?`` followed by nothing but quotes, brackets or emphasis)."""
    return statement.rstrip(CLOSERS + " ").endswith("?")


def _units(text: str, block: Block) -> list[tuple[int, int]]:
    """A prose block's units: each list item or quote line run, or the paragraph, without markers."""
    body = text[block.start : block.end]
    if not (BULLET.match(body) or QUOTE.match(body)):
        return [(block.start, block.end)]
    units: list[tuple[int, int]] = []
    offset = block.start
    for line in body.split("\n"):
        marker = BULLET.match(line) or QUOTE.match(line)
        lead = marker.end() if marker else len(line) - len(line.lstrip())
        start, end = offset + lead, offset + len(line.rstrip())
        if marker or not units:
            if end > start:
                units.append((start, end))
        elif end > start:
            units[-1] = (units[-1][0], end)  # a continuation line of the item
        offset += len(line) + 1
    return units


def _sentence_ends(text: str, start: int, end: int) -> list[int]:
    ends = []
    for match in SENTENCE_END.finditer(text, start, end):
        before = text[max(start, match.start() - 40) : match.start()]  # the word before the stop, not the run
        word = re.search(r"([\w.]+)$", before)
        last = (word.group(1) if word else "").lower()
        if (len(last) == 1 and last.isalpha()) or last.rstrip(".") in ABBREVIATIONS:
            continue  # "R. Smith", "e.g."
        if re.search(r"\d$", before) and match.end() < end and text[match.end() : match.end() + 1].isdigit():
            continue
        ends.append(match.end())
    if not ends or ends[-1] < end:
        ends.append(end)
    return ends


def sentences(text: str, structure: list[Block], spans: list[ChunkSpan]) -> list[SentenceSpan]:
    """Every statement-worthy sentence of the prose blocks, with its exact span and the chunk its
    first character is in."""
    starts = [c.start for c in spans]
    found: list[SentenceSpan] = []
    for block in structure:
        if block.kind != "prose":
            continue
        for unit_start, unit_end in _units(text, block):
            cursor = unit_start
            for stop in _sentence_ends(text, unit_start, unit_end):
                raw = text[cursor:stop]
                lead = len(raw) - len(raw.lstrip())
                s, e = cursor + lead, cursor + len(raw.rstrip())
                cursor = stop
                if e <= s:
                    continue
                statement = clean(text[s:e])
                words = WORD.findall(statement)
                if len(words) < MIN_WORDS or len(statement) > MAX_CHARS or is_question(statement):
                    continue
                index = max(0, bisect.bisect_right(starts, s) - 1)
                found.append(SentenceSpan(s, e, statement, index, spans[index].heading if spans else ""))
    return found


def statement_type(statement: str) -> str:
    return next((name for name, rule in TYPES if rule.said_in(statement)), "fact")


def confidence(statement: str) -> float:
    value = 0.9 - (0.2 if HEDGES.said_in(statement) else 0.0) - (0.1 if len(statement) > 300 else 0.0)
    return round(value, 2)


def first_date(statement: str) -> str | None:
    found: list[tuple[int, str]] = []
    for contained, pattern, parts in DATES:
        if contained.search(statement) is None:
            continue
        for match in pattern.finditer(statement):
            try:
                found.append((match.start(), date(*parts(match)).isoformat()))
            except ValueError:
                continue
    return min(found)[1] if found else None


def subject(statement: str, heading: str) -> str | None:
    for match in CAPITALISED.finditer(statement):
        phrase = match.group(0).rstrip(".")
        if match.start() == 0 and " " not in phrase:
            continue  # one word capitalised because it starts the sentence
        if phrase and phrase.split()[0].lower() not in MONTHS:
            return phrase
    return heading.rsplit(" › ", maxsplit=1)[-1] if heading else None


def title(statement: str, limit: int = 80) -> str:
    if len(statement) <= limit:
        return statement.rstrip(".")
    cut = statement[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"
