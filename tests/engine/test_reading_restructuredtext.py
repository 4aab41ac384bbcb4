"""reStructuredText is read as a reader sees it (docutils, Sphinx's roles and directives read
generically): every prose sentence is a statement with no markup, no code line is, a section under
a ``~~~~`` underline keeps its statements, and each excerpt is the extracted text at its offsets
and names the file's line (issue 55)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from local_engine.ingestion import converters, pipeline
from local_engine.store.database import Store
from tests.documents import read_to_validation

GUIDE = """\
.. _how-can-i-help:

=================
Lighthouse keeper
=================

The keeper lights the lamp at dusk every evening.

Lamps
~~~~~

See :ref:`the ferry guide <ferry-guide>` and :doc:`/topics/tides` before a
shift, and set :setting:`LAMP_COLOUR` when the fog rolls in.
Call :func:`lamp.turn_on` once the tide table says so.

.. versionadded:: 4.2 The :meth:`~lighthouse.Lamp.dim` method takes
   a *brightness* level.

   The beacon keeps its **last** brightness after a restart.

.. method:: select_related(*fields)
   :noindex:

   Returns a query that follows the harbour's foreign keys when evaluated.

.. code-block:: pycon
   :emphasize-lines: 1

    >>> beacon = lamp.turn_on(None)
    >>> beacon.dim(brightness=3)

Shifts
~~~~~~

.. toctree::
   :maxdepth: 2

   ferry
   tides

**How do I turn the beacon into an aware
datetime?**

- The first mate rows to the outer buoy daily.
- The second mate logs every passing ship.

Example::

    keeper.log("a literal block is never a statement")

.. note::

   The keeper reads the weather bulletin before each shift.
"""
PROSE = {
    "The keeper lights the lamp at dusk every evening.": 7,
    "See the ferry guide and /topics/tides before a shift, and set LAMP_COLOUR when the fog rolls in.": 12,
    "Call lamp.turn_on once the tide table says so.": 14,
    "The dim method takes a brightness level.": 16,
    "The beacon keeps its last brightness after a restart.": 19,
    "Returns a query that follows the harbour's foreign keys when evaluated.": 24,
    "The first mate rows to the outer buoy daily.": 44,
    "The second mate logs every passing ship.": 45,
    "The keeper reads the weather bulletin before each shift.": 53,
}
"""Every prose sentence of GUIDE, as a reader reads it, and the file's line it starts on."""
MARKUP = re.compile(r"``|\*\*|:\w+:|`|::|\.\. |_how|>>>|<|>")
REPRO = (
    "S\n=\n\nA\n~~~~\n\nThe first setting controls the harbour ferry timetable.\n\n"
    "B\n~~~~\n\nThe second setting controls the lighthouse lamp schedule.\n"
)


@pytest.fixture(scope="module")
def guide(tmp_path_factory: pytest.TempPathFactory) -> Store:
    folder = tmp_path_factory.mktemp("rst")
    (folder / "keeper.rst").write_text(GUIDE)
    return read_to_validation(folder)


def test_every_prose_sentence_is_a_statement_with_no_markup_and_no_code_line_is(guide: Store) -> None:
    statements = [row[0] for row in guide.rows("SELECT statement FROM statements ORDER BY char_start")]
    assert statements == list(PROSE)
    for statement in statements:
        assert not MARKUP.search(statement), statement
    text = guide.value("SELECT text FROM sources")
    assert "beacon = lamp.turn_on(None)" in text  # code stays the reader's text, fenced: never a statement
    assert not re.search(r"Unknown|toctree|maxdepth|noindex|emphasize|how-can-i-help|versionadded", text)


