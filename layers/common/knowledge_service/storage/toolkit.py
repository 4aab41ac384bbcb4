"""The storage toolkit: DynamoDB's paging, batching and conditional refusals, written once.

Every store under ``storage/`` reads and writes through these instead of its own loops:

- :func:`query_all` / :func:`scan_all` — every item of a Query or Scan, page after page
  (``LastEvaluatedKey`` → ``ExclusiveStartKey``); :func:`query_pages` / :func:`scan_pages`
  when the caller stops early or works a page at a time; :func:`query_count` for
  ``Select=COUNT``.
- :func:`batch_get_all` — BatchGetItem in requests of at most 100 keys, each retried on its
  ``UnprocessedKeys`` a bounded number of times with backoff.
- :func:`conditionally` — a conditional write (or transaction) that answers False when its
  condition refused it, and lets every other failure through.
- :func:`if_found` — an S3 GET or HEAD that answers None when the object is not there.
- :func:`expressions` — a Query's conditions as expression strings, for a query made from
  several threads at once through one resource.

Each helper makes exactly the requests the hand-written loop it replaced made: one request a
page, one BatchGetItem per 100 keys (plus one per round of unprocessed keys).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from boto3.dynamodb.conditions import ConditionBase, ConditionExpressionBuilder
from botocore.exceptions import ClientError

T = TypeVar("T")

BATCH_GET_KEYS = 100
"""DynamoDB's limit of keys in one BatchGetItem request (across its tables)."""

UNPROCESSED_ROUNDS = 8
"""How many times one request's ``UnprocessedKeys`` are asked again before giving up."""

BACKOFF_SECONDS = 0.05
BACKOFF_CAP_SECONDS = 1.0


class WriteFailed(Exception):
    """A write the domain depends on did not happen (condition refused or AWS failed)."""


class BatchIncomplete(Exception):
    """BatchGetItem still left keys unprocessed after :data:`UNPROCESSED_ROUNDS` retries."""


# ---------------------------------------------------------------------- conditional writes
def is_condition_failure(error: ClientError) -> bool:
    """A write its condition refused, or a transaction DynamoDB cancelled."""
    code = error.response.get("Error", {}).get("Code", "")
    return code in {"ConditionalCheckFailedException", "TransactionCanceledException"}


def is_condition_refusal(error: ClientError) -> bool:
    """Stricter: a transaction counts only when one of its conditions refused it (not a conflict)."""
    if not is_condition_failure(error):
        return False
    reasons = error.response.get("CancellationReasons") or []  # type: ignore[typeddict-item]
    return not reasons or any(r.get("Code") == "ConditionalCheckFailed" for r in reasons)


def is_transaction_conflict(error: ClientError) -> bool:
    """A transaction DynamoDB cancelled because another request was writing one of its items."""
    reasons = error.response.get("CancellationReasons") or []  # type: ignore[typeddict-item]
    return is_condition_failure(error) and any(r.get("Code") == "TransactionConflict" for r in reasons)


def conditionally(write: Callable[[], object], refused: Callable[[ClientError], bool] = is_condition_failure) -> bool:
    """Run a conditional write: True when it was made, False when its condition refused it.

    ``refused`` says which ``ClientError`` is the condition's refusal; any other error raises.
    """
    try:
        write()
    except ClientError as error:
        if refused(error):
            return False
        raise
    return True


# ---------------------------------------------------------------------- reads of one object
MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})
"""What S3 answers for an object (GET) or its head (HEAD) that is not there."""


def if_found(read: Callable[[], T]) -> T | None:
    """Run an S3 read: its answer, or None when the object is not there (any other error raises)."""
    try:
        return read()
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in MISSING_CODES:
            return None
        raise


