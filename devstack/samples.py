"""A well-formed call to any route of the API, built from the route table.

The authorization matrix, the fault-injection tests and the benchmarks call every route;
this builds each call from the route's path and request model, naming the demo project,
so a route added tomorrow is called without anyone writing its request by hand.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from knowledge_service.edge.catalog import RouteInfo

PROJECT = "falcon"
"""The demo project: bound to FORAGER's falcon, in organization colony."""

SAMPLE_IDS = {
    "items": "ki_0000000000000000",
    "entities": "ent_0000000000000000",
    "sources": "src_0000000000000000",
    "conflicts": "cf_0000000000000000",
    "duplicates": "mc_0000000000000000",
    "changes": "0" * 24,
    "feed": "dl_" + "0" * 20,
}
"""A well-formed id that names no record, per record kind (the path segment after /knowledge/)."""


def request_for(route: RouteInfo) -> tuple[str, str | None]:
    """A well-formed call to ``route`` naming the project: (target, JSON body)."""
    path = re.sub(r"\{[^}]+\}", lambda m: SAMPLE_IDS[_kind(route.path)], route.path)
    target = f"{path}?project={PROJECT}&q=launch"
    body = None if route.body_model is None else json.dumps(_minimal(route.body_model))
    return target, body


def _kind(path: str) -> str:
    return path.split("/")[2]


def _minimal(model: type[BaseModel]) -> dict[str, Any]:
    """The smallest body the model accepts, naming the matrix's project."""
    body: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if not info.is_required():
            if name == "project":
                body[name] = PROJECT
            continue
        annotation = info.annotation
        if get_origin(annotation) is Literal:
            body[name] = get_args(annotation)[0]
            continue
        options = [a for a in (get_args(annotation) or (annotation,)) if a is not type(None)]
        kind = options[0]
        if kind is bool:
            body[name] = False
        elif kind is int:
            body[name] = 1
        elif isinstance(kind, type) and issubclass(kind, StrEnum):
            body[name] = next(iter(kind)).value
        else:
            body[name] = PROJECT
    return body
