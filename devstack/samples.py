"""A well-formed call to any route of the API, built from the route table.

The authorization matrix, the fault-injection tests and the benchmarks call every route;
this builds each call from the route's path and request model, naming the demo project,
so a route added tomorrow is called without anyone writing its request by hand.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Annotated, Any, Literal, get_args, get_origin

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
    "jobs": "job_0000000000000000",
    "exports": "exp_0000000000000000",
    "feed": "dl_" + "0" * 20,
}
"""A well-formed id that names no record, per record kind (the path segment after /knowledge/)."""


def request_for(route: RouteInfo, project: str | None = PROJECT) -> tuple[str, str | None]:
    """A well-formed call to ``route`` naming ``project``: (target, JSON body).

    ``project=None`` names none, for the console default: no ``?project=``, and a body's
    ``project`` left out when optional, ``""`` when required.
    """
    path = re.sub(r"\{[^}]+\}", lambda m: SAMPLE_IDS[_kind(route.path)], route.path)
    target = f"{path}?q=launch" if project is None else f"{path}?project={project}&q=launch"
    body = None if route.body_model is None else json.dumps(_minimal(route.body_model, project))
    return target, body


def _kind(path: str) -> str:
    return path.split("/")[2]


def _minimal(model: type[BaseModel], project: str | None = PROJECT) -> dict[str, Any]:
    """The smallest body the model accepts, naming ``project`` (None: the console default)."""
    body: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if name == "project":  # the body names the call's project, required or not
            if project is not None or info.is_required():
                body[name] = project or ""
            continue
        if not info.is_required():
            continue
        body[name] = _minimal_value(info.annotation)
    return body


def _minimal_value(annotation: Any) -> Any:
    """The smallest value of a field's type: a list holds one smallest item."""
    if get_origin(annotation) is list:
        return [_minimal_value(get_args(annotation)[0])]
    if get_origin(annotation) is Annotated:
        return _minimal_value(get_args(annotation)[0])
    if get_origin(annotation) is Literal:
        return get_args(annotation)[0]
    options = [a for a in (get_args(annotation) or (annotation,)) if a is not type(None)]
    kind = options[0]
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return _minimal(kind)
    if kind is bool:
        return False
    if kind is int:
        return 1
    if isinstance(kind, type) and issubclass(kind, StrEnum):
        return next(iter(kind)).value
    return PROJECT
