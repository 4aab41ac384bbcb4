"""Hybrid ranking (docs/ranking.md) on notes the tests write, read by the pipeline into a store of
their own: a paraphrase is found by meaning alone (and not with ``LOCAL_ENGINE_VECTORS=0``),
question words never match, a word said only in a heading or a file name finds its statements,
and ``why`` names the signals that matched."""

from __future__ import annotations

import threading
from pathlib import Path

from local_engine.ingestion import pipeline
from local_engine.search import ranking
from local_engine.search.queries import Knowledge
from local_engine.store.database import Store

LAPTOPS = "Laptops are replaced every three years by the supplier."
UNRELATED = {
    "garden.md": "# Garden\n\nThe roses along the south wall are pruned in late winter.\n",
    "kitchen.md": "# Kitchen\n\nThe dishwasher runs twice a day after the lunch service.\n",
    "post.md": "# Post\n\nParcels for the office are collected by the courier at four.\n",
}


def read(root: Path, files: dict[str, str], vectors: bool = True) -> Knowledge:
    """``files`` (name -> markdown) under ``root/notes``, read by the eleven stages into a base
    (``vectors`` False: as an engine started with ``LOCAL_ENGINE_VECTORS=0``)."""
    folder = root / "notes"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    store = Store(None, threading.RLock())
    work = pipeline.Work(job_id="job_h", ref="base", kind="paths", inputs=[str(folder)], force=True, vectors=vectors)
    for stage in pipeline.STAGE_WORK.values():
        stage(store, work)
    return Knowledge(store, vectors)


def found(index: Knowledge, query: str, limit: int = 5) -> list[tuple[str, str]]:
    """(statement, why) best first."""
    return [(hit["row"]["statement"], hit["why"]) for _, hit in index.search("base", query, limit, False).hits]


def test_a_paraphrase_is_found_by_meaning_alone_and_not_with_vectors_off(tmp_path: Path) -> None:
    question = "How often do we get new computers?"  # not one word of it is the statement's
    files = {"equipment.md": f"# Equipment\n\n{LAPTOPS}\n", **UNRELATED}
    assert not set(ranking.content_words(question)) & set(ranking.content_words(LAPTOPS + " equipment notes"))

    meant = found(read(tmp_path / "on", files), question)
    assert meant and meant[0][0] == LAPTOPS
    assert meant[0][1].startswith("meaning 0.") and "words" not in meant[0][1]
    assert [statement for statement, _ in meant] == [LAPTOPS]  # the others are not near enough to answer

    off = read(tmp_path / "off", files, vectors=False)
    assert found(off, question) == []
    assert not off.store.has_vectors("base")  # indexing kept none
    assert off.search("base", question, 5, False).backend == "sqlite-fts5"


def test_question_words_never_make_a_short_statement_win(tmp_path: Path) -> None:
    """Without the stop words, "what" and "do" are the rarest words of the question here, and the
    short statement that says them ranked first by BM25."""
    master = [
        "The harbour master assigns berths to visiting yachts in summer.",
        "The harbour master keeps the tide tables posted at the office.",
        "The harbour master inspects the mooring chains every spring.",
        "Complaints about noise go to the harbour master in writing.",
        "The harbour master signs every fuel delivery note.",
    ]
    files = {
        "master.md": "# Duties\n\n" + "\n\n".join(master) + "\n",
        "saying.md": "# Saying\n\nThat is what we do here.\n",
    }
    index = read(tmp_path, files)
    answered = [statement for statement, _ in found(index, "What does the harbour master do?", 10)]
    assert answered and answered[0] in master
    assert "That is what we do here." not in answered
    assert found(index, "what do we do") == []  # nothing but question and stop words: no word matches


def test_a_word_only_in_a_heading_or_a_file_name_finds_its_statements(tmp_path: Path) -> None:
    files = {
        "rootless-mode.md": "# Running without privileges\n\nThe daemon starts as an ordinary user account.\n",
        "berths.md": "# Berths\n\n## Kestrel quay\n\nVisitors tie up along the eastern wall overnight.\n",
        **UNRELATED,
    }
    index = read(tmp_path, files)
    (by_name, why), *_ = found(index, "rootless")
    assert by_name == "The daemon starts as an ordinary user account."
    assert "title or file name: rootless" in why
    (by_heading, why), *_ = found(index, "kestrel")
    assert by_heading == "Visitors tie up along the eastern wall overnight."
    assert "heading: kestrel" in why and "section: Berths › Kestrel quay" in why


def test_why_names_the_signals_that_matched(tmp_path: Path) -> None:
    files = {
        "harbour.md": (
            "# Harbour\n\n## Ferries\n\nThe ferry timetable changes on the first of May.\n"
            "It is posted at the pier and on the website.\n"
        ),
        **UNRELATED,
    }
    index = read(tmp_path, files)
    hits = dict(found(index, "ferry timetable"))
    said = hits["The ferry timetable changes on the first of May."]
    assert said.startswith("words: ferry, timetable; ")
    assert "meaning 0." in said and said.endswith("section: Harbour › Ferries")
    beside = hits["It is posted at the pier and on the website."]  # its passage says the words, it does not
    assert "passage: ferries, ferry, timetable" in beside and "words:" not in beside
    assert "heading: ferries" in beside  # its heading says one
    meant = dict(found(read(tmp_path / "meant", {"equipment.md": f"# Equipment\n\n{LAPTOPS}\n", **UNRELATED}),
                       "How often do we get new computers?"))  # fmt: skip
    assert meant[LAPTOPS].startswith("meaning 0.") and meant[LAPTOPS].endswith("section: Equipment")


def test_a_base_an_older_engine_indexed_is_indexed_again_with_headings_and_file_names(tmp_path: Path) -> None:
    index = read(tmp_path, {"rootless-mode.md": "# Running\n\nThe daemon starts as an ordinary user account.\n"})
    store = index.store
    with store.transaction() as db:  # the statement index as the engine before this one made it
        db.execute("DROP TABLE fts_base_s")
        db.execute("CREATE VIRTUAL TABLE fts_base_s USING fts5(title, statement, tokenize='porter unicode61')")
        db.execute("INSERT INTO fts_base_s (rowid, title, statement) SELECT rowid, title, statement FROM statements")
    assert [statement for statement, _ in found(index, "rootless")] == [
        "The daemon starts as an ordinary user account."
    ]
    columns = [row[1] for row in store.rows("PRAGMA table_info(fts_base_s)")]
    assert columns == ["title", "statement", "heading", "source"]
