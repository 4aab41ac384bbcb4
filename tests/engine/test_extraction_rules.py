"""The reading rules' documented numbers, held on files the tests write and read through the
engine's stages (issue 57: a mutation round found them unheld): a statement's title is the
sentence up to 80 characters, else cut at a space with an ellipsis; a chunk closes before it
would pass 1,200 characters; confidence loses 0.1 past 300 characters; a sentence that names no
one takes its heading's last part as its subject."""

from __future__ import annotations

from pathlib import Path

from local_engine.store.database import Store
from tests.documents import read_to_validation

WOODS = (
    "The quay crane lifts oak, ash, teak, pine, elm, birch, cedar, larch, spruce, walnut, maple, beech, alder, "
    "poplar, willow, cherry, hazel, yew, rowan, holly, linden, hornbeam, chestnut, sycamore, juniper, cypress, "
    "fir, hemlock, redwood, ebony, mahogany, balsa, acacia onto the timber wagons at "
)


def _pairs(store: Store, read: str) -> dict[str, str | None]:
    return {row[0]: row[1] for row in store.rows(read)}


def _statements(store: Store) -> dict[str, tuple[str, str | None, float]]:
    rows = store.rows("SELECT statement, title, subject, confidence FROM statements")
    return {row[0]: (row[1], row[2], row[3]) for row in rows}


def test_a_title_is_the_sentence_up_to_80_characters_and_a_longer_one_is_cut_at_a_space(tmp_path: Path) -> None:
    eighty = "The harbour crane lifts forty tonnes of timber onto the quay at dawn, every day."
    longer = "The harbour crane lifts forty tonnes of timber onto the quay at dawn each Monday."
    assert (len(eighty), len(longer)) == (80, 81)
    (tmp_path / "crane.md").write_text(f"# Crane\n\n{eighty}\n\n{longer}\n")
    statements = _statements(read_to_validation(tmp_path))
    assert statements[eighty][0] == "The harbour crane lifts forty tonnes of timber onto the quay at dawn, every day"
    assert statements[longer][0] == "The harbour crane lifts forty tonnes of timber onto the quay at dawn each…"


def test_a_chunk_holds_1200_characters_and_closes_before_the_1201st(tmp_path: Path) -> None:
    filler = "The quay crane lifts timber at dawn every day " * 40
    for name, size in (("exact.md", 1_200), ("over.md", 1_201)):
        heading = "# Quay\n\n"
        body = filler[: size - len(heading) - 1].rstrip()
        body += "." * (size - len(heading) - len(body))
        (tmp_path / name).write_text(heading + body + "\n")
    store = read_to_validation(tmp_path)
    read = "SELECT c.text FROM chunks c JOIN sources s USING (source_id) WHERE s.name LIKE ? ORDER BY c.idx"
    exact = [row[0] for row in store.rows(read, "%exact.md")]
    over = [row[0] for row in store.rows(read, "%over.md")]
    assert [len(c) for c in exact] == [1_200]  # the heading and its paragraph: one chunk at the limit
    assert over[0] == "# Quay" and [len(c) for c in over[1:]] == [1_201 - len("# Quay\n\n")]  # closed before it


def test_confidence_loses_a_tenth_past_300_characters(tmp_path: Path) -> None:
    at_300, at_301 = WOODS + "sunrise.", WOODS + "daybreak."
    assert (len(at_300), len(at_301)) == (300, 301)
    (tmp_path / "woods.md").write_text(f"# Woods\n\n{at_300}\n\n{at_301}\n")
    statements = _statements(read_to_validation(tmp_path))
    assert (statements[at_300][2], statements[at_301][2]) == (0.9, 0.8)


def test_a_sentence_naming_no_one_takes_its_headings_last_part_as_its_subject(tmp_path: Path) -> None:
    (tmp_path / "harbour.md").write_text(
        "# Harbour Rules\n\n## Ferries\n\nThe ferry leaves pier four at nine every morning.\n"
    )
    statements = _statements(read_to_validation(tmp_path))
    assert statements["The ferry leaves pier four at nine every morning."][1] == "Ferries"


