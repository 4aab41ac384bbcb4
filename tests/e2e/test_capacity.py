"""``make capacity`` at small scale, in ``make test``: the replay on a fresh local stack, its
report the one docs/architecture.md shows, and the goal it must show."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import capacity
from devstack.template import Template
from tests.localstack import launch_stack

pytestmark = pytest.mark.e2e


def test_the_capacity_model_replays_the_mix_and_the_architecture_document_shows_its_report(tmp_path: Path) -> None:
    with launch_stack(tmp_path) as stack:
        footprints = capacity.replay(stack)
    assert set(footprints) == {t.name for t in capacity.MIX}
    assert all(f.statuses and max(f.statuses) < 400 for f in footprints.values())
    report = capacity.report(footprints, Template())
    assert capacity.section() == report, "docs/architecture.md's capacity section is stale: run make capacity"
    # the goal: the mix at 10,000 requests/s with no partition above half its ceiling
    assert capacity.partitions_over_half(footprints, Template()) == []
