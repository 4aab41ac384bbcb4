"""No 500 from text (issue 39): a string JSON allows but UTF-8 cannot carry — a lone surrogate,
sent as JSON's own escape (``"\\ud800"``) — is the caller's 400 naming the field that holds it,
on every surface, in the surface's own shape, for every string field of every request model:
the Knowledge API's bodies, the pages' writes, the verbs' inputs and every MCP tool's arguments.

The fields are walked from the models themselves (nested models and list items included), so a
field added tomorrow is held here too; the strings are Hypothesis's, a surrogate somewhere in
them. The probe's case was ``{"content": "\\ud800"}`` to a page PUT: a ``UnicodeEncodeError`` 500.
"""

from __future__ import annotations

import json
import types
from enum import Enum
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from pydantic import BaseModel

from knowledge_service.domain.verbs.models import INPUTS
from knowledge_service.edge import mcp_tools
from knowledge_service.edge.body import UnreadableBody, read_json
from knowledge_service.edge.catalog import knowledge_routes
from knowledge_service.edge.routes.pages import Promote, PutPage, RevertPage, ReviewPage
from knowledge_service.runtime import Runtime
from tests.pages.test_every_json_body import Caller, caller  # noqa: F401 - the fixture, shared
from tests.unit.test_mcp_tools import post, start

PAGE = "/api/v1/projects/{id}/kb/pages/{path}"


def string_paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every string field of ``model`` as a dotted wire path (a list item is ``.0``)."""
    found = []
    for name, info in model.model_fields.items():
        found += _paths(info.annotation, f"{prefix}{info.alias or name}")
    return found


def _paths(annotation: Any, path: str) -> list[str]:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _paths(args[0], path)
    if origin in (Union, types.UnionType):
        return sorted({p for arg in args if arg is not type(None) for p in _paths(arg, path)})
    if origin in (list, tuple, set, frozenset):
        return _paths(args[0], f"{path}.0")
    if origin is dict:
        return _paths(args[1], f"{path}.key")
    if origin is Literal:
        return [path] if any(isinstance(a, str) for a in args) else []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return string_paths(annotation, f"{path}.")
    if annotation is str or (isinstance(annotation, type) and issubclass(annotation, (str, Enum))):
        return [path]
    return []


def holding(path: str, value: str) -> Any:
    """A JSON value with ``value`` at ``path`` (``a.0.b``) and nothing else."""
    head, _, rest = path.partition(".")
    inner = holding(rest, value) if rest else value
    return [inner] if head == "0" else {head: inner}


unencodable = st.tuples(
    st.text(max_size=6), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), st.text(max_size=6)
).map("".join)
FEW = settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))

KNOWLEDGE = sorted(
    {
        (r.method, r.path, path)
        for r in knowledge_routes()
        if r.body_model is not None
        for path in string_paths(r.body_model)
    }
)
PAGES = [
    *(("PUT", PAGE, p) for p in string_paths(PutPage)),
    *(("POST", f"{PAGE}/review", p) for p in string_paths(ReviewPage)),
    *(("POST", f"{PAGE}/revert", p) for p in string_paths(RevertPage)),
    *(("POST", "/api/v1/projects/{id}/kb/promote", p) for p in string_paths(Promote)),
]
VERBS = [("POST", f"/v/{verb}", p) for verb, model in sorted(INPUTS.items()) for p in string_paths(model)]
TOOLS = [(name, p) for name, spec in sorted(mcp_tools.SPECS.items()) for p in string_paths(spec.args)]


def test_the_walk_finds_the_string_fields_of_every_surface() -> None:
    assert ("PUT", PAGE, "content") in PAGES
    assert ("POST", "/knowledge/project-map", "knowledge_base") in KNOWLEDGE
    assert ("POST", "/knowledge/bases", "description") in KNOWLEDGE
    assert any(path.startswith("tags.0") for _, _, path in PAGES)
    assert any(verb == "/v/knowledge.propose" for _, verb, _ in VERBS)
    assert ("brain_put", "content") in TOOLS and ("knowledge_search", "q") in TOOLS
    assert len(KNOWLEDGE) >= 20 and len(VERBS) >= 10 and len(TOOLS) >= 15


@FEW
@given(value=unencodable)
def test_the_reader_names_the_field_that_holds_a_lone_surrogate_wherever_it_is(value: str) -> None:
    for path in ("content", "files.0.name", "a.b.0.0.c"):
        with pytest.raises(UnreadableBody) as refused:
            read_json(json.dumps(holding(path, value)))
        assert refused.value.field == path


@pytest.mark.parametrize(("method", "route", "path"), KNOWLEDGE + PAGES + VERBS, ids=str)
@FEW
@given(value=unencodable)
def test_a_lone_surrogate_in_any_string_field_is_a_400_naming_it_in_the_surfaces_shape(
    caller: Caller,  # noqa: F811 - the shared fixture
    method: str,
    route: str,
    path: str,
    value: str,
) -> None:
    status, media, body = caller.send(method, route, json.dumps(holding(path, value)))
    assert status == 400, body
    if route.startswith("/api/v1/projects/"):
        assert media == "application/problem+json"
        assert body["code"] == "invalid_argument" and body["detail"].startswith(f"{path}: "), body
    elif route.startswith("/v/"):
        assert set(body) == {"error", "code"} and body["error"].startswith(f"{path}: "), body
    else:
        assert body["code"] == "bad_request" and body["message"].startswith(f"{path}: "), body


@pytest.mark.parametrize(("tool", "path"), TOOLS, ids=str)
@FEW
@given(value=unencodable)
def test_a_lone_surrogate_in_any_tool_argument_is_invalid_params_naming_it(
    knowledge_on: Runtime, tool: str, path: str, value: str
) -> None:
    credential = start(knowledge_on, [tool])
    params = {"name": tool, "arguments": holding(path, value)}
    answer = post(credential, json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}))
    assert answer["statusCode"] == 400, answer
    body = json.loads(answer["body"])
    assert body["id"] == 9 and body["error"]["code"] == -32602
    assert body["error"]["message"].startswith(f"Invalid params: params.arguments.{path}: "), body