def test_a_list_item_wrapped_onto_a_second_line_is_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "crane.md").write_text(
        "# Crane\n\n- Trucks board at the rear gate.\n- The crane lifts forty tonnes of timber\n"
        "  onto the quay at dawn every day.\n"
    )
    statements = _statements(read_to_validation(tmp_path))
    assert sorted(statements) == [
        "The crane lifts forty tonnes of timber onto the quay at dawn every day.",
        "Trucks board at the rear gate.",
    ]


def test_a_line_the_converter_moved_up_or_down_names_the_files_line(tmp_path: Path) -> None:
    """Markdown's converter puts a blank line between a paragraph and the list right under it (the
    item is the text's fourth line and the file's third) and drops a comment (the paragraph under
    it is the text's first line and the file's third): each evidence names the file's line."""
    (tmp_path / "quay.md").write_text(
        "# Quay\nThe first paragraph says the crane lifts timber.\n- The second item says the quay opens at dawn.\n"
    )
    (tmp_path / "pier.md").write_text("<!-- a note for editors -->\n\nThe pier closes at dusk every day.\n")
    store = read_to_validation(tmp_path)
    located = _pairs(store, "SELECT s.statement, e.location FROM statements s JOIN evidence e USING (knowledge_id)")
    assert located == {
        "The first paragraph says the crane lifts timber.": "line 2",
        "The second item says the quay opens at dawn.": "line 3",
        "The pier closes at dusk every day.": "line 3",
    }


def test_the_effective_date_is_the_first_real_date_a_sentence_names_in_any_of_its_three_forms(
    tmp_path: Path,
) -> None:
    said = {
        "The quay reopens to ferries on 2026-03-04 after the repairs.": "2026-03-04",
        "The harbour festival starts on March 3rd, 2026 at noon.": "2026-03-03",
        "The regatta was moved to 10 December 2026 by the club.": "2026-12-10",
        "The survey of June 2, 2026 replaced the one of 2026-01-05.": "2026-06-02",  # the first named
        "The audit of 2026-02-30 never happened and the next is 2026-05-01.": "2026-05-01",  # no such day
        "The quay opens at dawn every single day.": None,
    }
    (tmp_path / "dates.md").write_text("# Dates\n\n" + "\n\n".join(said) + "\n")
    dated = _pairs(read_to_validation(tmp_path), "SELECT statement, effective_date FROM statements")
    assert dated == said


def test_a_code_line_longer_than_a_chunk_is_cut_at_its_spaces(tmp_path: Path) -> None:
    line = " ".join(f"crane_{n}.lift(tonnes=40)" for n in range(150))  # one line of 3,600 characters
    (tmp_path / "code.md").write_text(f"# Code\n\n```\n{line}\n```\n")
    store = read_to_validation(tmp_path)
    chunks = [row[0] for row in store.rows("SELECT text FROM chunks ORDER BY idx")]
    assert len(chunks) > 3 and max(len(c) for c in chunks) <= 1_200
    assert " ".join(chunks).split() == f"# Code ```\n{line}\n```".split()  # every word once, none cut


def test_a_footnote_defined_above_its_reference_names_its_own_line(tmp_path: Path) -> None:
    """The converter moves a footnote's text after the paragraph that cites it: the text's third
    line, the file's first."""
    (tmp_path / "notes.md").write_text(
        "[^a]: The quay opens at dawn every day.\n\nThe crane lifts timber at dawn.[^a]\n"
    )
    store = read_to_validation(tmp_path)
    located = _pairs(store, "SELECT s.statement, e.location FROM statements s JOIN evidence e USING (knowledge_id)")
    assert located == {"The crane lifts timber at dawn.": "line 3", "The quay opens at dawn every day.": "line 1"}
