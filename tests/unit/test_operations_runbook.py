"""docs/operations.md has one runbook entry for every alarm template.yaml declares, and each
alarm's description links to the entry that lists it."""

from __future__ import annotations

import re
from pathlib import Path

from devstack.template import ROOT, Template

RUNBOOK = ROOT / "docs" / "operations.md"


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")


def runbook_entries(path: Path = RUNBOOK) -> dict[str, str]:
    """Each alarm the runbook lists (``Alarms:`` lines under a ``###`` heading) -> its entry's anchor."""
    entries: dict[str, str] = {}
    anchor = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            anchor = _anchor(line[4:].strip())
        elif line.startswith("Alarms:"):
            assert anchor is not None, "an Alarms: line outside a runbook entry"
            for alarm in re.findall(r"`([A-Za-z0-9]+)`", line):
                assert alarm not in entries, f"{alarm} is listed twice in the runbook"
                entries[alarm] = anchor
    return entries


def test_the_runbook_lists_exactly_the_alarms_the_template_declares() -> None:
    declared = set(Template().of_type("AWS::CloudWatch::Alarm"))
    listed = set(runbook_entries())

    assert declared - listed == set(), "alarms without a runbook entry"
    assert listed - declared == set(), "runbook entries for alarms the template does not declare"


def test_each_alarm_description_links_to_the_entry_that_lists_it() -> None:
    entries = runbook_entries()
    for name, alarm in Template().of_type("AWS::CloudWatch::Alarm").items():
        description = alarm["Properties"]["AlarmDescription"]
        assert description.endswith(f"docs/operations.md#{entries[name]}"), name


def test_every_entry_says_its_threshold_what_to_look_at_and_the_fix() -> None:
    text = RUNBOOK.read_text(encoding="utf-8").split("## Runbook", 1)[1]
    for entry in text.split("\n### ")[1:]:
        heading = entry.splitlines()[0]
        for part in ("**Means.**", "**Threshold.**", "**Look first.**", "**Fix.**"):
            assert part in entry, f"{heading}: no {part}"
