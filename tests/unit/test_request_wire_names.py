"""RequestWireNameTests: every request model the API reads refuses a camelCase spelling.

The specification's own lesson: a bind sent as ``knowledgeBase`` arrived as null, and an
empty knowledge base means unbind. Every request model is walked, not listed by hand, so
the next model that would accept another spelling fails here rather than in a button.
"""

from __future__ import annotations

import re

import pytest
from pydantic import BaseModel, ValidationError

from knowledge_service.edge.catalog import knowledge_routes
from knowledge_service.edge.routes import pages

REQUEST_MODELS = sorted(
    {r.body_model for r in knowledge_routes() if r.body_model is not None} | set(pages.BODIES),
    key=lambda m: m.__name__,
)
# Excluded by name: the verbs surface (/v/<verb>) keeps the text's camelCase names (captureId,
# evidenceQuote), which its clients expect. tests/unit/test_verbs_wire_names.py holds those.
EXCLUDED_SURFACES = ("/v",)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def test_the_walk_covers_every_surface_but_the_ones_excluded_by_name() -> None:
    walked = {r.path for r in knowledge_routes()}
    assert not any(path == s or path.startswith(s + "/") for path in walked for s in EXCLUDED_SURFACES)


def test_the_walk_finds_every_body_the_api_reads() -> None:
    assert {m.__name__ for m in REQUEST_MODELS} >= {"ProjectMapRequest", "KnowledgeBaseRequest", "SettingsUpdate"}


@pytest.mark.parametrize("model", REQUEST_MODELS, ids=lambda m: m.__name__)
def test_request_model_forbids_unknown_fields(model: type[BaseModel]) -> None:
    assert model.model_config.get("extra") == "forbid"
    with pytest.raises(ValidationError) as error:
        model.model_validate({"surely_not_a_field": 1})
    assert any(e["type"] == "extra_forbidden" for e in error.value.errors())


@pytest.mark.parametrize("model", REQUEST_MODELS, ids=lambda m: m.__name__)
def test_request_model_refuses_the_camel_case_spelling_of_every_multi_word_field(model: type[BaseModel]) -> None:
    for name, field in model.model_fields.items():
        assert field.alias in (None, name), f"{model.__name__}.{name} has a wire alias"
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name), f"{model.__name__}.{name} is not snake_case"
        if "_" not in name:
            continue
        with pytest.raises(ValidationError) as error:
            model.model_validate({camel(name): "x"})
        kinds = {(e["loc"][0], e["type"]) for e in error.value.errors()}
        assert (camel(name), "extra_forbidden") in kinds, f"{model.__name__} accepted {camel(name)}"


@pytest.mark.parametrize("model", REQUEST_MODELS, ids=lambda m: m.__name__)
def test_request_model_refuses_wrong_types_rather_than_coercing_them(model: type[BaseModel]) -> None:
    """A JSON 0 is not false and "8" is not 8: a body of the wrong type is a 400, never a guess."""
    for name, field in model.model_fields.items():
        annotation = str(field.annotation)
        wrong: list[object] = []
        if "bool" in annotation:
            wrong = [0, 1, "true", "yes"]
        elif "int" in annotation:
            wrong = ["8", 8.5, True]
        for value in wrong:
            with pytest.raises(ValidationError) as error:
                model.model_validate({name: value})
            assert any(e["loc"][:1] == (name,) for e in error.value.errors()), f"{model.__name__}.{name} took {value!r}"
