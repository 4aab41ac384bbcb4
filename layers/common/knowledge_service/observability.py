"""What an operator acts on, as CloudWatch metrics: Powertools Metrics, embedded metric format.

Each function prints its metrics as one JSON line per flush (the door's ``log_metrics`` flushes
after every invocation); CloudWatch Logs turns them into metrics of the namespace
``POWERTOOLS_METRICS_NAMESPACE`` (``KnowledgeService`` in the template), dimension ``service``
(the function's ``POWERTOOLS_SERVICE_NAME``) and, for :func:`count_outcome`, ``outcome``. The
alarms in ``template.yaml`` name exactly these dimension sets; ``docs/operations.md`` is the
runbook.

The domain and the upstream client emit from where the events happen, so this module sits at the
bottom of the layers (pyproject's import contract) and imports nothing of the project.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Literal

from aws_lambda_powertools import Metrics, single_metric
from aws_lambda_powertools.metrics import MetricUnit

DEFAULT_NAMESPACE = "KnowledgeService"
METRICS_DISABLED = "POWERTOOLS_METRICS_DISABLED"  # Powertools' own switch, honoured by its flush too

# Counted without an outcome: dimension service only.
Counted = Literal[
    "DeadLettersFiled",  # the door refused an envelope, or an action exhausted its retries
    "DeadLettersEscalated",  # unresolved for 180 days (alarm DeadLetterEscalated)
    "DeadLettersReplayed",
    "DeadLettersDiscarded",
    "ExportsVerified",  # an archive's SHA-256 and size matched and it is in S3
    "ExportDigestMismatches",  # ... did not (alarm ExportDigestMismatch)
    "FeedPassesDegraded",  # a pass that degraded its stream at least once and reconciled
    "FeedEnvelopesRead",  # envelopes a pass received from the feed
    "FeedEnvelopesActed",  # actions a pass carried out (a study queued, a finding filed, ...)
    "ActionsRetried",  # an action that failed for a retryable reason, tried again by a pass
    "IngestionJobsQueued",  # FORAGER took a job (POST /knowledge/jobs; a replayed key is not counted again)
    "PreflightsRefused",  # FORAGER's admission gate measured a batch and did not admit it
]
# Counted by outcome: dimensions service and outcome.
ByOutcome = Literal[
    "ForagerCalls",  # outcome: ok, refused, timeout, unreachable, upstream_error
    "Requests",  # every API request a function answered; outcome: its HTTP status ("200", "404", ...)
    "McpToolCalls",  # outcome: ok, or the refusal's code (not_found, knowledge_disabled, internal, ...)
    "VerbCallsRefused",  # outcome: budget, autonomy, or the verbs' wire code (Forbidden, NotFound, ...)
    "FeedDegradations",  # outcome: the reason (gap, cursor_expired, cursor_ahead, history_diverged, generation_changed)
]
ForagerOutcome = Literal["ok", "refused", "timeout", "unreachable", "upstream_error"]


def namespace() -> str:
    return os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or DEFAULT_NAMESPACE


@cache
def metrics() -> Metrics:
    """The function's one metric set (Powertools shares it between instances); the door flushes it."""
    return Metrics(namespace=namespace())


def count(name: Counted, value: int = 1) -> None:
    """Add ``value`` to the count ``name`` (nothing for zero), published at the invocation's end."""
    if value:
        metrics().add_metric(name=name, unit=MetricUnit.Count, value=value)


def count_outcome(name: ByOutcome, outcome: str) -> None:
    """One ``name`` with its outcome as a dimension: a metric line of its own, printed now (not
    where Powertools' ``POWERTOOLS_METRICS_DISABLED`` turns metrics off: the admin command line)."""
    if os.environ.get(METRICS_DISABLED, "").strip().lower() in ("1", "true", "yes", "on"):
        return
    with single_metric(
        name=name, unit=MetricUnit.Count, value=1, namespace=namespace(), default_dimensions={"outcome": outcome}
    ):
        pass


def milliseconds(name: Literal["ForagerCallLatency"], value: float) -> None:
    """A latency sample, published with the invocation's other metrics (dimension service)."""
    metrics().add_metric(name=name, unit=MetricUnit.Milliseconds, value=round(value, 1))
