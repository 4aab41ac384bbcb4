"""Laws of the engine's rules for people and disagreements, held for any text (Hypothesis)."""

from __future__ import annotations

import threading
from pathlib import Path

from hypothesis import given, strategies as st

from local_engine.ingestion import pipeline
from local_engine.knowledge import disagreements, people
from local_engine.store.database import Store

WORDS = st.sampled_from(
    ["the", "Robert", "Smith", "R.", "Acme", "Robotics", "of", "Bank", "England", "owns", "March", "met",
     "Project", "Falcon", "(rsmith@acme.example)", "and", "New", "team", "Harbour", ",", "Ingrid", "Olsen", "é"]
)  # fmt: skip
TEXTS = st.lists(WORDS, min_size=1, max_size=30).map(" ".join)


@given(TEXTS, st.integers(0, 5))
def test_every_name_found_is_the_text_at_its_offsets(text: str, lead: int) -> None:
    padded = "x " * lead + text
    start = 2 * lead
    for name, s, e in people.names_in(padded, start, len(padded)):
        assert start <= s < e <= len(padded)
        assert padded[s:e] == name
        assert 2 <= len([w for w in name.split() if w not in people.JOINERS]) <= people.MAX_NAME_WORDS


@given(st.text(alphabet="abcRSXYZ. \t", max_size=40))
def test_fold_is_idempotent_and_ignores_case_dots_and_spacing(name: str) -> None:
    folded = people.fold(name)
    assert people.fold(folded) == folded
    assert people.fold(name.upper()) == people.fold(name.lower()) == people.fold(name.replace(".", " "))


NAMES = st.sampled_from(
    ["Robert Smith", "Bob Smith", "R. Smith", "Rob Smith", "William Smith", "Bill Jones", "Ann Smith"]
)


@given(NAMES, NAMES)
def test_the_same_person_rule_is_symmetric(a: str, b: str) -> None:
    first, second = people._same_person(a, b), people._same_person(b, a)
    assert (first is None) == (second is None)
    if first is not None and second is not None:
        assert first[0] == second[0] and first[1] == second[1]


@given(TEXTS)
def test_a_claim_never_holds_its_value_or_stop_words(statement: str) -> None:
    claim = disagreements.claim_of(statement, "Subject", None)
    words = claim["claim"].split()
    assert len(words) == len(set(words))  # each word once: what a held claim's size counts
    assert not set(words) & disagreements.STOP_WORDS
    assert all(w.isalpha() and w not in disagreements.CALENDAR for w in words)
    reordered = " ".join(reversed(statement.split()))  # the same words in another order: the same key
    assert claim["words"] == disagreements.claim_of(reordered, "Subject", None)["words"]


CLAIM_WORDS = st.sets(  # some words inside others ("ship" in "ships"): a word must be in a claim whole
    st.sampled_from(["launch", "date", "falcon", "ships", "ship", "release", "first", "team", "owner", "own", "é"])
)


@given(st.lists(CLAIM_WORDS, max_size=12), CLAIM_WORDS)
def test_held_claims_nest_exactly_as_their_word_sets_do(held: list[set[str]], mine: set[str]) -> None:
    """A held claim kept as its text (its words split again at each comparison) answers what the
    word sets would: the smaller's words all in the larger's, the smaller of at least
    MIN_CLAIM_WORDS, in the order the claims were held."""
    subject = disagreements.Subject(
        "falcon", disagreements.held_claims((f"k{n}", " ".join(words), "date:2024") for n, words in enumerate(held))
    )

    def nests(theirs: set[str]) -> bool:
        small, large = (mine, theirs) if len(mine) <= len(theirs) else (theirs, mine)
        return len(small) >= disagreements.MIN_CLAIM_WORDS and small <= large

    expected = [f"k{n}" for n, words in enumerate(held) if nests(words)]
    assert [h.knowledge_id for h in subject.nested(mine)] == expected
    assert [h.size for h in subject.claims] == [len(words) for words in held]


def test_a_number_is_a_value_and_a_reference_is_not() -> None:
    assert disagreements.claim_of("Acme Robotics employs 12 engineers.", "Acme Robotics", None)["value"] == "number:12"
    cited = "Related issues and pull requests on GitHub: #669 __."
    assert disagreements.claim_of(cited, "GitHub", None)["value"] is None
    assert disagreements.claim_of("Fixed in #12, which ships 3 fixes.", "Acme", None)["value"] == "number:3"


def test_two_notes_citing_different_issues_do_not_disagree(tmp_path: Path) -> None:
    """Release notes cite issues by number in the same words ("Related issues … on GitHub: #669"):
    thousands of such lines in the packages' own changelogs were contradictions before. (Two
    changelogs no longer contradict each other at all, whatever they say: they are versions of a
    series, ``test_disagreements_precision.py``; so these are notes, which still may.)"""
    for n, (issue, engineers) in enumerate([(669, 12), (1175, 14)]):
        (tmp_path / f"notes-{n}.md").write_text(
            f"# Notes\n\nRelated issues and pull requests on GitHub: #{issue} __.\n\n"
            f"Acme Robotics employs {engineers} engineers in the harbour office.\n"
        )
    store = Store(None, threading.RLock())
    work = pipeline.Work(job_id="job_x", ref="base", kind="paths", inputs=[str(tmp_path)], force=True)
    for stage in pipeline.STAGE_WORK.values():
        stage(store, work)
    titles = [r[0] for r in store.rows("SELECT title FROM conflicts WHERE type = 'contradiction'")]
    assert len(titles) == 1 and titles[0].startswith("Acme Robotics"), titles
    store.close()
