"""The render schema of a verb whose answer is shown, not only read (spec 003: ``knowledge.get``
and ``knowledge.list`` have one that "drives an inline chat artefact and a GUI panel").

A render schema is a JSON Schema (2020-12) of the fields of the verb's answer a panel shows,
each property carrying its display role in ``x-role`` and the label a person reads as its
``title``, and the whole its layout in
``x-layout`` (``record``: one assertion; ``table``: rows of them). It is cut from the answer
model's own schema (wire names, types and formats as the verb answers them), so a field renamed
in the model leaves the schema at once (``tests/unit/test_verbs_render.py``), and any answer of
the verb validates against it.

The roles a client renders:

| role | what it is |
| --- | --- |
| ``title`` | the heading (an assertion's subject) |
| ``badge`` | a short state shown beside the title (its status) |
| ``body`` | the main text (the assertion) |
| ``quote`` | the evidence, shown verbatim as a quotation |
| ``source`` | the id of the capture the evidence comes from |
| ``source-text`` | the capture's body, where the quote stands |
| ``link`` | the id of another assertion to open (its successor) |
| ``meta`` | small print (confidence, jurisdiction, when) |
| ``key`` | the id a row opens with ``knowledge.get`` |
| ``rows`` | (table) the list of records |
| ``count`` | (table) how many there are in all |
"""

from __future__ import annotations

from typing import Any

from knowledge_service.domain.verbs.models import OUTPUTS, Answer

ROLES = frozenset({"title", "badge", "body", "quote", "source", "source-text", "link", "meta", "key", "rows", "count"})
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

Roles = dict[str, tuple[str, str]]  # wire name: (role, the label a person reads)

_ASSERTION: Roles = {
    "knowledgeId": ("key", "Assertion"),
    "subject": ("title", "Subject"),
    "status": ("badge", "Status"),
    "assertion": ("body", "Assertion"),
    "evidenceQuote": ("quote", "Evidence"),
    "captureId": ("source", "Source capture"),
    "supersededById": ("link", "Superseded by"),
    "confidence": ("meta", "Confidence"),
    "jurisdiction": ("meta", "Jurisdiction"),
    "updatedAt": ("meta", "Updated"),
}
RECORD_ROLES: dict[str, Roles] = {
    "knowledge.get": {**_ASSERTION, "captureBody": ("source-text", "Source text")},
}
TABLE_ROLES: dict[str, tuple[str, Roles, str]] = {
    # verb: (the rows' field, the roles of a row's fields, the total's field)
    "knowledge.list": ("items", _ASSERTION, "total"),
}


def render_schema(verb: str) -> dict[str, Any] | None:
    """The verb's render schema, or ``None`` for a verb whose answer is not rendered."""
    if verb in RECORD_ROLES:
        return {"$schema": SCHEMA_DIALECT, "x-layout": "record", **_record(OUTPUTS[verb], RECORD_ROLES[verb])}
    if verb in TABLE_ROLES:
        rows, roles, total = TABLE_ROLES[verb]
        schema = _serialized(OUTPUTS[verb])
        row_schema = _resolved(schema["properties"][rows]["items"], schema.get("$defs", {}))
        return {
            "$schema": SCHEMA_DIALECT,
            "x-layout": "table",
            "type": "object",
            "title": schema.get("title"),
            "properties": {
                rows: {
                    "type": "array",
                    "title": "Assertions",
                    "x-role": "rows",
                    "items": _with_roles(row_schema, roles, schema),
                },
                total: {**schema["properties"][total], "title": "Total", "x-role": "count"},
            },
            "required": [rows, total],
        }
    return None


def _serialized(model: type[Answer]) -> dict[str, Any]:
    return model.model_json_schema(by_alias=True, mode="serialization")


def _record(model: type[Answer], roles: Roles) -> dict[str, Any]:
    schema = _serialized(model)
    return _with_roles(schema, roles, schema)


def _with_roles(schema: dict[str, Any], roles: Roles, root: dict[str, Any]) -> dict[str, Any]:
    """``schema``'s object cut to the fields in ``roles``, each with its role and its label as
    ``title``, refs made inline."""
    definitions = root.get("$defs", {})
    properties = {
        name: {**_resolved(schema["properties"][name], definitions), "title": label, "x-role": role}
        for name, (role, label) in roles.items()
    }
    required = [name for name in schema.get("required", []) if name in roles]
    return {"type": "object", "title": schema.get("title"), "properties": properties, "required": required}


def _resolved(node: Any, definitions: dict[str, Any]) -> Any:
    """``node`` with every local ``$ref`` replaced by its definition (the schema stands alone)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _resolved(definitions[ref.removeprefix("#/$defs/")], definitions)
        return {key: _resolved(value, definitions) for key, value in node.items()}
    if isinstance(node, list):
        return [_resolved(item, definitions) for item in node]
    return node
