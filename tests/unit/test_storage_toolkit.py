"""The storage toolkit: paging, batch reads, conditional writes and S3 misses, written once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError
from moto import mock_aws

from knowledge_service.storage import toolkit
from knowledge_service.storage.toolkit import (
    BatchIncomplete,
    batch_get_all,
    conditionally,
    if_found,
    is_condition_refusal,
    query_all,
    query_count,
    query_pages,
    scan_all,
)


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        resource = boto3.resource("dynamodb")
        resource.create_table(
            TableName="rows",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "N"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        yield resource.Table("rows")


class Counting:
    """A table or resource whose calls are counted (and optionally answered by hand)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[dict[str, Any]] = []

    def query(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        return self.inner.query(**kwargs)

    def scan(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        return self.inner.scan(**kwargs)


def _fill(table: Any, pk: str, count: int) -> None:
    with table.batch_writer() as batch:
        for n in range(count):
            batch.put_item(Item={"pk": pk, "sk": n, "pad": "x" * 200})


# ---------------------------------------------------------------------- paging
def test_given_more_rows_than_a_page_when_query_all_then_every_row_in_order_one_request_a_page(table: Any) -> None:
    _fill(table, "a", 25)
    _fill(table, "b", 3)
    counted = Counting(table)

    rows = query_all(counted, KeyConditionExpression=Key("pk").eq("a"), Limit=10, ConsistentRead=True)

    assert [int(r["sk"]) for r in rows] == list(range(25))
    assert len(counted.calls) == 3  # 10 + 10 + 5: the third page has no LastEvaluatedKey
    assert "ExclusiveStartKey" not in counted.calls[0]
    assert counted.calls[1]["ExclusiveStartKey"] == {"pk": "a", "sk": 9}
    assert all(c["ConsistentRead"] is True and c["Limit"] == 10 for c in counted.calls)


def test_given_rows_in_many_partitions_when_scan_all_then_every_row(table: Any) -> None:
    _fill(table, "a", 12)
    _fill(table, "b", 12)
    counted = Counting(table)

    rows = scan_all(counted, Limit=5)

    assert sorted((r["pk"], int(r["sk"])) for r in rows) == [(p, n) for p in "ab" for n in range(12)]
    assert len(counted.calls) == 5  # 5 + 5 + 5 + 5 + 4


def test_given_a_caller_that_stops_early_when_query_pages_then_no_further_page_is_asked(table: Any) -> None:
    _fill(table, "a", 30)
    counted = Counting(table)

    first = next(iter(query_pages(counted, KeyConditionExpression=Key("pk").eq("a"), Limit=10)))

    assert len(first) == 10
    assert len(counted.calls) == 1


def test_given_matches_across_pages_when_query_count_then_the_counts_add_up(table: Any) -> None:
    _fill(table, "a", 23)
    counted = Counting(table)

    total = query_count(counted, KeyConditionExpression=Key("pk").eq("a"), Limit=10)

    assert total == 23
    assert [c["Select"] for c in counted.calls] == ["COUNT"] * 3


# ---------------------------------------------------------------------- batch reads
def test_given_250_keys_when_batch_get_all_then_three_requests_of_at_most_100(table: Any) -> None:
    _fill(table, "a", 250)
    resource = boto3.resource("dynamodb")
    sizes: list[int] = []
    real = resource.batch_get_item

    def counted(**kwargs: Any) -> Any:
        sizes.append(sum(len(r["Keys"]) for r in kwargs["RequestItems"].values()))
        return real(**kwargs)

    resource.batch_get_item = counted  # type: ignore[method-assign]

    found = batch_get_all(resource, {"rows": [{"pk": "a", "sk": n} for n in range(250)]}, projection="sk")

    assert sizes == [100, 100, 50]
    assert sorted(int(i["sk"]) for i in found["rows"]) == list(range(250))
    assert all(set(i) == {"sk"} for i in found["rows"])


def test_given_keys_of_two_tables_when_batch_get_all_then_one_request_and_answers_by_table(table: Any) -> None:
    _fill(table, "a", 2)
    resource = boto3.resource("dynamodb")
    resource.create_table(
        TableName="other",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    resource.Table("other").put_item(Item={"id": "x"})
    requests: list[dict[str, Any]] = []
    real = resource.batch_get_item

    def counted(**kwargs: Any) -> Any:
        requests.append(kwargs["RequestItems"])
        return real(**kwargs)

    resource.batch_get_item = counted  # type: ignore[method-assign]

    found = batch_get_all(
        resource, {"rows": [{"pk": "a", "sk": 0}, {"pk": "a", "sk": 7}], "other": [{"id": "x"}]}, consistent=True
    )

    assert len(requests) == 1
    assert all(r["ConsistentRead"] is True for r in requests[0].values())
    assert [int(i["sk"]) for i in found["rows"]] == [0]
    assert found["other"] == [{"id": "x"}]


class Stingy:
    """A resource that leaves ``withheld`` keys unprocessed for ``rounds`` answers."""

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.requests: list[dict[str, Any]] = []

    def batch_get_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(RequestItems)
        keys = RequestItems["rows"]["Keys"]
        if len(self.requests) <= self.rounds:
            served, left = keys[:1], keys[1:]
        else:
            served, left = keys, []
        answer: dict[str, Any] = {"Responses": {"rows": [dict(k, found=True) for k in served]}}
        if left:
            answer["UnprocessedKeys"] = {"rows": {**RequestItems["rows"], "Keys": left}}
        return answer


def test_given_unprocessed_keys_when_batch_get_all_then_only_they_are_asked_again_after_a_backoff() -> None:
    stingy = Stingy(rounds=2)
    slept: list[float] = []

    found = batch_get_all(stingy, {"rows": [{"k": n} for n in range(4)]}, projection="k", sleep=slept.append)

    assert sorted(i["k"] for i in found["rows"]) == [0, 1, 2, 3]
    assert [len(r["rows"]["Keys"]) for r in stingy.requests] == [4, 3, 2]
    assert all(r["rows"]["ProjectionExpression"] == "k" for r in stingy.requests)
    assert slept == [toolkit.BACKOFF_SECONDS, toolkit.BACKOFF_SECONDS * 2]


def test_given_keys_that_stay_unprocessed_when_batch_get_all_then_it_gives_up_after_the_bound() -> None:
    stingy = Stingy(rounds=10_000)
    slept: list[float] = []

    with pytest.raises(BatchIncomplete, match="still unprocessed"):
        batch_get_all(stingy, {"rows": [{"k": n} for n in range(50)]}, sleep=slept.append)

    assert len(stingy.requests) == toolkit.UNPROCESSED_ROUNDS + 1
    assert max(slept) <= toolkit.BACKOFF_CAP_SECONDS


# ---------------------------------------------------------------------- conditional writes
def test_given_a_condition_that_holds_when_conditionally_then_written_and_true(table: Any) -> None:
    made = conditionally(lambda: table.put_item(Item={"pk": "a", "sk": 1}, ConditionExpression=Attr("pk").not_exists()))

    assert made is True
    assert "Item" in table.get_item(Key={"pk": "a", "sk": 1})


def test_given_a_condition_that_refuses_when_conditionally_then_false_and_nothing_written(table: Any) -> None:
    table.put_item(Item={"pk": "a", "sk": 1, "v": "first"})

    made = conditionally(
        lambda: table.put_item(Item={"pk": "a", "sk": 1, "v": "second"}, ConditionExpression=Attr("pk").not_exists())
    )

    assert made is False
    assert table.get_item(Key={"pk": "a", "sk": 1})["Item"]["v"] == "first"


def test_given_any_other_failure_when_conditionally_then_it_raises(table: Any) -> None:
    with pytest.raises(ClientError) as raised:
        conditionally(lambda: table.put_item(Item={"pk": "a"}))  # no sort key: a validation error

    assert raised.value.response["Error"]["Code"] == "ValidationException"


def _cancelled(*codes: str) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
            "CancellationReasons": [{"Code": c} for c in codes],
        },  # type: ignore[typeddict-unknown-key]
        "TransactWriteItems",
    )


def test_given_a_transaction_cancelled_by_a_conflict_when_strict_then_it_raises() -> None:
    def conflicted() -> None:
        raise _cancelled("None", "TransactionConflict")

    def refused() -> None:
        raise _cancelled("ConditionalCheckFailed", "None")

    assert conditionally(conflicted) is False  # the default counts any cancellation as refused
    with pytest.raises(ClientError):
        conditionally(conflicted, refused=is_condition_refusal)
    assert conditionally(refused, refused=is_condition_refusal) is False


# ---------------------------------------------------------------------- S3 reads
def test_given_a_missing_object_when_if_found_then_none_and_other_errors_raise(table: Any) -> None:
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="toolkit-bucket")
    s3.put_object(Bucket="toolkit-bucket", Key="here", Body=b"hi")

    assert if_found(lambda: s3.head_object(Bucket="toolkit-bucket", Key="gone")) is None
    assert if_found(lambda: s3.get_object(Bucket="toolkit-bucket", Key="gone")) is None
    assert if_found(lambda: s3.head_object(Bucket="toolkit-bucket", Key="here"))["ContentLength"] == 2
    with pytest.raises(ClientError):
        if_found(lambda: s3.get_object(Bucket="no-such-bucket", Key="here"))
