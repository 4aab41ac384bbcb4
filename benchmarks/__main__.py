"""Run every benchmark, print a table, write bench-results.json.

``--only idle`` runs one part and prints it (bench-results.json is written by a whole run
only); ``--idle-seconds`` is how long the idle stack is watched.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import (
    archives,
    console,
    engine,
    exports,
    feed,
    idle,
    imports,
    kb as kb_command,
    load,
    pages,
    reads,
    requests,
    responsiveness,
    search,
    stack_routes,
    uploads,
)

RESULTS = Path("bench-results.json")


PARTS = ("idle", "console", "search", "doors", "engine", "archives", "responsiveness")
"""The parts ``--only`` runs alone."""


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=PARTS, help="run this part alone and print it (no bench-results.json)")
    parser.add_argument(
        "--idle-seconds",
        type=float,
        default=idle.SECONDS,
        help=f"how long the idle stack is watched (default {idle.SECONDS:g})",
    )
    arguments = parser.parse_args(argv)
    if arguments.idle_seconds <= 0:
        parser.error("--idle-seconds must be positive")
    return arguments


def _only(arguments: argparse.Namespace) -> int:
    """One part alone, printed as its table and as JSON (no bench-results.json)."""
    parts: dict[str, tuple[Callable[[], Any], Callable[[Any], None]]] = {
        "console": (console.measure, console.report),
        "search": (search.measure, search.report),
        "doors": (requests.measure_doors, requests.report_doors),
        "idle": (lambda: idle.measure(arguments.idle_seconds), idle.report),
        "engine": (engine.measure, engine.report),
        "archives": (archives.measure, archives.report),
        "responsiveness": (responsiveness.measure, responsiveness.report),
    }
    measure, report = parts[arguments.only]
    result = measure()
    report(result)
    print(json.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    arguments = _arguments(argv)
    if arguments.only is not None:
        return _only(arguments)
    results: dict[str, Any] = {
        "measured_at": datetime.now(UTC).isoformat(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "imports": imports.measure(),
        "stack_routes": stack_routes.measure(),
        "requests": requests.measure(),
        "reads": reads.measure(),
        "feed": feed.measure(),
        "uploads": uploads.measure(),
        "load": load.measure(),
        "pages": pages.measure(),
        "search": search.measure(),
        "exports": exports.measure(),
        "archives": archives.measure(),
        "kb": kb_command.measure(),
        "idle": idle.measure(arguments.idle_seconds),
        "console": console.measure(),
        "engine": engine.measure(),
        "responsiveness": responsiveness.measure(),
    }
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(
        "\nCold-start imports (11 alternating rounds of fresh interpreters, python -X importtime, in .bench-floor/:"
        " the layer's locked dependencies only, compiled; the layer from source as sam build ships it, and with"
        " its bytecode; ms)"
    )
    print(
        f"{'function':<22}{'module med':>11}{'module min':>11}{'floor med':>10}{'floor min':>10}{'x floor':>8}"
        f"{'own ms':>8}{'bytecode med':>13}{'x floor':>8}{'floor, gc off':>14}{'x':>7}{'chunk maps':>11}{'floor':>6}"
    )
    for row in results["imports"]:
        print(
            f"{row['function']:<22}{row['module_import_ms']:>11}{row['module_import_min_ms']:>11}"
            f"{row['third_party_import_ms']:>10}{row['third_party_import_min_ms']:>10}{row['over_floor']:>8}"
            f"{row['project_overhead_ms']:>8}{row['compiled_layer_import_ms']:>13}{row['compiled_layer_over_floor']:>8}"
            f"{row['third_party_collector_off_ms']:>14}{row['compiled_layer_over_collector_off_floor']:>7}"
            f"{row['stack_chunk_maps'] if row['stack_chunk_maps'] is not None else '-':>11}"
            f"{row['floor_stack_chunk_maps'] if row['floor_stack_chunk_maps'] is not None else '-':>6}"
        )
    stack_routes.report(results["stack_routes"])
    print("\nPer route (warm handler, moto in-process, simulator on loopback; latency over 50 calls)")
    print(
        f"{'route':<42}{'status':>7}{'p50 ms':>8}{'p99 ms':>8}{'DynamoDB':>10}{'S3':>4}{'other AWS':>11}{'FORAGER':>9}"
    )
    for row in results["requests"]:
        print(
            f"{row['route']:<42}{row['status']:>7}{row.get('p50_ms', ''):>8}{row.get('p99_ms', ''):>8}"
            f"{row['dynamodb_requests']:>10}{row['s3_requests']:>4}{row['other_aws_requests']:>11}"
            f"{row['forager_requests']:>9}"
        )
    print("\nReads: the edge's added latency over the simulator's own (warm, in-process, ms)")
    print(
        f"{'route':<26}{'n':>5}{'edge p50':>10}{'edge p99':>10}{'sim p50':>9}{'sim p99':>9}"
        f"{'+p50':>7}{'+p99':>7}{'DynamoDB':>10}"
    )
    for row in results["reads"]:
        print(
            f"{row['route']:<26}{row['iterations']:>5}{row['edge_p50_ms']:>10}{row['edge_p99_ms']:>10}"
            f"{row['simulator_p50_ms']:>9}{row['simulator_p99_ms']:>9}{row['added_p50_ms']:>7}{row['added_p99_ms']:>7}"
            f"{row['dynamodb_requests']:>10}"
        )
    print("\nFeed pass (moto in-process, in-memory producer; every tenth envelope an export)")
    print(f"{'lane':<10}{'envelopes':>10}{'seconds':>9}{'env/s':>8}{'DynamoDB':>10}{'per env':>9}{'acted':>7}")
    for row in results["feed"]:
        print(
            f"{row['policy']:<10}{row['envelopes']:>10}{row['seconds']:>9}{row['envelopes_per_second']:>8}"
            f"{row['dynamodb_requests']:>10}{row['dynamodb_per_envelope']:>9}{row['acted']:>7}"
        )
    row = results["uploads"]
    print("\nA 100 MB batch through an S3 upload session (the ingestion Lambda in its own process)")
    print(f"{'files':>6}{'MiB':>6}{'status':>8}{'RSS before':>12}{'peak RSS':>10}{'limit':>7}{'commit s':>10}")
    print(
        f"{row['files']:>6}{row['batch_bytes'] // 1048576:>6}{row['status']:>8}{row['rss_before_commit_mib']:>12}"
        f"{row['peak_rss_mib']:>10}{row['limit_mib']:>7}{row['commit_seconds']:>10}"
    )
    load.print_load(results["load"])
    print("\nPages (warm handler, moto in-process; lint and stats over a seeded base)")
    print(f"{'route':<48}{'n':>5}{'p50 ms':>10}{'p99 ms':>10}{'DynamoDB':>10}{'S3':>5}")
    for row in results["pages"]:
        print(
            f"{row['route']:<48}{row['iterations']:>5}{row['p50_ms']:>10}{row['p99_ms']:>10}"
            f"{row['dynamodb_per_call']:>10}{row['s3_per_call']:>5}"
        )
    search.report(results["search"])
    engine.report(results["engine"])
    responsiveness.report(results["responsiveness"])
    print("\nThe kb command against the local stack (python -m devstack; a 200- and a 2,000-page base)")
    print(f"{'step':<28}{'pages':>7}{'seconds':>9}{'HTTP requests':>15}{'(409 waits)':>12}{'peak MiB':>10}{'load':>6}")
    for row in results["kb"]:
        print(
            f"{row['step']:<28}{row['pages']:>7}{row['seconds']:>9}{row['http_requests']:>15}"
            f"{row['not_ready_polls']:>12}{row['peak_mib']:>10}{row['load_1m']:>6}"
        )
    idle.report(results["idle"])
    print(f"\nwritten to {RESULTS}")
    exports.report(results["exports"])
    archives.report(results["archives"])
    console.report(results["console"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
