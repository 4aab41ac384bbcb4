"""devstack reads the embedded metric format the functions print, as CloudWatch would."""

from __future__ import annotations

import io
import json

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit

from devstack.metering import CallCounter, EmfTap, Meter, emf_figures


def test_a_powertools_line_becomes_sums_by_metric_and_dimensions() -> None:
    metrics = Metrics(namespace="KnowledgeService", service="schedule")
    metrics.clear_metrics()  # Powertools keeps one metric set per process: another test's may wait in it
    metrics.add_metric(name="DeadLettersEscalated", unit=MetricUnit.Count, value=2)
    metrics.add_metric(name="DeadLettersEscalated", unit=MetricUnit.Count, value=1)
    line = json.dumps(metrics.serialize_metric_set())
    metrics.clear_metrics()

    assert emf_figures(line) == {"KnowledgeService/DeadLettersEscalated{service=schedule}": 3.0}


def test_a_line_that_is_not_emf_is_no_figure() -> None:
    assert emf_figures('{"_aws": "not a directive"}') == {}
    assert emf_figures("{not json") == {}


def test_the_tap_passes_everything_on_and_reads_lines_split_across_writes() -> None:
    out = io.StringIO()
    tap = EmfTap(out)
    line = (
        '{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"KnowledgeService","Dimensions":[["outcome",'
        '"service"]],"Metrics":[{"Name":"ForagerCalls","Unit":"Count"}]}]},"outcome":"timeout","service":"feed",'
        '"ForagerCalls":[1.0]}'
    )
    tap.write('{"level":"INFO","message":"a log line"}\n' + line[:40])
    tap.write(line[40:] + "\n" + line + "\n")

    assert out.getvalue() == '{"level":"INFO","message":"a log line"}\n' + line + "\n" + line + "\n"
    assert tap.take() == {"KnowledgeService/ForagerCalls{outcome=timeout,service=feed}": 2.0}
    assert tap.take() == {}  # taken once


def test_the_meter_adds_what_each_invocation_published() -> None:
    meter = Meter()
    counter = CallCounter()
    counter.metrics = EmfTap(io.StringIO())
    counter.metrics.write(
        '{"_aws":{"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["service"]],'
        '"Metrics":[{"Name":"M","Unit":"Count"}]}]},"service":"s","M":[1.0]}\n'
    )
    meter.add_calls(counter.take())
    meter.add_calls({"cloudwatch": {"N/M{service=s}": 2.0}})

    assert meter.snapshot()["cloudwatch"] == {"N/M{service=s}": 3.0}
