"""``dedup_conflict`` reads a subject's held claims at its first statement of a source and lets
them go after its last, so a source holds only the subjects open at one point of its text. These
tests hold that the disagreements found are the ones a read of every subject at the source's start
finds, on a fresh read and on a re-read after people decided some of them (a decision archives
sides while the next source is compared)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from local_engine.ingestion import pipeline
from local_engine.knowledge import disagreements
from local_engine.store.database import TABLES, Store
from tests.documents import FILLER, disagreeing_notes, ingest_decide_reread


class ReadAtStart(disagreements.Detector):
    """The rule as first written: every subject's held claims read before the source's first
    statement is compared."""

    def statements(self, source: Any, computed: dict[str, dict[str, Any]] | None = None) -> None:
        self.snapshot: dict[str, disagreements.Subject] | None = None
        super().statements(source, computed)

    def _held_by_subject(self, subject: str, source_id: str) -> disagreements.Subject:
        if self.snapshot is None:  # the first read of a source: before any side was settled
            named = [r[0] for r in self.db.execute("SELECT DISTINCT subject FROM claims WHERE ref = ?", (self.ref,))]
            self.snapshot = {s: super(ReadAtStart, self)._held_by_subject(s, source_id) for s in named}
        return self.snapshot.get(subject) or disagreements.Subject(subject, [])


def test_a_subject_read_at_its_first_statement_finds_what_a_read_at_the_start_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "notes"
    disagreeing_notes(folder)
    lazy, counts = ingest_decide_reread(folder)
    monkeypatch.setattr(disagreements, "Detector", ReadAtStart)
    at_start, counts_at_start = ingest_decide_reread(folder)
    # the corpus exercises the rule: many contradictions, some decided, sides archived on the re-read
    assert counts["contradictions"] > 50 and counts["decided"] > 10 and counts["archived"] > 10, counts
    assert counts == counts_at_start
    for table in TABLES:
        assert lazy[table] == at_start[table], table


def test_a_source_holds_only_the_subjects_open_at_one_point_of_its_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subject named only at a file's start is let go before one named only at its end is read."""
    folder = tmp_path / "notes"
    folder.mkdir()
    for n in range(3):
        early = f"Project Falcon ships the first release on 2024-0{n + 1}-10."
        late = f"Project Heron employs {10 + n} engineers in the harbour office."
        (folder / f"notes-{n}.md").write_text("# Notes\n\n" + "\n\n".join([early, *[FILLER] * 5, late]) + "\n")
    reads: list[tuple[str, list[str]]] = []
    read = disagreements.Detector._held_by_subject

    def recording(self: disagreements.Detector, subject: str, source_id: str) -> disagreements.Subject:
        reads.append((subject, sorted(self.held)))  # what is held as this subject is read
        return read(self, subject, source_id)

    monkeypatch.setattr(disagreements.Detector, "_held_by_subject", recording)
    store = Store(None, threading.RLock())
    work = pipeline.Work(job_id="job_x", ref="base", kind="paths", inputs=[str(folder)], force=True)
    for stage in pipeline.STAGE_WORK.values():
        stage(store, work)
    assert reads == [("project falcon", []), ("project heron", [])] * 3
    # and the later files' claims were compared with the earlier files': three disagree on each
    assert store.value("SELECT COUNT(*) FROM conflicts WHERE type = 'contradiction'") == 6
    store.close()
