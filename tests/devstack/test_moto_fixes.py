"""``devstack.moto_fixes``: moto's transactions roll back as they did, for a copy that costs what
the transaction touches (not the whole table).

The law is checked against moto's own method (``__wrapped__``, put back for the comparison run):
the same answer (error code, message, cancellation reasons) and the same tables and stream
records after it, for random tables and random transactions — Puts, Updates, Deletes and
ConditionChecks with conditions that hold or fail, a key named twice, an update moto refuses
midway, a table named by its ARN or not existing.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from hypothesis import event, example, given, settings, strategies as st
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import DynamoDBBackend, dynamodb_backends
from moto.dynamodb.models.dynamo_type import Item

from devstack import moto_fixes
from devstack.moto_fixes import install_cheap_transaction_rollback

install_cheap_transaction_rollback()

REGION = "us-east-1"
RANGED = "ranged"  # hash key pk (S) and range key sk (N)
FLAT = "flat"  # hash key pk (S) only, with a stream (its records are rolled back too)
ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/{}"


@functools.cache
def _client(service: str) -> Any:
    """One client a process: moto serves it whichever ``mock_aws`` is active."""
    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)
    return session.client(service)  # type: ignore[call-overload]


def _create_tables() -> None:
    dynamodb = _client("dynamodb")
    dynamodb.create_table(
        TableName=RANGED,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamodb.create_table(
        TableName=FLAT,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )


def _key(table: str, pk: str, sk: int) -> dict[str, Any]:
    key: dict[str, Any] = {"pk": {"S": pk}}
    if table == RANGED:
        key["sk"] = {"N": str(sk)}
    return key


# -- the transactions ------------------------------------------------------------------------------

_tables = st.sampled_from([RANGED, FLAT])
_pks = st.sampled_from(["a", "b", "c", "d"])
_sks = st.integers(min_value=1, max_value=2)
_values = st.integers(min_value=0, max_value=3)

_CONDITIONS = {
    "exists": ("attribute_exists(pk)", False),
    "absent": ("attribute_not_exists(pk)", False),
    "below": ("v < :x", True),
    "above": ("v > :x", True),
}


@st.composite
def _transact_item(draw: st.DrawFn, filled: list[tuple[str, str, int, int]]) -> dict[str, Any]:
    """One transact item, at a key the table holds two times in three (when it holds any)."""
    if filled and draw(st.integers(0, 2)):
        table, pk, sk, _ = draw(st.sampled_from(filled))
    else:
        table, pk, sk = draw(_tables), draw(_pks), draw(_sks)
    kind = draw(st.sampled_from(["Put", "Update", "Delete", "ConditionCheck"]))
    key = _key(table, pk, sk)
    naming = draw(st.sampled_from(["name"] * 32 + ["arn"] * 6 + ["absent"]))
    name = {"name": table, "arn": ARN.format(table), "absent": "absent"}[naming]
    op: dict[str, Any] = {"TableName": name}
    values: dict[str, Any] = {}
    if kind == "Put":
        op["Item"] = {**key, "v": {"N": str(draw(_values))}, "tag": {"S": draw(st.sampled_from(["x", "y"]))}}
    else:
        op["Key"] = key
    if kind == "Update":
        # "v + :one" on an item without v is refused midway (moto's MockValidationException)
        expression = draw(st.sampled_from(["SET v = :x", "SET v = v + :one", "ADD v :one", "REMOVE tag"]))
        op["UpdateExpression"] = expression
        values.update({":x": {"N": str(draw(_values))}} if ":x" in expression else {})
        values.update({":one": {"N": "1"}} if ":one" in expression else {})
    condition = draw(st.sampled_from([None, None, None, *_CONDITIONS]))  # most writes unconditional
    if kind == "ConditionCheck" and condition is None:
        condition = "exists"
    if condition is not None:
        expression, needs_value = _CONDITIONS[condition]
        op["ConditionExpression"] = expression
        if needs_value:
            values.setdefault(":x", {"N": str(draw(_values))})
    if values:
        op["ExpressionAttributeValues"] = values
    return {kind: op}


@st.composite
def _case(draw: st.DrawFn) -> tuple[list[tuple[str, str, int, int]], list[dict[str, Any]]]:
    """What the tables hold (table, pk, sk, v), and a transaction over them."""
    filled = draw(st.lists(st.tuples(_tables, _pks, _sks, _values), max_size=8))
    transact_items = draw(st.lists(_transact_item(filled), min_size=1, max_size=5))
    if draw(st.booleans()):  # a check that fails, among the writes: the transaction is rolled back
        at = draw(st.integers(0, len(transact_items)))
        transact_items.insert(at, {"ConditionCheck": _TRIPWIRE})
    return filled, transact_items


_TRIPWIRE = {"TableName": RANGED, "Key": _key(RANGED, "nowhere", 0), "ConditionExpression": "attribute_exists(pk)"}


def _run(prefill: list[tuple[str, str, int, int]], transact_items: list[dict[str, Any]]) -> dict[str, Any]:
    """In a fresh moto: the tables filled, the transaction's answer, and what the tables hold after."""
    dynamodb = _client("dynamodb")
    with mock_aws():
        _create_tables()
        for table, pk, sk, value in prefill:
            dynamodb.put_item(TableName=table, Item={**_key(table, pk, sk), "v": {"N": str(value)}})
        try:
            dynamodb.transact_write_items(TransactItems=transact_items)
            answer: Any = None
        except ClientError as error:
            reasons = error.response.get("CancellationReasons")
            answer = [error.response["Error"]["Code"], error.response["Error"]["Message"], reasons]
        return {"answer": answer, **_contents()}


