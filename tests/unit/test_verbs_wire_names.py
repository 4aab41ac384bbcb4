"""The verbs keep the specification's camelCase names (``captureId``, ``evidenceQuote``):
every verb's input refuses the snake_case spelling, unknown fields and coerced types. The
snake_case wire test (test_request_wire_names.py) excludes this surface by name."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import ValidationError

from knowledge_service.domain.verbs.catalogue import VERBS
from knowledge_service.domain.verbs.models import INPUTS, OUTPUTS, VerbModel


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def test_every_verb_has_an_input_and_an_answer() -> None:
    assert set(INPUTS) == set(VERBS) == set(OUTPUTS)


@pytest.mark.parametrize("verb", sorted(INPUTS))
def test_every_input_field_is_camel_case_on_the_wire_and_the_snake_spelling_is_refused(verb: str) -> None:
    model = INPUTS[verb]
    assert model.model_config.get("extra") == "forbid"
    for name, field in model.model_fields.items():
        wire = field.alias or name
        assert re.fullmatch(r"[a-z][a-zA-Z0-9]*", wire), f"{verb}: {wire} is not camelCase"
        if snake(wire) == wire:
            continue
        with pytest.raises(ValidationError) as error:
            model.model_validate_json(json.dumps({name: "x"}))
        assert (name, "extra_forbidden") in {(e["loc"][0], e["type"]) for e in error.value.errors()}


@pytest.mark.parametrize("verb", sorted(INPUTS))
def test_every_input_refuses_wrong_types_rather_than_coercing_them(verb: str) -> None:
    model: type[VerbModel] = INPUTS[verb]
    for name, field in model.model_fields.items():
        annotation = str(field.annotation)
        wrong: list[object] = [7] if "str" in annotation else []
        if "int" in annotation:
            wrong = ["8", 8.5, True]
        if "float" in annotation:
            wrong = ["0.5", True]
        for value in wrong:
            with pytest.raises(ValidationError) as error:
                model.model_validate_json(json.dumps({field.alias or name: value}))
            assert any(e["loc"][:1] == (field.alias or name,) for e in error.value.errors()), (verb, name, value)


def test_the_answer_names_the_issue_lists_are_camel_case() -> None:
    fields = {f.alias or n for n, f in OUTPUTS["knowledge.get"].model_fields.items()}
    assert {"knowledgeId", "status", "subject", "assertion", "captureId", "evidenceQuote", "supersededById"} <= fields
