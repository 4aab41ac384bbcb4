"""The precision part of the evaluation (``benchmarks/eval/precision.py``): precision and recall
from what the engine asserts and what the labels say, the pairing of a disagreement with its
label, the label files' shapes and their check against the files. Small made-up data only: no
network, no fetched documentation set, no engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.eval import precision
from benchmarks.eval.precision import (
    EntityLabel,
    Found,
    LabelError,
    PairLabel,
    Score,
    Side,
    check_against,
    combined,
    markdown_table,
    pair_key,
    parse_disagreements,
    parse_entities,
    parse_exhaustive,
    per_10k,
    score,
    scores,
)

# -- precision and recall -------------------------------------------------------------------------


def test_precision_counts_only_what_a_label_judges_and_recall_only_what_is_labelled_the_kind() -> None:
    truth = {"a": "person", "b": "person", "c": "neither", "d": "person"}
    result = score(["a", "c", "x"], truth, "person")
    assert result == Score(asserted=2, correct=1, relevant=3, found=1, unlabelled=1)
    assert result.precision == 0.5
    assert result.recall == pytest.approx(1 / 3)


def test_recall_is_over_the_files_read_whole_when_they_are_given() -> None:
    truth = {"a": "person", "b": "person", "c": "person"}
    result = score(["a", "b"], truth, "person", recall_over={"b", "c"})
    assert (result.asserted, result.correct) == (2, 2)  # precision: every judged assertion
    assert (result.relevant, result.found) == (2, 1)  # recall: b and c only


def test_nothing_asserted_or_nothing_labelled_has_no_figure_rather_than_zero() -> None:
    empty = score([], {}, "person")
    assert empty.precision is None and empty.recall is None
    assert score([], {"a": "person"}, "person").recall == 0.0


def test_scores_add_up_across_imports() -> None:
    total = combined([Score(2, 1, 3, 1, 0), Score(4, 4, 1, 1, 5)])
    assert total == Score(6, 5, 4, 2, 5)


def test_disputed_statements_are_counted_per_ten_thousand() -> None:
    assert per_10k(4, 6556) == pytest.approx(6.1, abs=0.05)
    assert per_10k(0, 0) == 0.0


def test_the_table_prints_a_dash_where_there_is_no_figure() -> None:
    table = markdown_table([("people", Score(4, 3, 0, 0, 2))])
    assert "| people | 0.75 | 3 / 4 | – | 0 / 0 | 2 |" in table


# -- pairs ----------------------------------------------------------------------------------------

LABEL = PairLabel("flask", Side("a.rst", "the launch date is"), Side("b.rst", "Launch date:"), "contradiction", "why")


def test_a_disagreement_is_its_label_when_each_side_holds_its_phrase_either_way_round() -> None:
    found = ("contradiction", ("b.rst", "Launch   date: June 3."), ("a.rst", "The launch date is May 6."))
    assert pair_key(LABEL, found)
    wrong_file = ("contradiction", ("c.rst", "Launch date: June 3."), ("a.rst", "The launch date is May 6."))
    assert not pair_key(LABEL, wrong_file)


def test_pairs_are_scored_by_kind_and_an_unlabelled_one_counts_apart() -> None:
    labels = [
        LABEL,
        PairLabel("flask", Side("c.rst", "said once"), Side("d.rst", "said once"), "same", "why"),
        PairLabel("flask", Side("e.rst", "two versions"), Side("f.rst", "two versions"), "neither", "why"),
    ]
    found = Found(
        pairs=[
            ("contradiction", ("a.rst", "the launch date is May 6"), ("b.rst", "Launch date: June 3")),
            ("contradiction", ("e.rst", "two versions 2.0"), ("f.rst", "two versions 2.1")),
            ("same", ("c.rst", "said once here"), ("d.rst", "said once here")),
            ("duplicate", ("x.rst", "no label names"), ("y.rst", "this pair")),
        ]
    )
    result = scores([], labels, found)
    assert result["contradiction"] == Score(asserted=2, correct=1, relevant=1, found=1, unlabelled=0)
    assert result["same"] == Score(asserted=1, correct=1, relevant=1, found=1, unlabelled=0)
    assert result["duplicate"] == Score(asserted=0, correct=0, relevant=0, found=0, unlabelled=1)


def test_entities_are_scored_by_the_type_the_engine_gave() -> None:
    labels = [
        EntityLabel("projects", "AUTHORS", "Sam Aaron", "person", "Sam Aaron -- Ioke lexer"),
        EntityLabel("projects", "CHANGES", "Bad Request", "neither", "a 400 Bad Request"),
        EntityLabel("projects", "AUTHORS", "Google LLC", "organization", "David Benjamin, Google LLC"),
    ]
    found = Found(
        entities={
            ("projects", "AUTHORS", "sam aaron"): "person",
            ("projects", "CHANGES", "bad request"): "person",
            ("projects", "AUTHORS", "google llc"): "person",
        }
    )
    result = scores(labels, [], found, {("projects", "AUTHORS")})
    assert result["person"] == Score(asserted=3, correct=1, relevant=1, found=1, unlabelled=0)
    assert result["organization"] == Score(asserted=0, correct=0, relevant=1, found=0, unlabelled=0)


# -- the label files -------------------------------------------------------------------------------


def entity(**changes: Any) -> dict[str, Any]:
    entry = {
        "import": "flask",
        "file": "api.rst",
        "name": "Bad Request",
        "type": "neither",
        "phrase": "a 400 Bad Request",
    }
    entry.update(changes)
    return entry


def test_an_entity_label_is_parsed_and_its_name_compared_as_the_engine_compares_names() -> None:
    (label,) = parse_entities({"labels": [entity(name="R. Smith", phrase="ask R.  Smith", type="person")]})
    assert label.key == ("flask", "api.rst", "r smith")


@pytest.mark.parametrize(
    "entry",
    [
        entity(type="place"),
        entity(phrase="a 400 error"),  # the phrase does not hold the name
        entity(file="../secrets.rst"),
        entity(extra="field"),
        entity(**{"import": "django"}),
    ],
)
def test_a_wrong_entity_label_is_refused(entry: dict[str, Any]) -> None:
    with pytest.raises(LabelError):
        parse_entities({"labels": [entry]})


def test_a_name_labelled_twice_in_one_file_is_refused() -> None:
    with pytest.raises(LabelError, match="twice"):
        parse_entities({"labels": [entity(), entity(type="person")]})


def test_a_pair_label_needs_two_sides_of_two_words_and_a_known_type() -> None:
    good = {
        "import": "hatch",
        "a": {"file": "a.md", "phrase": "for environments"},
        "b": {"file": "b.md", "phrase": "your environments"},
        "type": "duplicate",
        "why": "the same claim",
    }
    (label,) = parse_disagreements({"labels": [good]})
    assert (label.a.file, label.type) == ("a.md", "duplicate")
    for wrong in ({**good, "type": "similar"}, {**good, "a": {"file": "a.md", "phrase": "one"}}, {**good, "why": ""}):
        with pytest.raises(LabelError):
            parse_disagreements({"labels": [wrong]})


def test_exhaustive_files_are_import_and_file() -> None:
    assert parse_exhaustive({"exhaustive": [{"import": "hatch", "file": "meta/authors.md"}]}) == {
        ("hatch", "meta/authors.md")
    }
    with pytest.raises(LabelError):
        parse_exhaustive({"exhaustive": [{"file": "meta/authors.md"}]})


def test_labels_are_checked_against_their_files_every_wrong_one_named(tmp_path: Path) -> None:
    (tmp_path / "api.rst").write_text("Flask returns a ``400``\nBad Request page.\n", encoding="utf-8")
    right = EntityLabel("flask", "api.rst", "Bad Request", "neither", "a 400 Bad Request page")
    check_against([right], [], {"flask": tmp_path})  # white space, case and the marks ` and * aside
    wrong = [
        EntityLabel("flask", "api.rst", "Not Found", "neither", "a 404 Not Found page"),
        EntityLabel("flask", "gone.rst", "Bad Request", "neither", "a 400 Bad Request"),
    ]
    with pytest.raises(LabelError) as raised:
        check_against(wrong, [], {"flask": tmp_path})
    assert "does not say" in str(raised.value) and "is no file" in str(raised.value)


def test_the_shipped_labels_hold_to_their_shapes_and_their_size() -> None:
    labels = precision.load_labels()
    assert len(labels.entities) >= 100 and len(labels.pairs) >= 60
    assert {label.type for label in labels.entities} == set(precision.ENTITY_TYPES)
    assert {label.type for label in labels.pairs} == set(precision.PAIR_TYPES)
    assert labels.exhaustive and all(imported in precision.IMPORTS for imported, _ in labels.exhaustive)