def _contents() -> dict[str, Any]:
    dynamodb = _client("dynamodb")
    contents: dict[str, Any] = {
        table: sorted(json.dumps(item, sort_keys=True) for item in dynamodb.scan(TableName=table)["Items"])
        for table in (RANGED, FLAT)
    }
    # moto's dynamodbstreams client answers DescribeStream "Not yet implemented": the shard's
    # records are read from the backend
    shard = dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].get_table(FLAT).stream_shard
    contents["stream"] = [
        [r.record["eventName"], r.record["dynamodb"]["Keys"]]
        + [r.record["dynamodb"].get(image) for image in ("OldImage", "NewImage")]
        for r in shard.items
    ]
    return contents


@contextlib.contextmanager
def _moto_original() -> Iterator[None]:
    """Moto's own ``transact_write_items`` (its full copies) while inside."""
    fixed = DynamoDBBackend.transact_write_items
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DynamoDBBackend, "transact_write_items", fixed.__wrapped__)  # type: ignore[attr-defined]
        yield


@settings(max_examples=60)
@given(case=_case())
# a table named by its ARN is the same table: the item it writes is in the rollback copy as it was
@example(
    case=(
        [(RANGED, "a", 1, 1), (FLAT, "a", 0, 1)],
        [
            {"Put": {"TableName": ARN.format(RANGED), "Item": {**_key(RANGED, "a", 2), "v": {"N": "1"}}}},
            {"Delete": {"TableName": ARN.format(FLAT), "Key": _key(FLAT, "a", 0)}},
            {
                "ConditionCheck": {
                    "TableName": FLAT,
                    "Key": _key(FLAT, "b", 0),
                    "ConditionExpression": "attribute_exists(pk)",
                }
            },
            {"ConditionCheck": _TRIPWIRE},
        ],
    )
)
def test_a_transaction_ends_as_it_does_with_moto_s_own_rollback(
    case: tuple[list[tuple[str, str, int, int]], list[dict[str, Any]]],
) -> None:
    prefill, transact_items = case
    fixed = _run(prefill, transact_items)
    with _moto_original():
        original = _run(prefill, transact_items)
    event(f"answer: {original['answer'] and original['answer'][0]}")
    assert fixed == original


@pytest.fixture
def moto() -> Iterator[Any]:
    with mock_aws():
        _create_tables()
        yield _client("dynamodb")


