"""The capacity model's parts that need no stack: what a call costs, how a key is read, and the
API's throttles the template sets from the model."""

from __future__ import annotations

import math

import pytest
from boto3.dynamodb.conditions import Key

from benchmarks import capacity
from devstack import footprint
from devstack.template import Template


@pytest.fixture(scope="module")
def template() -> Template:
    return Template()


def test_the_mix_is_whole_and_every_route_of_it_is_a_route_of_the_template(template: Template) -> None:
    assert math.isclose(sum(t.share for t in capacity.MIX), 1.0)
    routes = {f"{r.method} {r.path}" for r in template.routes()}
    assert {t.route for t in capacity.MIX} <= routes


def test_the_template_throttles_each_method_of_the_mix_at_what_the_model_needs(template: Template) -> None:
    for route, needed in capacity.needed_throttles().items():
        assert capacity.throttle(template, route) == (needed, needed), route
    assert capacity.throttle(template, "GET /knowledge/sources") == (50, 100)  # every other method


def test_a_read_is_4_kb_a_unit_half_when_eventual_and_a_miss_still_costs_one() -> None:
    big = {"pk": {"S": "p"}, "body": {"S": "x" * 5000}}
    get = {"TableName": "T", "Key": {"pk": {"S": "p"}}, "ConsistentRead": True}
    assert footprint.dynamodb("GetItem", get, {"Item": big}) == [('dynamodb|T||{"pk": "p"}|read-strong', 2.0)]
    assert footprint.dynamodb("GetItem", {**get, "ConsistentRead": False}, {})[0][1] == 0.5


def test_a_query_rounds_its_whole_result_once_and_names_its_partition_from_a_boto3_condition() -> None:
    items = [{"pk": "PAGE#falcon", "sk": f"/p{n}", "text": "y" * 1000} for n in range(10)]
    query = {"TableName": "T", "KeyConditionExpression": Key("pk").eq("PAGE#falcon") & Key("sk").begins_with("/")}
    ((key, units),) = footprint.dynamodb("Query", query, {"Items": items})
    assert key == 'dynamodb|T||{"pk": "PAGE#falcon"}|read-eventual'
    assert units == 0.5 * math.ceil(footprint.item_size(items[0]) * 10 / 4096)


def test_a_write_is_1_kb_a_unit_and_twice_that_in_a_transaction() -> None:
    item = {"pk": {"S": "p"}, "body": {"S": "x" * 1500}}
    assert footprint.dynamodb("PutItem", {"TableName": "T", "Item": item}, {})[0][1] == 2
    transaction = {
        "TransactItems": [
            {"Put": {"TableName": "T", "Item": item}},
            {"ConditionCheck": {"TableName": "T", "Key": {"pk": {"S": "q"}}}},
        ]
    }
    assert [units for _, units in footprint.dynamodb("TransactWriteItems", transaction, {})] == [4, 2]


def test_an_s3_call_is_one_request_on_its_prefix() -> None:
    assert footprint.s3("PutObject", {"Bucket": "b", "Key": "pages/falcon/abc"}) == [("s3|b|pages/falcon||put", 1.0)]
    assert footprint.s3("ListBuckets", {}) == []


def test_a_key_is_named_by_what_varies_and_carries_that_entity_s_share() -> None:
    setup = capacity.Replay(
        client=None, projects=("falcon", "capacity-a"), missions={}, tokens={"ab" * 32: "<principal>"}
    )  # type: ignore[arg-type]
    assert capacity.normalized("PAGE#capacity-a", setup) == "PAGE#<project>"
    assert capacity.normalized("ab" * 32, setup) == "<principal>"
    assert capacity.normalized("SESSION#" + "f" * 32, setup) == "SESSION#<id>"
    assert capacity.entity_share("ConfigTable pk=settings read-strong") == 1.0
    assert capacity.entity_share("PagesTable pk=PAGE#<project> read-strong") == capacity.BUSIEST_PROJECT
    assert capacity.entity_share("PagesTable pk=SESSION#<id> write") == 0.0
