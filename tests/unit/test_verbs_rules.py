"""The verbs' two laws as properties: the evidence gate (INV-EPI) and the supersede walk."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings, strategies as st

from knowledge_service.domain.verbs.rules import quote_is_evidence, walk_forward
from tests.budget import sized

TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=200)


@st.composite
def document_and_quote(draw: st.DrawFn) -> tuple[str, str]:
    """Half the quotes are sliced from the document, half drawn on their own."""
    document = draw(TEXT)
    if draw(st.booleans()) and document:
        start = draw(st.integers(0, len(document) - 1))
        end = draw(st.integers(start + 1, len(document)))
        return document, document[start:end]
    return document, draw(st.text(min_size=1, max_size=20))


@settings(max_examples=sized(ci=1_500, deep=10_000), deadline=None)
@given(document_and_quote())
def test_a_quote_is_accepted_exactly_when_it_is_in_the_body(pair: tuple[str, str]) -> None:
    document, quote = pair
    assert quote_is_evidence(document, quote) is (quote in document)


@given(document_and_quote())
def test_a_slice_of_the_document_is_always_evidence(pair: tuple[str, str]) -> None:
    document, quote = pair
    if quote in document:
        assert quote_is_evidence(document, quote)


def test_given_a_quote_one_character_off_when_checked_then_it_is_not_evidence() -> None:
    body = "The colony moved the queen's chamber north in spring."
    assert quote_is_evidence(body, "queen's chamber north")
    assert not quote_is_evidence(body, "queen's chamber nortH")
    assert not quote_is_evidence(body, "queen’s chamber north")  # a curly apostrophe is another character


def test_given_composed_and_decomposed_forms_when_checked_then_no_normalisation_is_applied() -> None:
    body = unicodedata.normalize("NFC", "café au lait")
    assert not quote_is_evidence(body, unicodedata.normalize("NFD", "café"))
    assert quote_is_evidence(body, "café")


def test_an_empty_quote_is_never_evidence() -> None:
    assert not quote_is_evidence("anything", "")


# ---------------------------------------------------------------------- the supersede walk
def reachable(pointers: dict[int, int], start: int, goal: int) -> bool:
    node: int | None = start
    seen = set()
    while node is not None and node not in seen:
        if node == goal:
            return True
        seen.add(node)
        node = pointers.get(node)
    return False


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=40))
def test_random_supersedes_never_create_a_cycle_and_every_acyclic_one_is_accepted(
    operations: list[tuple[int, int]],
) -> None:
    pointers: dict[int, int] = {}
    for target, successor in operations:
        if target in pointers:  # forward only: a superseded assertion is not superseded again
            continue
        walk = walk_forward(
            str(target), str(successor), lambda n: str(pointers[int(n)]) if int(n) in pointers else None
        )
        would_cycle = target == successor or reachable(pointers, successor, target)
        assert walk.closes_cycle is would_cycle
        if not walk.closes_cycle:
            assert walk.end is not None and int(walk.end) not in pointers  # the chain's unpointed end
            pointers[target] = successor
    for start in pointers:  # the graph stays acyclic
        node: int | None = start
        for _ in range(len(pointers) + 1):
            node = pointers.get(node) if node is not None else None
        assert node is None


def test_given_a_two_step_loop_when_walked_then_it_is_a_cycle() -> None:
    pointers = {"b": "a"}
    assert walk_forward("a", "b", pointers.get).closes_cycle


def test_given_a_three_step_loop_when_walked_then_it_is_a_cycle() -> None:
    pointers = {"b": "c", "c": "a"}
    assert walk_forward("a", "b", pointers.get).closes_cycle
    assert walk_forward("a", "c", pointers.get).closes_cycle
    assert walk_forward("d", "b", pointers.get).end == "a"