def test_a_cancelled_transaction_leaves_every_item_it_named_as_it_was(moto: Any) -> None:
    before = {**_key(RANGED, "a", 1), "v": {"N": "1"}, "tag": {"S": "x"}}
    moto.put_item(TableName=RANGED, Item=before)
    transact_items = [
        {"Put": {"TableName": RANGED, "Item": {**_key(RANGED, "b", 1), "v": {"N": "5"}}}},
        {
            "Update": {
                "TableName": RANGED,
                "Key": _key(RANGED, "a", 1),
                "UpdateExpression": "SET v = v + :one, tag = :t REMOVE gone",
                "ExpressionAttributeValues": {":one": {"N": "1"}, ":t": {"S": "changed"}},
            }
        },
        {
            "ConditionCheck": {
                "TableName": FLAT,
                "Key": _key(FLAT, "c", 0),
                "ConditionExpression": "attribute_exists(pk)",
            }
        },
    ]
    with pytest.raises(ClientError) as raised:
        moto.transact_write_items(TransactItems=transact_items)
    assert raised.value.response["Error"]["Code"] == "TransactionCanceledException"
    reasons = [reason["Code"] for reason in raised.value.response["CancellationReasons"]]
    assert reasons == ["None", "None", "ConditionalCheckFailed"]
    assert moto.get_item(TableName=RANGED, Key=_key(RANGED, "a", 1))["Item"] == before
    assert "Item" not in moto.get_item(TableName=RANGED, Key=_key(RANGED, "b", 1))


def _deep_copied_items(monkeypatch: pytest.MonkeyPatch) -> list[Item]:
    copied: list[Item] = []
    moto_copy = Item.__deepcopy__

    def counted(self: Item, memo: dict[int, Any]) -> Item:
        copied.append(self)
        return moto_copy(self, memo)

    monkeypatch.setattr(Item, "__deepcopy__", counted)
    return copied


def _two_item_transaction(moto: Any) -> None:
    moto.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": FLAT, "Item": {**_key(FLAT, "new", 0), "v": {"N": "1"}}}},
            {
                "Update": {
                    "TableName": FLAT,
                    "Key": _key(FLAT, "p7", 0),
                    "UpdateExpression": "ADD v :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}},
                }
            },
        ]
    )


def _fill(moto: Any, count: int) -> None:
    requests = [{"PutRequest": {"Item": {**_key(FLAT, f"p{n}", 0), "v": {"N": "0"}}}} for n in range(count)]
    for start in range(0, count, 25):
        moto.batch_write_item(RequestItems={FLAT: requests[start : start + 25]})


def test_the_rollback_copy_holds_the_items_named_not_the_table(moto: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(moto, 500)
    copied = _deep_copied_items(monkeypatch)
    _two_item_transaction(moto)
    # the updated item, copied for the rollback and by moto's update_item (its stream's old image)
    assert len(copied) <= 4
    assert moto.get_item(TableName=FLAT, Key=_key(FLAT, "p7", 0))["Item"]["v"] == {"N": "1"}

    copied.clear()
    with _moto_original():
        _two_item_transaction(moto)
    assert len(copied) >= 500  # moto's own copy: every item of the table


def test_installing_again_changes_nothing() -> None:
    fixed = DynamoDBBackend.transact_write_items
    install_cheap_transaction_rollback()
    assert DynamoDBBackend.transact_write_items is fixed
    assert not hasattr(fixed.__wrapped__, "__wrapped__")  # type: ignore[attr-defined]


def test_the_server_finds_each_service_as_before_with_moto_listed_once() -> None:
    from moto import backends
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    listed = sorted(backends.list_of_moto_modules())
    moto_fixes.install_listed_modules_once()
    moto_fixes.install_listed_modules_once()  # a second install changes nothing
    assert sorted(backends.list_of_moto_modules()) == listed
    assert backends.list_of_moto_modules() is backends.list_of_moto_modules()  # listed once
    dispatcher = DomainDispatcherApplication(create_backend_app)
    assert dispatcher.get_backend_for_host("dynamodb") == "dynamodb"
    assert dispatcher.get_backend_for_host("s3.amazonaws.com") == "s3"
    assert dispatcher.get_backend_for_host("127.0.0.1") is None  # found from the signed request instead


def test_each_response_class_is_asked_its_method_names_once_and_answers_as_before() -> None:
    from moto.core import responses, utils
    from moto.dynamodb.responses import DynamoHandler

    moto_fixes.install_method_names_once()
    moto_fixes.install_method_names_once()  # a second install changes nothing
    assert responses.method_names_from_class(DynamoHandler) == utils.method_names_from_class(DynamoHandler)
    assert responses.method_names_from_class(DynamoHandler) is responses.method_names_from_class(DynamoHandler)
    assert "transact_write_items" in responses.method_names_from_class(DynamoHandler)
