"""Run every benchmark, print a table, write bench-results.json."""

from __future__ import annotations

import json
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import imports, requests

RESULTS = Path("bench-results.json")


def main() -> int:
    results: dict[str, Any] = {
        "measured_at": datetime.now(UTC).isoformat(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "imports": imports.measure(),
        "requests": requests.measure(),
    }
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print("\nCold-start imports (median of 7 fresh interpreters, python -X importtime)")
    print(f"{'function':<22}{'module ms':>11}{'third-party ms':>16}{'project ms':>12}")
    for row in results["imports"]:
        print(
            f"{row['function']:<22}{row['module_import_ms']:>11}{row['third_party_import_ms']:>16}"
            f"{row['project_overhead_ms']:>12}"
        )
    print("\nRequests per call (warm container; moto in-process, simulator on loopback)")
    print(f"{'route':<42}{'status':>7}{'DynamoDB':>10}{'other AWS':>11}{'FORAGER':>9}")
    for row in results["requests"]:
        print(
            f"{row['route']:<42}{row['status']:>7}{row['dynamodb_requests']:>10}{row['other_aws_requests']:>11}"
            f"{row['forager_requests']:>9}"
        )
    print(f"\nwritten to {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