# ---------------------------------------------------------------------- paging
def _pages(read: Callable[..., Mapping[str, Any]], kwargs: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    request = dict(kwargs)
    while True:
        page = read(**request)
        yield page
        if "LastEvaluatedKey" not in page:
            return
        request = {**request, "ExclusiveStartKey": page["LastEvaluatedKey"]}


def query_pages(table: Any, **kwargs: Any) -> Iterator[list[dict[str, Any]]]:
    """The items of a Query, one page at a time (the next page is asked only when wanted)."""
    for page in _pages(table.query, kwargs):
        yield list(page.get("Items", []))


def scan_pages(table: Any, **kwargs: Any) -> Iterator[list[dict[str, Any]]]:
    """The items of a Scan, one page at a time (the next page is asked only when wanted)."""
    for page in _pages(table.scan, kwargs):
        yield list(page.get("Items", []))


def expressions(key: ConditionBase, filter_by: ConditionBase | None = None) -> dict[str, Any]:
    """A Query's ``KeyConditionExpression`` (and ``FilterExpression``) as strings with their
    placeholders, built by a builder of this call's own.

    boto3's resource builds condition objects with one builder a client, reset at the start of
    each call: two threads querying through one resource at once (the event log's shards, read
    together) could rename each other's placeholders where a query has several, and a shard's
    query silently read another shard (boto3: a resource is not thread-safe). Strings pass
    through that builder untouched; the values are still serialized by the resource."""
    builder = ConditionExpressionBuilder()
    built = builder.build_expression(key, is_key_condition=True)
    params: dict[str, Any] = {"KeyConditionExpression": built.condition_expression}
    names, values = dict(built.attribute_name_placeholders), dict(built.attribute_value_placeholders)
    if filter_by is not None:
        built = builder.build_expression(filter_by)  # the builder's counters go on: no clash
        params["FilterExpression"] = built.condition_expression
        names.update(built.attribute_name_placeholders)
        values.update(built.attribute_value_placeholders)
    params["ExpressionAttributeNames"] = names
    if values:
        params["ExpressionAttributeValues"] = values
    return params


def query_all(table: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """Every item a Query matches, in order, across all its pages."""
    return [item for page in query_pages(table, **kwargs) for item in page]


def scan_all(table: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """Every item a Scan reads, across all its pages."""
    return [item for page in scan_pages(table, **kwargs) for item in page]


def query_count(table: Any, **kwargs: Any) -> int:
    """How many items a Query matches (``Select=COUNT``), across all its pages."""
    return sum(int(page.get("Count", 0)) for page in _pages(table.query, {**kwargs, "Select": "COUNT"}))


# ---------------------------------------------------------------------- batch reads
def batch_get_all(
    resource: Any,
    keys: Mapping[str, list[dict[str, Any]]],
    *,
    consistent: bool = False,
    projection: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, list[dict[str, Any]]]:
    """Every item found for ``keys`` (table name → keys), by table, in as few requests as allowed.

    The keys go in requests of at most :data:`BATCH_GET_KEYS` (tables in the order given); a
    request's ``UnprocessedKeys`` are asked again, with backoff, at most
    :data:`UNPROCESSED_ROUNDS` times before :class:`BatchIncomplete` is raised.
    """
    flat = [(table, key) for table, table_keys in keys.items() for key in table_keys]
    found: dict[str, list[dict[str, Any]]] = {table: [] for table in keys}
    for start in range(0, len(flat), BATCH_GET_KEYS):
        request: dict[str, Any] = {}
        for table, key in flat[start : start + BATCH_GET_KEYS]:
            entry = request.setdefault(table, _table_request(consistent, projection))
            entry["Keys"].append(key)
        for attempt in range(UNPROCESSED_ROUNDS + 1):
            if attempt:
                sleep(min(BACKOFF_CAP_SECONDS, BACKOFF_SECONDS * 2 ** (attempt - 1)))
            answer = resource.batch_get_item(RequestItems=request)
            for table, items in answer.get("Responses", {}).items():
                found.setdefault(table, []).extend(items)
            request = answer.get("UnprocessedKeys") or {}
            if not request:
                break
        else:
            left = sum(len(r.get("Keys", [])) for r in request.values())
            raise BatchIncomplete(f"{left} key(s) still unprocessed after {UNPROCESSED_ROUNDS} retries.")
    return found


def _table_request(consistent: bool, projection: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"Keys": []}
    if consistent:
        entry["ConsistentRead"] = True
    if projection is not None:
        entry["ProjectionExpression"] = projection
    return entry
