"""Markdown is read as a reader sees it (markdown-it-py and its plugins): an admonition's body and
a footnote's text are prose, while ``!!!`` lines, ``[^1]`` markers, ``{ #id }`` attribute lists,
HTML comments and tags, front matter and code never reach a statement; each excerpt is the
extracted text at its offsets and names the file's line (issue 55)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from local_engine.ingestion import converters, pipeline
from local_engine.store.database import Store
from tests.documents import read_to_validation

NOTES = """\
---
title: Ferry notes
document_date: 2026-02-01
---
# Ferry notes { #ferry }

The harbour ferry leaves **pier four** at nine every
morning[^1], weather permitting. <!-- the timetable moves in May -->

<!-- a block comment
the reader never sees -->

!!! note "Before you board"
    Passengers must show a `ticket` at the gate.

    Bicycles travel free on the [lower deck](deck.md).

The captain reads the tide table before each crossing.
{ .lead }

## Crew { #crew }

- The crew checks the life rafts each *Monday*.
- The <kbd>horn</kbd> sounds twice before the ferry departs.

| day | time |
| --- | ---- |
| Monday | the ferry leaves at nine |

```python
ferry.leave(at="09:00")  # code is never a statement
```

**Why does the ferry wait for the
tide?**

[^1]: The morning crossing takes forty minutes in calm water.
"""
PROSE = {
    "The harbour ferry leaves pier four at nine every morning, weather permitting.": 7,
    "Passengers must show a ticket at the gate.": 14,
    "Bicycles travel free on the lower deck.": 16,
    "The captain reads the tide table before each crossing.": 18,
    "The crew checks the life rafts each Monday.": 23,
    "The horn sounds twice before the ferry departs.": 24,
    "The morning crossing takes forty minutes in calm water.": 37,
}
"""Every prose sentence of NOTES, as a reader reads it, and the file's line it starts on."""
DEMO = Path(__file__).resolve().parents[2] / "local_engine" / "demo"
MARKUP = re.compile(r"!!!|\[\^|\{|<|>|\*|`|\]\(|\|")


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Store:
    folder = tmp_path_factory.mktemp("md")
    (folder / "ferry.md").write_text(NOTES)
    return read_to_validation(folder)


def test_every_prose_sentence_is_a_statement_with_no_markup(notes: Store) -> None:
    statements = [row[0] for row in notes.rows("SELECT statement FROM statements ORDER BY char_start")]
    assert statements == list(PROSE)
    for statement in statements:
        assert not MARKUP.search(statement), statement
    source = notes.row("SELECT * FROM sources")
    assert source is not None and source["document_date"] == "2026-02-01"
    for hidden in ("<!--", "timetable moves", "block comment", "Before you board", "{ ", "[^1]", "<kbd>"):
        assert hidden not in source["text"], hidden
    assert 'ferry.leave(at="09:00")' in source["text"]  # code stays the reader's text: fenced, never a statement


def test_each_excerpt_is_the_text_at_its_offsets_and_names_the_files_line(notes: Store) -> None:
    source = notes.row("SELECT * FROM sources")
    assert source is not None
    rows = notes.rows(
        "SELECT s.statement, e.char_start, e.char_end, e.line, e.location, e.excerpt_hash FROM statements s"
        " JOIN evidence e USING (knowledge_id)"
    )
    assert len(rows) == len(PROSE)
    for row in rows:
        excerpt = source["text"][row["char_start"] : row["char_end"]]
        assert " ".join(excerpt.split()) == row["statement"]
        assert pipeline.sha256(excerpt.encode()) == row["excerpt_hash"]
        assert (row["line"], row["location"]) == (PROSE[row["statement"]], f"line {PROSE[row['statement']]}")
        assert excerpt.split()[0] in NOTES.split("\n")[row["line"] - 1]


def test_chunks_follow_the_headings_and_name_the_files_line(notes: Store) -> None:
    chunks = [tuple(row) for row in notes.rows("SELECT heading, line FROM chunks ORDER BY idx")]
    assert chunks == [("Ferry notes", 5), ("Ferry notes › Crew", 21)]


def test_markdown_with_nothing_to_take_away_is_its_own_text() -> None:
    """Front matter, headings and plain paragraphs are written as they are: the text is the file."""
    paths = sorted(DEMO.glob("*/*.md"))
    assert len(paths) == 7
    for path in paths:
        read = converters.extract(path.name, path.read_bytes())
        assert read.text == path.read_text() and read.line_map == list(range(1, read.text.count("\n") + 1)), path


def test_a_line_that_would_open_a_block_stays_prose() -> None:
    """An escaped ``1996\\.`` or ``\\#`` starts a line of prose: it is kept prose (a no-break space
    before it), never a list, a heading or a fence, and the statement reads as the file does."""
    written = b"# Dates\n\nThe pier opened in\n1996\\. The ferry first sailed\n\\# 3 in May.\n"
    read = converters.extract("dates.md", written)
    assert read.text == "# Dates\n\nThe pier opened in\n\u00a01996. The ferry first sailed\n\u00a0# 3 in May.\n"
    assert read.line_map == [1, 2, 3, 4, 5]
