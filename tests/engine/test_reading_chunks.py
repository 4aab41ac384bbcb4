"""Chunks follow headings and stay within ``CHUNK_TARGET``: a long section, a huge list, a giant
paragraph or a long code block is cut (at a paragraph, an item, a sentence, a line), so no chunk
is longer; each statement is in the chunk its first character is in; and the line map that names
the file's line survives the store (issue 55)."""

from __future__ import annotations

import itertools
import sqlite3
import threading
from pathlib import Path

from hypothesis import given, settings, strategies as st

from local_engine.ingestion import extraction, pipeline
from local_engine.store.database import SCHEMA_VERSION, Store
from tests.documents import read_to_validation

TARGET = extraction.CHUNK_TARGET
SENTENCE = "The harbour crane {0} lifts forty tonnes of timber onto the quay at dawn."


def chunks_of(store: Store, name: str) -> list[str]:
    read = "SELECT c.text FROM chunks c JOIN sources s USING (source_id) WHERE s.name LIKE ? ORDER BY c.idx"
    return [row[0] for row in store.rows(read, f"%{name}")]


def test_long_sections_lists_paragraphs_and_code_are_cut_within_the_target(tmp_path: Path) -> None:
    paragraphs = "\n\n".join(SENTENCE.format(n) for n in range(60))
    items = "\n".join(f"- {SENTENCE.format(n)}" for n in range(200))
    giant = " ".join(SENTENCE.format(n) for n in range(150))  # one paragraph of 11 KB
    code = "\n".join(f"crane_{n}.lift(tonnes=40)" for n in range(400))
    (tmp_path / "long.md").write_text(
        f"# Long\n\n{paragraphs}\n\n## List\n\n{items}\n\n## Giant\n\n{giant}\n\n## Code\n\n```\n{code}\n```\n"
    )
    (tmp_path / "long.rst").write_text(
        f"Long\n====\n\n{paragraphs}\n\nGiant\n~~~~~\n\n{giant}\n\nCode::\n\n    {code}\n"
    )
    store = read_to_validation(tmp_path)
    for name in ("long.md", "long.rst"):
        chunks = chunks_of(store, name)
        assert chunks and max(len(c) for c in chunks) <= TARGET, name
    md = chunks_of(store, "long.md")
    opened = [n for n, c in enumerate(md) if c.startswith("#")]  # each heading opens a chunk
    assert [md[n].split("\n")[0] for n in opened] == ["# Long", "## List", "## Giant", "## Code"]
    bodies = [[c.split("\n\n", 1)[-1] for c in md[a:b]] for a, b in zip(opened, [*opened[1:], len(md)], strict=True)]
    assert all(c.startswith("The harbour") and c.endswith("dawn.") for c in bodies[0])  # between paragraphs
    assert len(bodies[1]) > 10 and all(c.startswith("- ") and c.endswith("dawn.") for c in bodies[1])  # items
    assert len(bodies[2]) > 8 and all(c.startswith("The harbour") and c.endswith("dawn.") for c in bodies[2])
    assert len(bodies[3]) > 5 and all(c.endswith((")", "```")) for c in bodies[3][1:])  # code, between lines
    statements = store.rows("SELECT statement, char_start, chunk_id FROM statements")
    assert len(statements) == 60 + 200 + 150  # every sentence once (the reST file's are the same)
    assert store.value("SELECT COUNT(*) FROM evidence") == 60 + 200 + 150 + 60 + 150  # and each file's evidence
    assert not any("lift(" in row[0] for row in statements)


def test_a_statement_is_in_the_chunk_its_first_character_is_in(tmp_path: Path) -> None:
    (tmp_path / "long.md").write_text("# Long\n\n" + " ".join(SENTENCE.format(n) for n in range(100)) + "\n")
    store = read_to_validation(tmp_path)
    for start, end, chunk_start, chunk_end in store.rows(
        "SELECT s.char_start, s.char_end, c.char_start, c.char_end FROM statements s JOIN chunks c USING (chunk_id)"
    ):
        assert chunk_start <= start < end <= chunk_end


PARTS = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300),
    st.sampled_from(["# Title", "## Part", "- an item that is long enough here.", "```", "\n", "\n\n", "| a | b |"]),
    st.from_regex(r"[A-Z][a-z]{2,8}( [a-z]{2,12}){3,30}[.!?] ?", fullmatch=True),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(PARTS, max_size=60))
def test_no_chunk_passes_the_target_and_each_sentence_is_in_its_chunk(parts: list[str]) -> None:
    text = extraction.normalize("\n".join(parts))
    structure = extraction.blocks(text)
    spans = extraction.chunk(text, structure)
    for before, after in itertools.pairwise(spans):
        assert before.end <= after.start
    for span in spans:
        assert 0 <= span.start < span.end <= len(text) and span.end - span.start <= TARGET
    for sentence in extraction.sentences(text, structure, spans):
        chunk = spans[sentence.chunk_index]
        assert chunk.start <= sentence.start < chunk.end


@given(st.lists(st.integers(1, 40), max_size=50))
def test_a_line_map_kept_as_runs_answers_each_lines_file_line(steps: list[int]) -> None:
    lines = [sum(steps[: n + 1]) for n in range(len(steps))]  # each text line's file line, increasing
    kept = extraction.LineMap.of(lines).dumps()
    read = extraction.LineMap.loads(kept)
    assert [read.file_line(n) for n in range(1, len(lines) + 1)] == lines
    assert (kept is None) == (lines == list(range(1, len(lines) + 1)))


def test_a_store_from_before_line_maps_gains_the_column_and_reads_lines_as_the_texts(tmp_path: Path) -> None:
    path = tmp_path / "engine.sqlite3"
    Store(path, threading.RLock()).close()
    old = sqlite3.connect(path)  # as version 4 left it: no line map
    old.execute("ALTER TABLE sources DROP COLUMN line_map")
    old.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    old.commit()
    old.close()
    store = Store(path, threading.RLock())
    assert "line_map" in {row[1] for row in store.rows("PRAGMA table_info(sources)")}
    assert store.value("SELECT value FROM meta WHERE key = 'schema_version'") == str(SCHEMA_VERSION)
    store.close()
    lines = extraction.Lines("a\nb\nc\n")
    assert pipeline.location(lines, [], 4, extraction.LineMap.loads(None)) == (3, "line 3")
