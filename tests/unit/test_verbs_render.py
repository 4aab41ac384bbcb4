"""The render schemas of the verbs whose answers are shown (spec 003: knowledge.get and
knowledge.list "drive an inline chat artefact and a GUI panel"), served by ``GET /v``."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from knowledge_service.domain.verbs import render
from knowledge_service.domain.verbs.catalogue import VERBS
from knowledge_service.domain.verbs.models import OUTPUTS
from tests.conftest import Api
from tests.unit.test_verbs import ADMIN, WORKSPACE, distilled, verb, workspaces  # noqa: F401 - a fixture

RENDERED = {"knowledge.get", "knowledge.list"}


def _roles(schema: dict[str, Any]) -> dict[str, str]:
    """Every property's role, rows' properties as ``items.<name>``."""
    found = {}
    for name, node in schema["properties"].items():
        found[name] = node["x-role"]
        if node.get("type") == "array":
            found |= {f"{name}.{k}": v for k, v in _roles(node["items"]).items()}
    return found


def test_exactly_the_verbs_the_specification_gives_a_render_schema_have_one() -> None:
    assert {name for name in VERBS if render.render_schema(name) is not None} == RENDERED


@pytest.mark.parametrize("name", sorted(RENDERED))
def test_a_render_schema_is_a_valid_schema_whose_every_field_has_a_known_role_and_a_label(name: str) -> None:
    schema = render.render_schema(name)
    assert schema is not None
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(_roles(schema).values()) <= render.ROLES
    rows = [n for n in schema["properties"].values() if n.get("type") == "array"]
    for node in [*schema["properties"].values(), *(p for r in rows for p in r["items"]["properties"].values())]:
        assert node["title"] and node["title"][0].isupper()


@pytest.mark.parametrize("name", sorted(RENDERED))
def test_every_rendered_field_is_a_field_the_verb_answers(name: str) -> None:
    answered = OUTPUTS[name].model_json_schema(by_alias=True, mode="serialization")
    schema = render.render_schema(name)
    assert schema is not None
    for field in _roles(schema):
        top, _, inner = field.partition(".")
        assert top in answered["properties"]
        if inner:
            row = answered["$defs"][answered["properties"][top]["items"]["$ref"].rsplit("/", 1)[1]]
            assert inner in row["properties"]


@pytest.mark.usefixtures("workspaces")
def test_the_catalogue_carries_each_render_schema_and_real_answers_validate_against_it(api: Api) -> None:
    catalogue = api.call("GET", "/v", ADMIN, query={"workspace": WORKSPACE})
    assert catalogue.status == 200, catalogue.raw
    schemas = {v["verb"]: v["renderSchema"] for v in catalogue.body["verbs"]}
    assert {name for name, schema in schemas.items() if schema is not None} == RENDERED
    knowledge_id = distilled(api)
    got = verb(api, "knowledge.get", {"knowledgeId": knowledge_id})
    listed = verb(api, "knowledge.list", {})
    assert (got.status, listed.status) == (200, 200)
    jsonschema.validate(got.body, schemas["knowledge.get"])
    jsonschema.validate(listed.body, schemas["knowledge.list"])
    assert listed.body["items"] and listed.body["total"] >= 1
