"""The engine's clock: a beat that moves a job on says so, so the next beat comes at once; a beat
whose stage the engine's stop broke off does not, so the clock pauses instead of spinning."""

from __future__ import annotations

from pathlib import Path

from local_engine.ingestion.jobs import STAGES, Ticked, book
from local_engine.serving.state import EngineState


def test_a_beat_says_whether_it_moved_a_job_and_a_stage_broken_off_is_no_move(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "harbour.md").write_text("# Harbour\n\nThe harbour office opens at six every weekday morning.\n")
    state = EngineState()
    jobs = book(state)
    job = jobs.queue("falcon", "paths", [str(folder)], False, 1)

    assert jobs.tick() == Ticked(moved=True, moving=True)  # queued → its first stage

    state.stopping.set()  # the engine stops: the stage ends between two sources, and stays running
    assert jobs.tick() == Ticked(moved=False, moving=True)
    assert jobs.read("falcon", job["job_id"])["status"] == "running"

    state.stopping.clear()
    beats = [jobs.tick() for _ in STAGES]  # each beat one stage: the last one ends the job
    assert beats == [Ticked(moved=True, moving=True)] * len(STAGES)
    assert jobs.read("falcon", job["job_id"])["status"] == "completed"
    assert jobs.tick() == Ticked(moved=False, moving=False)  # nothing on its way: the clock rests
