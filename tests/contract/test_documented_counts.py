"""docs/benchmarks.md's per-route counts are the benchmark's own output, not numbers typed by hand.

``benchmarks.requests`` counts the DynamoDB, S3, other AWS and FORAGER requests one call of each
route makes (deterministic counts, no timing); the document's table must be exactly what it
prints, so a change that adds a request to a route changes the document in the same commit
(``uv run python -m benchmarks.requests --write``)."""

from __future__ import annotations

from benchmarks import requests


def test_the_per_route_table_in_the_benchmarks_document_is_what_the_benchmark_counts() -> None:
    measured = requests.counts_table(requests.measure(iterations=0))
    assert requests.documented() == measured, (
        "docs/benchmarks.md's per-route counts differ from the code's: "
        "run `uv run python -m benchmarks.requests --write`"
    )
