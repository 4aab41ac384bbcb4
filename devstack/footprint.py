"""What each AWS call touched: the table (or bucket), the key, and the capacity it costs.

The local stack records it per invocation beside its call counts (``GET /_local/metrics``'s
``footprint``), and ``benchmarks.capacity`` turns it into the capacity model: which partition
each route leans on, and how hard. One entry is a string key and a number:

- ``dynamodb|<table>|<index>|<key>|<kind>`` -> capacity units. ``<key>`` is the JSON of the
  key attributes the call names with ``=`` (a ``GetItem``'s whole key; a ``Query``'s equality
  conditions: its partition key, and its sort key when it is one item); ``<index>`` is the
  index a ``Query`` reads (empty for the table); ``<kind>`` is ``read-strong``,
  ``read-eventual``, ``write`` or ``scan``. A ``Scan`` reads every partition of the table.
- ``s3|<bucket>|<prefix>||<get|put>`` -> requests, ``<prefix>`` the object key up to its last
  ``/`` (S3 scales its request rate per prefix).

Units follow DynamoDB's pricing rules on the item sizes the call carried: a read is 4 KB a
unit (half for an eventually consistent one, twice in a transaction), a ``Query`` rounds the
whole result up once, a miss still costs one unit; a write is 1 KB a unit (twice in a
transaction). An ``UpdateItem`` is billed on the whole item, which the call does not carry:
it is counted on its key and the values it sets (a small counter's update, the usual case,
costs what it costs; a large item updated in place is undercounted, and the model says so).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from boto3.dynamodb.conditions import ConditionBase, ConditionExpressionBuilder
from boto3.dynamodb.types import Binary

READ_UNIT = 4096
WRITE_UNIT = 1024

_S3_READS = {"GetObject", "HeadObject", "ListObjectsV2", "ListObjects", "GetObjectAttributes"}
_S3_WRITES = {
    "PutObject",
    "CopyObject",
    "DeleteObject",
    "DeleteObjects",
    "CreateMultipartUpload",
    "UploadPart",
    "CompleteMultipartUpload",
    "AbortMultipartUpload",
}
_EQUALITY = re.compile(r"^\(?\s*([#\w.]+)\s*=\s*(:[\w]+)\s*\)?$")


_TYPES = {"S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "L", "M"}


def _typed(value: Any) -> bool:
    return isinstance(value, Mapping) and len(value) == 1 and next(iter(value)) in _TYPES


def size_of(value: Any) -> int:
    """An attribute value's size as DynamoDB counts it, in the low-level form (``{"S": ...}``, a
    plain client's) or as Python values (a boto3 resource's, which serializes them later)."""
    if not _typed(value):
        return _python_size(value)
    ((kind, inner),) = value.items()
    if kind == "S":
        return len(str(inner).encode())
    if kind == "N":
        return (len(str(inner).lstrip("-").replace(".", "")) + 1) // 2 + 1
    if kind == "B":
        return len(inner) if isinstance(inner, bytes | bytearray) else len(str(inner))
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(str(s).encode()) for s in inner)
    if kind == "NS":
        return sum(size_of({"N": n}) for n in inner)
    if kind == "BS":
        return sum(len(b) for b in inner)
    if kind == "L":
        return 3 + sum(size_of(v) + 1 for v in inner)
    if kind == "M":
        return 3 + item_size(inner)
    return 0


def _python_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, int | float | Decimal):
        return size_of({"N": str(value)})
    if isinstance(value, bytes | bytearray):
        return len(value)
    if isinstance(value, Binary):
        return len(value.value)  # type: ignore[attr-defined]  # boto3-stubs leave Binary.value out
    if isinstance(value, Mapping):
        return 3 + item_size(value)
    if isinstance(value, list | tuple):
        return 3 + sum(_python_size(v) + 1 for v in value)
    if isinstance(value, set | frozenset):
        return sum(_python_size(v) for v in value)
    return len(str(value))


def item_size(item: Mapping[str, Any] | None) -> int:
    """An item's size: its attribute names and values."""
    return sum(len(name.encode()) + size_of(value) for name, value in (item or {}).items())


def _read_units(size: int, consistent: bool, transaction: bool = False) -> float:
    units = max(1, math.ceil(size / READ_UNIT)) * (1.0 if consistent else 0.5)
    return units * (2 if transaction else 1)


def _write_units(size: int, transaction: bool = False) -> float:
    return max(1, math.ceil(size / WRITE_UNIT)) * (2 if transaction else 1)


def _plain(value: Any) -> str:
    if _typed(value):
        inner = next(iter(value.values()))
        return inner.hex() if isinstance(inner, bytes | bytearray) else str(inner)
    return str(value)


def _key(attributes: Mapping[str, Any]) -> str:
    return json.dumps({name: _plain(value) for name, value in attributes.items()}, sort_keys=True)


def _entry(table: str, index: str, attributes: Mapping[str, Any], kind: str) -> str:
    return f"dynamodb|{table}|{index}|{_key(attributes)}|{kind}"


def equalities(request: Mapping[str, Any]) -> dict[str, Any]:
    """The ``name = :value`` conditions of a Query's ``KeyConditionExpression``, by attribute name."""
    names = request.get("ExpressionAttributeNames") or {}
    values = request.get("ExpressionAttributeValues") or {}
    expression = request.get("KeyConditionExpression", "")
    if isinstance(expression, ConditionBase):  # a boto3 resource's condition, built later by boto3
        built = ConditionExpressionBuilder().build_expression(expression, is_key_condition=True)
        expression = built.condition_expression
        names = {**names, **built.attribute_name_placeholders}
        values = {**values, **built.attribute_value_placeholders}
    found: dict[str, Any] = {}
    for clause in re.split(r"\s+AND\s+", str(expression), flags=re.IGNORECASE):
        match = _EQUALITY.match(clause.strip())
        if match and match.group(2) in values:
            name = str(match.group(1))
            found[str(names.get(name, name))] = values[match.group(2)]
    return found


