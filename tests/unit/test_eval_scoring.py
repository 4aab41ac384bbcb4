"""The evaluation's scoring (``benchmarks/eval``): hit@k and MRR from a ranked answer, their means
per kind of question, the blank-line paragraph splitter the baselines read, and the question files'
validation. Small made-up data only: no network, no fetched documentation set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.eval import questions
from benchmarks.eval.baselines import Bm25s, Fts5, Paragraph, or_query, split_paragraphs
from benchmarks.eval.questions import KINDS, Question, QuestionError
from benchmarks.eval.scoring import (
    OVERALL,
    Scores,
    by_kind,
    first_hit,
    hit_at,
    markdown_table,
    reciprocal_rank,
    scores_of,
)

# -- hit@k and reciprocal rank --------------------------------------------------------------------


def test_the_first_hit_is_the_rank_of_the_first_item_naming_an_answering_file() -> None:
    ranked = [("a.rst",), ("b.rst",), ("c.rst",), ("b.rst",)]
    assert first_hit(ranked, ["b.rst"]) == 2
    assert first_hit(ranked, ["c.rst", "b.rst"]) == 2  # any of the question's files
    assert first_hit(ranked, ["a.rst"]) == 1
    assert first_hit(ranked, ["z.rst"]) is None
    assert first_hit([], ["a.rst"]) is None


def test_an_item_from_several_files_hits_when_any_of_them_answers() -> None:
    ranked = [("x.md",), ("y.md", "answer.md"), ("answer.md",)]
    assert first_hit(ranked, ["answer.md"]) == 2


def test_only_the_top_five_count() -> None:
    ranked = [(f"{n}.rst",) for n in range(1, 9)]
    assert first_hit(ranked, ["5.rst"]) == 5
    assert first_hit(ranked, ["6.rst"]) is None
    assert first_hit(ranked, ["6.rst"], k=6) == 6


@pytest.mark.parametrize(
    ("rank", "hit1", "hit5", "rr"),
    [
        (1, 1.0, 1.0, 1.0),
        (2, 0.0, 1.0, 0.5),
        (4, 0.0, 1.0, 0.25),
        (5, 0.0, 1.0, 0.2),
        (6, 0.0, 0.0, 0.0),
        (None, 0.0, 0.0, 0.0),
    ],
)
def test_hit_at_k_and_the_reciprocal_rank_of_one_question(
    rank: int | None, hit1: float, hit5: float, rr: float
) -> None:
    assert (hit_at(rank, 1), hit_at(rank, 5), reciprocal_rank(rank)) == (hit1, hit5, rr)


def test_scores_are_means_over_the_questions() -> None:
    s = scores_of([1, 2, None, 5])
    assert s.count == 4
    assert s.hit1 == pytest.approx(0.25)
    assert s.hit5 == pytest.approx(0.75)
    assert s.mrr == pytest.approx((1 + 0.5 + 0 + 0.2) / 4)
    assert scores_of([]) == Scores(0, 0.0, 0.0, 0.0)


def test_per_kind_aggregation_keeps_the_kinds_order_and_adds_overall() -> None:
    results = [("docs_words", 1), ("own_words", None), ("named", 2), ("own_words", 3), ("docs_words", 1)]
    table = by_kind(results, KINDS)
    assert list(table) == [*KINDS, OVERALL]
    assert table["docs_words"] == Scores(2, 1.0, 1.0, 1.0)
    assert table["own_words"].count == 2
    assert table["own_words"].hit5 == pytest.approx(0.5)
    assert table["own_words"].mrr == pytest.approx(1 / 6)
    assert table["named"] == Scores(1, 0.0, 1.0, 0.5)
    overall = table[OVERALL]
    assert overall.count == 5
    assert overall.hit1 == pytest.approx(2 / 5)
    assert overall.mrr == pytest.approx((1 + 0 + 0.5 + 1 / 3 + 1) / 5)


def test_a_kind_without_questions_is_empty_and_an_unknown_kind_is_refused() -> None:
    assert by_kind([("named", 1)], KINDS)["own_words"] == Scores(0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="unknown kind"):
        by_kind([("guessed", 1)], KINDS)


def test_the_table_is_markdown_with_two_places() -> None:
    table = markdown_table([("bm25s", "overall", Scores(3, 1 / 3, 2 / 3, 0.5))])
    lines = table.splitlines()
    assert lines[0] == "| system | questions | n | hit@1 | hit@5 | MRR |"
    assert lines[1].startswith("| --- |")
    assert lines[2] == "| bm25s | overall | 3 | 0.33 | 0.67 | 0.50 |"


# -- the paragraph splitter -----------------------------------------------------------------------


def test_paragraphs_are_split_at_blank_lines_and_stripped() -> None:
    text = "Title\n=====\n\nFirst line\nsecond line.\n\n\n\n  Indented block\n    more\n\nLast."
    assert split_paragraphs(text) == ["Title\n=====", "First line\nsecond line.", "Indented block\n    more", "Last."]


def test_a_line_of_spaces_or_tabs_is_blank_and_windows_line_ends_are_read() -> None:
    assert split_paragraphs("one\r\n \t \r\ntwo\rthree\r\rfour") == ["one", "two\nthree", "four"]


def test_markup_is_kept_and_empty_text_has_no_paragraph() -> None:
    assert split_paragraphs(".. note::\n\n   ``SECRET_KEY`` is :data:`x`.\n") == [
        ".. note::",
        "``SECRET_KEY`` is :data:`x`.",
    ]
    assert split_paragraphs("") == []
    assert split_paragraphs("\n \n\t\n") == []


# -- the baselines on made-up paragraphs ----------------------------------------------------------

PARAGRAPHS = [
    Paragraph("ferry.md", "The harbour ferry timetable changes in winter."),
    Paragraph("lamp.md", "The lighthouse lamp schedule is kept by the keeper."),
    Paragraph("ferry.md", "Tickets for the ferry are sold at the pier."),
    Paragraph("notes.md", "Nothing about boats here."),
]


def test_the_fts5_query_ors_each_word_once_quoted() -> None:
    assert or_query("When does the Ferry leave, the ferry?") == '"when" OR "does" OR "the" OR "ferry" OR "leave"'
    assert or_query("?!") is None


@pytest.mark.parametrize("system", [Fts5, Bm25s])
def test_each_baseline_ranks_matching_paragraphs_only(system: Any) -> None:
    ranker = system(PARAGRAPHS)
    ranked = ranker.rank("ferry timetable")
    assert ranked[0] == ("ferry.md",)
    assert set(ranked) == {("ferry.md",)}
    assert ranker.rank("lighthouse keeper") == [("lamp.md",)]
    assert ranker.rank("zeppelin") == []
    assert ranker.rank("ferry timetable") == ranked  # the same question, the same answer
    ranker.close()


# -- the question files ---------------------------------------------------------------------------


def entry(**overrides: Any) -> dict[str, Any]:
    return {"question": "What does X do?", "kind": "named", "files": ["a.rst"], "phrase": "X does"} | overrides


def test_a_question_file_is_read_in_order() -> None:
    found = questions.parse(
        {"set": "demo", "questions": [entry(), entry(question="Why?", kind="own_words", files=["b/c.md", "a.rst"])]},
        expected_set="demo",
    )
    assert found == [
        Question(1, "What does X do?", "named", ("a.rst",), "X does"),
        Question(2, "Why?", "own_words", ("b/c.md", "a.rst"), "X does"),
    ]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([entry()], "mapping of exactly"),
        ({"set": "demo"}, "mapping of exactly"),
        ({"set": "other", "questions": [entry()]}, "not 'demo'"),
        ({"set": "demo", "questions": []}, "non-empty list"),
        ({"set": "demo", "questions": ["What?"]}, "must be a mapping"),
        ({"set": "demo", "questions": [entry(kind="paraphrase")]}, "is not one of"),
        ({"set": "demo", "questions": [entry(files=[])]}, "files must be a non-empty list"),
        ({"set": "demo", "questions": [entry(files="a.rst")]}, "files must be a non-empty list"),
        ({"set": "demo", "questions": [entry(files=["../etc/passwd"])]}, "not a path relative"),
        ({"set": "demo", "questions": [entry(files=["/abs.rst"])]}, "not a path relative"),
        ({"set": "demo", "questions": [entry(files=["a\\b.rst"])]}, "not a path relative"),
        ({"set": "demo", "questions": [entry(files=["a//b.rst"])]}, "is not written as"),
        ({"set": "demo", "questions": [entry(files=["a.rst", "a.rst"])]}, "listed twice"),
        ({"set": "demo", "questions": [entry(phrase=" ")]}, "phrase must be non-empty"),
        ({"set": "demo", "questions": [entry(question=None)]}, "question must be non-empty"),
        ({"set": "demo", "questions": [entry(answer="x")]}, "unknown \\['answer'\\]"),
        ({"set": "demo", "questions": [{k: v for k, v in entry().items() if k != "phrase"}]}, "missing \\['phrase'\\]"),
        ({"set": "demo", "questions": [entry(), entry(question="what does x DO?")]}, "asked twice"),
    ],
)
def test_a_question_file_that_breaks_its_shape_is_refused(document: Any, message: str) -> None:
    with pytest.raises(QuestionError, match=message):
        questions.parse(document, expected_set="demo")


def test_the_questions_are_checked_against_the_set_files(tmp_path: Path) -> None:
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "a.rst").write_text("Set the ``X`` option.\nThe X option   does\nthe thing.\n")
    fine = Question(1, "q", "named", ("guide/a.rst",), "x option DOES the thing")  # white space and case aside
    questions.check_against([fine], tmp_path)
    missing = Question(2, "q", "named", ("guide/b.rst",), "anything")
    unsaid = Question(3, "q", "named", ("guide/a.rst",), "the other thing")
    with pytest.raises(QuestionError) as refused:
        questions.check_against([fine, missing, unsaid], tmp_path)
    assert "question 2: guide/b.rst is not a file of the set" in str(refused.value)
    assert "question 3: the phrase 'the other thing' is in none of guide/a.rst" in str(refused.value)
