"""The route checklist names every file a new route touches (issue 60): each file a test
requires a route to appear in, so a newcomer who follows the checklist finds no test red for a
file it did not name."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TOUCHED = {
    "layers/common/knowledge_service/edge/routes/<group>.py": "the route itself",
    "template.yaml": "its Api event (tests/unit/test_routes_match_the_template.py)",
    "tests/permissions.py": "its row in the permission table (tests/unit/test_permissions_table.py)",
    "docs/openapi.json": "the generated document (tests/unit/test_openapi.py)",
    "docs/api.md": "its row and curl (tests/e2e/test_documented_curls.py)",
    "docs/benchmarks.md": "its per-route request counts (tests/contract/test_documented_counts.py)",
}


def _route_checklist() -> str:
    text = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    return text.split("## A route", 1)[1].split("\n## ", 1)[0]


def test_the_route_checklist_names_every_file_a_route_touches() -> None:
    checklist = _route_checklist()
    named = set(re.findall(r"`([^`\s]+\.(?:py|yaml|json|md))`", checklist))
    missing = {path: why for path, why in TOUCHED.items() if path not in named}
    assert not missing, f"docs/contributing.md's route checklist does not name: {missing}"


def test_every_file_the_checklist_names_exists() -> None:
    for path in re.findall(
        r"`((?:docs|tests|layers|functions|benchmarks)/[^`\s<>*]+\.(?:py|yaml|json|md))`", _route_checklist()
    ):
        assert (ROOT / path).exists(), path
