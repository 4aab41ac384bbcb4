"""template.yaml's operations block: every function's log group with a retention, its errors and
throttles alarms, every alarm notifying the one topic, the schedule's and the export verifier's
failure destinations, the verifier's cap (docs/operations.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from devstack.template import Template

TEMPLATE = Template()
FUNCTIONS = sorted(TEMPLATE.functions())
ALARMS = TEMPLATE.of_type("AWS::CloudWatch::Alarm")


def _function_alarm(function: str, metric: str) -> dict[str, Any] | None:
    for alarm in ALARMS.values():
        props = alarm["Properties"]
        if (
            props.get("Namespace") == "AWS/Lambda"
            and props.get("MetricName") == metric
            and props.get("Dimensions") == [{"Name": "FunctionName", "Value": {"Ref": function}}]
        ):
            return props
    return None


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_function_has_its_log_group_with_the_retention_parameter(function: str) -> None:
    groups = [
        r["Properties"]
        for r in TEMPLATE.of_type("AWS::Logs::LogGroup").values()
        if r["Properties"].get("LogGroupName") == {"Fn::Sub": f"/aws/lambda/${{{function}}}"}
    ]
    assert len(groups) == 1, f"{function} has {len(groups)} log group(s) named /aws/lambda/<its name>"
    assert groups[0]["RetentionInDays"] == {"Ref": "LogRetentionDays"}


def test_the_retention_defaults_to_thirty_days() -> None:
    assert TEMPLATE.body["Parameters"]["LogRetentionDays"]["Default"] == 30


@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("metric", ["Errors", "Throttles"])
def test_every_function_has_its_errors_and_throttles_alarms(function: str, metric: str) -> None:
    props = _function_alarm(function, metric)
    assert props is not None, f"no {metric} alarm on {function}"
    assert props["Threshold"] >= 1
    assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"


@pytest.mark.parametrize("alarm", sorted(ALARMS))
def test_every_alarm_notifies_the_topic(alarm: str) -> None:
    props = ALARMS[alarm]["Properties"]
    assert props["AlarmActions"] == [{"Ref": "AlarmTopic"}]
    assert "docs/operations.md#" in props["AlarmDescription"], "each alarm points at its runbook entry"


def test_the_topic_is_an_sns_topic_subscribed_only_when_an_address_is_given() -> None:
    assert TEMPLATE.resources["AlarmTopic"]["Type"] == "AWS::SNS::Topic"
    subscriptions = TEMPLATE.of_type("AWS::SNS::Subscription")
    assert all(s.get("Condition") == "AlarmEmailGiven" for s in subscriptions.values())
    assert TEMPLATE.body["Parameters"]["AlarmEmail"]["Default"] == ""
    assert TEMPLATE.condition("AlarmEmailGiven") is False
    assert Template(parameters={"AlarmEmail": "ops@example.org"}).condition("AlarmEmailGiven") is True


@pytest.mark.parametrize("table", sorted(TEMPLATE.of_type("AWS::DynamoDB::Table")))
def test_every_table_has_a_throttle_alarm(table: str) -> None:
    def names(props: dict[str, Any]) -> set[str]:
        return {
            m["MetricStat"]["Metric"]["MetricName"]
            for m in props.get("Metrics", [])
            if "MetricStat" in m
            and m["MetricStat"]["Metric"]["Dimensions"] == [{"Name": "TableName", "Value": {"Ref": table}}]
        }

    assert any(names(a["Properties"]) == {"ReadThrottleEvents", "WriteThrottleEvents"} for a in ALARMS.values())


def test_the_schedule_retries_then_parks_its_event_in_an_alarmed_queue() -> None:
    (event,) = TEMPLATE.resources["ScheduleFunction"]["Properties"]["Events"].values()
    props = event["Properties"]
    assert props["RetryPolicy"]["MaximumRetryAttempts"] >= 1
    assert props["DeadLetterConfig"] == {"Arn": {"Fn::GetAtt": ["ScheduleDeadLetterQueue", "Arn"]}}
    assert TEMPLATE.resources["ScheduleDeadLetterQueue"]["Type"] == "AWS::SQS::Queue"
    depth = ALARMS["ScheduleDeadLetterDepth"]["Properties"]
    assert depth["Dimensions"] == [
        {"Name": "QueueName", "Value": {"Fn::GetAtt": ["ScheduleDeadLetterQueue", "QueueName"]}}
    ]


def test_the_export_verifier_concurrency_is_capped_and_the_exports_function_answers_inside_the_gateways_wait() -> None:
    verifier = TEMPLATE.resources["ExportVerifierFunction"]["Properties"]
    assert verifier["ReservedConcurrentExecutions"] == {"Ref": "ExportsConcurrency"}
    assert verifier["Timeout"] == 900
    exports = TEMPLATE.resources["ExportsFunction"]["Properties"]
    assert "ReservedConcurrentExecutions" not in exports
    assert "Timeout" not in exports  # the Globals' 30 s of every route group: it never receives an archive itself


def test_the_export_verifier_retries_then_parks_its_event_in_an_alarmed_queue() -> None:
    props = TEMPLATE.resources["ExportVerifierFunction"]["Properties"]
    queue = {"Fn::GetAtt": ["ExportVerificationDeadLetterQueue", "Arn"]}
    (event,) = props["Events"].values()
    assert event["Type"] == "EventBridgeRule"
    rule = event["Properties"]
    assert rule["RetryPolicy"]["MaximumRetryAttempts"] >= 1  # EventBridge could not invoke it
    assert rule["DeadLetterConfig"] == {"Arn": queue}
    invoke = props["EventInvokeConfig"]  # the invocation raised: Lambda retries, then the same queue
    assert invoke["MaximumRetryAttempts"] >= 1
    assert invoke["DestinationConfig"]["OnFailure"] == {"Type": "SQS", "Destination": queue}
    assert TEMPLATE.resources["ExportVerificationDeadLetterQueue"]["Type"] == "AWS::SQS::Queue"
    (policy,) = [
        p["Properties"]
        for p in TEMPLATE.of_type("AWS::SQS::QueuePolicy").values()
        if p["Properties"]["Queues"] == [{"Ref": "ExportVerificationDeadLetterQueue"}]
    ]
    (statement,) = policy["PolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    assert (
        rule["RuleName"]["Fn::Sub"].split("}", 1)[1] in statement["Condition"]["ArnEquals"]["aws:SourceArn"]["Fn::Sub"]
    )
    depth = ALARMS["ExportVerificationDeadLetterDepth"]["Properties"]
    assert depth["Dimensions"] == [
        {"Name": "QueueName", "Value": {"Fn::GetAtt": ["ExportVerificationDeadLetterQueue", "QueueName"]}}
    ]


def test_the_digest_mismatch_alarm_counts_the_service_that_verifies() -> None:
    service = TEMPLATE.function_environment("ExportVerifierFunction")["POWERTOOLS_SERVICE_NAME"]
    alarm = ALARMS["ExportDigestMismatch"]["Properties"]
    dimensions = [m["MetricStat"]["Metric"]["Dimensions"] for m in alarm["Metrics"] if "MetricStat" in m]
    assert dimensions == [[{"Name": "service", "Value": service}]]


def test_only_the_exports_function_asks_the_verifier_and_the_verifier_holds_no_bucket_wide_write() -> None:
    def policies(function: str) -> str:
        return json.dumps(TEMPLATE.resources[function]["Properties"]["Policies"])

    assert "EventBridgePutEventsPolicy" in policies("ExportsFunction")
    verifier = policies("ExportVerifierFunction")
    assert "EventBridgePutEventsPolicy" not in verifier and "S3CrudPolicy" not in verifier
    assert "/exports/*" in verifier


def test_the_dashboard_shows_every_function() -> None:
    (dashboard,) = TEMPLATE.of_type("AWS::CloudWatch::Dashboard").values()
    body = dashboard["Properties"]["DashboardBody"]["Fn::Sub"]
    assert all(f"${{{function}}}" in body for function in FUNCTIONS)
