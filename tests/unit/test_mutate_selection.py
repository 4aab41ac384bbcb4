"""``make mutate`` runs, on a module of the engine, the tests that hold its rules (issue 57): the
engine's own tiers reach a rule through its HTTP API, many imports away from the module."""

from __future__ import annotations

from tests import mutate


def test_a_rule_of_the_engine_is_mutated_against_the_tests_that_exercise_it_through_the_engine() -> None:
    chosen = mutate.tests_for("local_engine/knowledge/people.py")
    assert "tests/contract/test_engine_knowledge.py" in chosen  # imports only the double, reaches people
    assert not [t for t in chosen if t.startswith("tests/e2e/")]  # a stack a mutant: never
