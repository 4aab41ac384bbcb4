"""Disagreements a reader can trust (issue 58): two statements disagree only when they make the
same claim about the same thing, and a statement is ``Disputed`` only for such a contradiction.

Each test writes its documents, reads them through the engine's stages on a store of its own and
asks the disagreements the base holds.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from local_engine.ingestion import pipeline
from local_engine.knowledge import disagreements
from local_engine.store.database import Store


@pytest.fixture
def store() -> Iterator[Store]:
    held = Store(None, threading.RLock())
    yield held
    held.close()


@dataclass
class Disagreement:
    type: str
    resolution: str
    sides: dict[str, str]  # statement -> its status


def read(store: Store, folder: Path, files: dict[str, str]) -> list[Disagreement]:
    """The folder's files read by every stage; the base's disagreements, each with its sides."""
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    work = pipeline.Work(job_id="job_disagree", ref="base", kind="paths", inputs=[str(folder)], force=True)
    for stage in pipeline.STAGE_WORK.values():
        stage(store, work)
    found = []
    for conflict in store.rows("SELECT * FROM conflicts ORDER BY conflict_id"):
        sides = store.rows(
            "SELECT s.statement, s.status FROM conflict_sides c JOIN statements s USING (knowledge_id)"
            " WHERE c.conflict_id = ? ORDER BY c.position",
            conflict["conflict_id"],
        )
        statuses = {str(side["statement"]): str(side["status"]) for side in sides}
        found.append(Disagreement(str(conflict["type"]), str(conflict["suggested_resolution"]), statuses))
    return found


BADGE = ".. image:: https://img.shields.io/pypi/v/heron.svg :alt: Heron on the package index"


def disputed(store: Store) -> int:
    return int(store.value("SELECT COUNT(*) FROM statements WHERE status = 'Disputed'") or 0)


def notes(date: str, body: str) -> str:
    return f"---\ndocument_date: {date}\n---\n# Steering group\n\n{body}\n"


def test_release_notes_of_two_versions_stating_different_supported_versions_make_no_contradiction(
    store: Store, tmp_path: Path
) -> None:
    found = read(
        store,
        tmp_path / "docs",
        {
            "changes/2.0.md": "# Heron 2.0\n\nThe supported versions of Project Heron are Python 3.4 to 3.7.\n",
            "changes/2.1.md": "# Heron 2.1\n\nThe supported versions of Project Heron are Python 3.5 to 3.7.\n",
            "CHANGES.md": "# Changes\n\n## 2.2.0\n\n- The supported versions of Project Heron are Python 3.6 to 3.8.\n",
        },
    )
    assert found == []
    assert disputed(store) == 0


def test_a_version_is_part_of_the_subject(store: Store, tmp_path: Path) -> None:
    found = read(
        store,
        tmp_path / "docs",
        {
            "install.md": "# Install\n\nHeron 2.0 supports Python 3.4 and newer on every platform.\n",
            "upgrade.md": "# Upgrade\n\nHeron 2.1 supports Python 3.5 and newer on every platform.\n",
        },
    )
    assert found == []
    assert disagreements.claim_of("Heron 2.0 needs 3 reviewers.", "Heron", None)["subject"] == "heron 2.0"


def test_two_meeting_notes_giving_two_launch_dates_for_one_project_make_one(store: Store, tmp_path: Path) -> None:
    earlier = "The launch date for Project Kite is May 6, 2026."
    later = "The launch date for Project Kite is June 3, 2026, after the packaging delay."
    found = read(
        store,
        tmp_path / "meetings",
        {
            "2026-03-04-steering.md": notes("2026-03-04", f"{earlier}\n\nThe team meets every Tuesday."),
            "2026-04-15-steering.md": notes("2026-04-15", f"{later}\n\nThe team meets every Tuesday."),
        },
    )
    (contradiction,) = [f for f in found if f.type == "contradiction"]
    assert contradiction.sides == {earlier: "Disputed", later: "Active"}
    resolution = contradiction.resolution
    assert "2026-04-15" in resolution and "newer document" in resolution  # why it prefers a side
    assert disputed(store) == 1


def test_a_subject_keeps_its_numbered_step(store: Store, tmp_path: Path) -> None:
    found = read(
        store,
        tmp_path / "tutorial",
        {
            "part-a.md": notes("2026-01-01", "This tutorial begins where Tutorial 3 left off, in about 20 minutes."),
            "part-b.md": notes("2026-01-02", "This tutorial begins where Tutorial 4 left off, in about 25 minutes."),
        },
    )
    assert found == []


def test_duplicates_ignore_markup_and_images(store: Store, tmp_path: Path) -> None:
    found = read(
        store,
        tmp_path / "pkg",
        {
            "formatting.md": "# Formatting\n\n- Black handles `fmt: skip` comments inside parentheses in long calls.\n",
            "NOTES": f"Black handles ``fmt: skip`` comments inside parentheses in long calls.\n\n{BADGE}\n",
            "BADGES": ".. image:: https://img.shields.io/pypi/pyversions/heron.svg :alt: the Heron package index\n",
            "guide.md": "# Guide\n\nIt is not designed to be particularly secure, stable, or efficient.\n\n"
            "For example, the following configuration:\n",
            "server.md": "# Server\n\nIt is not designed to be particularly efficient, stable, or secure.\n\n"
            "For example, in the following configuration:\n",
        },
    )
    duplicates = [sorted(f.sides) for f in found if f.type == "duplicate"]
    assert duplicates == [
        [
            "It is not designed to be particularly efficient, stable, or secure.",
            "It is not designed to be particularly secure, stable, or efficient.",
        ]
    ]
    assert disputed(store) == 0


def test_a_contradiction_with_no_reason_to_prefer_a_side_says_so() -> None:
    class Row(dict[str, object]):
        pass

    won = Row(name="b.md", document_date=None, evidence=1)
    lost = Row(name="a.md", document_date=None, evidence=1)
    assert "neither is dated newer nor said more often" in disagreements.resolution(won, lost)  # type: ignore[arg-type]
    more = Row(name="b.md", document_date=None, evidence=3)
    assert "3 documents say it" in disagreements.resolution(more, lost)  # type: ignore[arg-type]