def test_each_excerpt_is_the_text_at_its_offsets_and_names_the_files_line(guide: Store) -> None:
    source = guide.row("SELECT * FROM sources")
    assert source is not None and source["parser"] == "restructuredtext"
    rows = guide.rows(
        "SELECT s.statement, e.char_start, e.char_end, e.line, e.location, e.excerpt_hash FROM statements s"
        " JOIN evidence e USING (knowledge_id)"
    )
    assert len(rows) == len(PROSE)
    for row in rows:
        excerpt = source["text"][row["char_start"] : row["char_end"]]
        assert " ".join(excerpt.split()) == row["statement"]
        assert pipeline.sha256(excerpt.encode()) == row["excerpt_hash"]
        assert (row["line"], row["location"]) == (PROSE[row["statement"]], f"line {PROSE[row['statement']]}")
        assert excerpt.split()[0] in GUIDE.split("\n")[row["line"] - 1]


def test_a_section_under_a_tilde_underline_keeps_its_statements_under_its_heading(tmp_path: Path) -> None:
    (tmp_path / "s.rst").write_text(REPRO)
    store = read_to_validation(tmp_path)
    found = store.rows(
        "SELECT s.statement, c.heading, e.location FROM statements s JOIN chunks c USING (chunk_id)"
        " JOIN evidence e USING (knowledge_id) ORDER BY s.char_start"
    )
    assert [tuple(row) for row in found] == [
        ("The first setting controls the harbour ferry timetable.", "S › A", "line 7"),
        ("The second setting controls the lighthouse lamp schedule.", "S › B", "line 12"),
    ]


def test_an_object_description_is_a_heading_over_its_bodys_statements(guide: Store) -> None:
    heading = guide.value(
        "SELECT c.heading FROM statements s JOIN chunks c USING (chunk_id) WHERE s.statement LIKE 'Returns a query%'"
    )
    assert heading == "Lighthouse keeper › Lamps › select_related(*fields)"


QUESTION = "**How do I turn the beacon into an aware\ndatetime?**\n\nThe lamp is lit at dusk daily.\n"


FAQS = [("faq.rst", "FAQ\n===\n\n" + QUESTION), ("faq.md", "# FAQ\n\n" + QUESTION), ("faq.text", QUESTION)]


@pytest.mark.parametrize(("name", "content"), FAQS)
def test_a_bold_question_wrapped_over_two_lines_is_no_statement(tmp_path: Path, name: str, content: str) -> None:
    (tmp_path / name).write_text(content)
    store = read_to_validation(tmp_path)
    assert [row[0] for row in store.rows("SELECT statement FROM statements")] == ["The lamp is lit at dusk daily."]


def test_roles_and_directives_docutils_does_not_know_give_their_words_never_errors(tmp_path: Path) -> None:
    (tmp_path / "harbour.rst").write_text(
        "Harbour\n=======\n\n.. setting:: TIDE_GAUGE\n\n   The gauge reads the water level every ten minutes.\n\n"
        ".. harbour-notice::\n   :level: high\n\n   Ships wait outside the breakwater during a storm.\n\n"
        "Fixed in :ticket:`4521` and described in :pep:`8` by the harbour office.\n\n"
        ".. autoclass:: harbour.Gauge\n   :members:\n\n.. index:: gauge, tide\n\n.. only:: html\n\n   Only for html.\n"
    )
    store = read_to_validation(tmp_path)
    text = store.value("SELECT text FROM sources")
    assert "## TIDE_GAUGE" in text and "Only for html" not in text and "harbour.Gauge" not in text
    assert [row[0] for row in store.rows("SELECT statement FROM statements ORDER BY char_start")] == [
        "The gauge reads the water level every ten minutes.",
        "Ships wait outside the breakwater during a storm.",
        "Fixed in 4521 and described in PEP 8 by the harbour office.",
    ]


def test_a_txt_page_in_restructuredtext_is_read_as_one_and_plain_text_as_written() -> None:
    page = converters.extract("faq.txt", b"FAQ\n===\n\nSee :doc:`tides` for the keeper's hours.\n")
    assert page.parser == "restructuredtext" and page.text == "# FAQ\n\nSee tides for the keeper's hours.\n"
    assert page.line_map == [1, 2, 4]
    notes = converters.extract("notes.txt", b"The keeper's hours: dusk to dawn.\n")
    assert (notes.parser, notes.text, notes.line_map) == ("text", "The keeper's hours: dusk to dawn.\n", [])