def _matches(item: Mapping[str, Any], key: Mapping[str, Any]) -> bool:
    return all(item.get(name) == value for name, value in key.items())


Touched = list[tuple[str, float]]


def _get_item(request: Mapping[str, Any], answer: Mapping[str, Any]) -> Touched:
    consistent = bool(request.get("ConsistentRead"))
    units = _read_units(item_size(answer.get("Item")), consistent)
    return [(_entry(request["TableName"], "", request["Key"], _consistency(consistent)), units)]


def _batch_get(request: Mapping[str, Any], answer: Mapping[str, Any]) -> Touched:
    touched: Touched = []
    for table, wanted in (request.get("RequestItems") or {}).items():
        consistent = bool(wanted.get("ConsistentRead"))
        got = (answer.get("Responses") or {}).get(table, [])
        for key in wanted.get("Keys", []):
            found = next((item for item in got if _matches(item, key)), None)
            units = _read_units(item_size(found), consistent)
            touched.append((_entry(table, "", key, _consistency(consistent)), units))
    return touched


def _transact_get(request: Mapping[str, Any], answer: Mapping[str, Any]) -> Touched:
    gets = [entry.get("Get", {}) for entry in request.get("TransactItems", [])]
    return [(_entry(get["TableName"], "", get["Key"], "read-strong"), _read_units(0, True, True)) for get in gets]


def _query(request: Mapping[str, Any], answer: Mapping[str, Any]) -> Touched:
    consistent = bool(request.get("ConsistentRead"))
    size = sum(item_size(item) for item in answer.get("Items", []))
    index = str(request.get("IndexName", ""))
    where = _entry(request["TableName"], index, equalities(request), _consistency(consistent))
    return [(where, _read_units(size, consistent))]


def _scan(request: Mapping[str, Any], answer: Mapping[str, Any]) -> Touched:
    size = sum(item_size(item) for item in answer.get("Items", []))
    return [(_entry(request["TableName"], str(request.get("IndexName", "")), {}, "scan"), _read_units(size, False))]


def _write(request: Mapping[str, Any], answer: Mapping[str, Any]) -> Touched:
    return [(_entry(request["TableName"], "", _named_key(request), "write"), _write_units(_written(request)))]


def _batch_write(request: Mapping[str, Any], answer: Mapping[str, Any]) -> Touched:
    touched: Touched = []
    for table, writes in (request.get("RequestItems") or {}).items():
        for write in writes:
            put = write.get("PutRequest", {}).get("Item")
            key = put if put is not None else write.get("DeleteRequest", {}).get("Key", {})
            touched.append((_entry(table, "", key, "write"), _write_units(item_size(put))))
    return touched


def _transact_write(request: Mapping[str, Any], answer: Mapping[str, Any]) -> Touched:
    touched: Touched = []
    for entry in request.get("TransactItems", []):
        for verb, one in entry.items():
            key = one.get("Item") or one.get("Key") or {}
            size = _written(one) if verb != "ConditionCheck" else 0
            touched.append((_entry(one["TableName"], "", key, "write"), _write_units(size, True)))
    return touched


_DYNAMODB = {
    "GetItem": _get_item,
    "BatchGetItem": _batch_get,
    "TransactGetItems": _transact_get,
    "Query": _query,
    "Scan": _scan,
    "PutItem": _write,
    "UpdateItem": _write,
    "DeleteItem": _write,
    "BatchWriteItem": _batch_write,
    "TransactWriteItems": _transact_write,
}


def dynamodb(operation: str, request: Mapping[str, Any], answer: Mapping[str, Any]) -> Touched:
    """The partitions one DynamoDB call touched, and what each cost (nothing for another call)."""
    weigh = _DYNAMODB.get(operation)
    return weigh(request, answer) if weigh is not None else []


def _named_key(request: Mapping[str, Any]) -> Mapping[str, Any]:
    return request.get("Key") or request.get("Item") or {}


def _written(request: Mapping[str, Any]) -> int:
    """The size a write is billed on, as far as the call carries it (see the module's note)."""
    if "Item" in request:
        return item_size(request["Item"])
    values = request.get("ExpressionAttributeValues") or {}
    return item_size(request.get("Key")) + sum(size_of(v) for v in values.values())


def _consistency(consistent: bool) -> str:
    return "read-strong" if consistent else "read-eventual"


def s3(operation: str, request: Mapping[str, Any]) -> list[tuple[str, float]]:
    """The prefix one S3 call touched (one request)."""
    kind = "get" if operation in _S3_READS else "put" if operation in _S3_WRITES else None
    if kind is None:
        return []
    key = str(request.get("Key") or request.get("Prefix") or "")
    if operation == "DeleteObjects":
        objects = (request.get("Delete") or {}).get("Objects") or [{}]
        key = str(objects[0].get("Key", ""))
    prefix = key.rsplit("/", 1)[0] if "/" in key else ""
    return [(f"s3|{request.get('Bucket', '')}|{prefix}||{kind}", 1.0)]


def touches(
    service: str, operation: str, request: Mapping[str, Any], answer: Mapping[str, Any]
) -> list[tuple[str, float]]:
    """What one botocore call touched (nothing for a service the model does not weigh)."""
    if service == "dynamodb":
        return dynamodb(operation, request, answer)
    if service == "s3":
        return s3(operation, request)
    return []


def added(totals: dict[str, float], entries: Iterable[tuple[str, float]]) -> None:
    for key, units in entries:
        totals[key] = round(totals.get(key, 0.0) + units, 3)
