"""The stages' documented counts and limits, held on folders the tests write and read through the
engine's own stages (issue 57: a mutation round found them unheld; local_engine/README.md, "What
a job does"): each stage counts what it did (a source read, skipped, failed, or warned about); a
second job skips what it holds and reads again what failed; a job registers at most 10,000 files;
a file over 100 MB fails as ``too_large``; a PDF's evidence names its page."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from local_engine.ingestion import pipeline
from local_engine.store.database import Store
from tests.documents import pdf_bytes

CRANE = "# Crane\n\nThe crane lifts forty tonnes of timber at dawn.\n\nRobert Smith approved the crane's new rota.\n"


def _run(store: Store, folder: Path, job_id: str, *, force: bool = False) -> dict[str, dict[str, int]]:
    work = pipeline.Work(job_id=job_id, ref="base", kind="paths", inputs=[str(folder)], force=force)
    return {name: stage(store, work).to_json() for name, stage in pipeline.STAGE_WORK.items()}


def _counts(processed: int = 0, skipped: int = 0, failed: int = 0, warnings: int = 0) -> dict[str, int]:
    return {"processed": processed, "skipped": skipped, "failed": failed, "warnings": warnings}


def _mixed(root: Path) -> Path:
    """A folder of every case a stage counts: statements and a person, a byte-for-byte copy, a
    heading alone, an empty file, a PDF of two pages, a PDF no reader opens, a pipe (no regular
    file: skipped); and what a walk passes over (a hidden file, ``.git``, ``node_modules``)."""
    docs = root / "docs"
    (docs / ".git").mkdir(parents=True)
    (docs / "node_modules").mkdir()
    (docs / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (docs / "node_modules" / "notes.md").write_text("# Notes\n\nThe module folder is never read by the engine.\n")
    (docs / ".hidden.md").write_text("# Hidden\n\nA hidden file is never read by the engine.\n")
    (docs / "crane.md").write_text(CRANE)
    (docs / "copy.md").write_text(CRANE)
    (docs / "title.md").write_text("# Only a heading\n")
    (docs / "empty.txt").write_text("")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.7 this is not really a pdf")
    (docs / "pages.pdf").write_bytes(pdf_bytes(["Warehouse rules", "Forklifts are parked in bay seven overnight."]))
    os.mkfifo(docs / "pipe.md")
    return docs


def test_each_stage_counts_what_it_did_and_a_second_job_skips_what_the_base_holds(tmp_path: Path) -> None:
    docs = _mixed(tmp_path)
    store = Store(None, threading.RLock())
    assert _run(store, docs, "job_first") == {
        "source_registration": _counts(processed=6, skipped=1),  # the pipe; the walk passed over the hidden three
        "parsing_extraction": _counts(processed=4, failed=1),  # the duplicate goes no further
        "normalization": _counts(processed=4, warnings=1),  # the empty file: no text
        "chunking": _counts(processed=4),
        "semantic_extraction": _counts(processed=4, skipped=2),  # a heading alone, the empty file
        "entity_resolution": _counts(processed=1, skipped=3),  # Robert Smith, in copy.md
        "dedup_conflict": _counts(processed=5, warnings=1),  # the duplicate disagreement
        "provenance": _counts(processed=4),  # one evidence row a statement
        "validation": _counts(processed=4),
        "indexing": _counts(processed=4),
        "export_availability": _counts(processed=1, warnings=1),  # partial: one source failed
    }
    statuses = {
        row[0].rsplit("/", 1)[-1]: (row[1], row[2])
        for row in store.rows(
            "SELECT s.name, s.status, o.name FROM sources s LEFT JOIN sources o ON o.source_id = s.duplicate_of"
        )
    }
    assert statuses == {
        "broken.pdf": ("failed", None),
        "copy.md": ("completed", None),
        "crane.md": ("duplicate", "docs/copy.md"),  # in path order, the copy came first
        "empty.txt": ("completed", None),
        "pages.pdf": ("completed", None),
        "title.md": ("completed", None),
    }
    again = _run(store, docs, "job_second")  # the same bytes at the same paths: skipped, the failed one read again
    assert (again["source_registration"], again["parsing_extraction"]) == (
        _counts(processed=1, skipped=6),
        _counts(failed=1),
    )
    assert all(again[name] == _counts() for name in list(pipeline.STAGE_WORK)[2:-1])
    forced = _run(store, docs, "job_forced", force=True)  # force: every file read again
    assert forced["source_registration"] == _counts(processed=6, skipped=1)
    assert forced["semantic_extraction"] == _counts(processed=4, skipped=2)


def test_dedup_conflict_warns_once_for_each_disagreement_it_opens(tmp_path: Path) -> None:
    falcon, heron = "Project Falcon launches on {} after the steering review.", "Project Heron employs {} engineers."
    files = {
        "a.md": falcon.format("2026-03-03"),
        "b.md": falcon.format("2026-04-10"),
        "c.md": heron.format(12),
        "d.md": heron.format(15),
        "e.md": falcon.format("2026-03-03"),  # a copy of a.md
        "f.md": heron.format(12),  # a copy of c.md
    }
    (tmp_path / "notes").mkdir()
    for name, said in files.items():
        (tmp_path / "notes" / name).write_text(f"# Notes\n\n{said}\n")
    store = Store(None, threading.RLock())
    assert _run(store, tmp_path / "notes", "job_notes")["dedup_conflict"] == _counts(processed=6, warnings=4)
    opened = sorted(row[0] for row in store.rows("SELECT type FROM conflicts WHERE status = 'open'"))
    assert opened == ["contradiction", "contradiction", "duplicate", "duplicate"]


def test_a_pdfs_evidence_names_its_page_and_the_pages_line(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "pages.pdf").write_bytes(
        pdf_bytes(["The crane lifts timber at dawn.", "Forklifts are parked in bay seven overnight."])
    )
    store = Store(None, threading.RLock())
    _run(store, tmp_path / "docs", "job_pdf")
    located = {
        row[0]: row[1]
        for row in store.rows("SELECT s.statement, e.location FROM statements s JOIN evidence e USING (knowledge_id)")
    }
    assert located == {
        "The crane lifts timber at dawn.": "page 1, line 1",
        "Forklifts are parked in bay seven overnight.": "page 1, line 2",
        "The second page says the warehouse closes at six in the evening.": "page 2, line 1",
    }


def test_a_job_registers_at_most_10000_files_and_warns_of_the_rest(tmp_path: Path) -> None:
    for n in range(10_001):
        (tmp_path / f"note-{n:05}.txt").write_bytes(b"")
    store = Store(None, threading.RLock())
    work = pipeline.Work(job_id="job_many", ref="base", kind="paths", inputs=[str(tmp_path)], force=False)
    assert pipeline.source_registration(store, work).to_json() == _counts(processed=10_000, warnings=1)
    assert store.value("SELECT MAX(name) FROM sources") == f"{tmp_path.name}/note-09999.txt"  # in path order


def test_a_file_over_100_mb_fails_as_too_large_and_one_of_100_mb_is_read(tmp_path: Path) -> None:
    (tmp_path / "big").mkdir()
    for name, size in (("exact.txt", 100 * 1024 * 1024), ("over.txt", 100 * 1024 * 1024 + 1)):
        with (tmp_path / "big" / name).open("wb") as file:
            file.truncate(size)  # a sparse file: its size without its bytes on disk
    store = Store(None, threading.RLock())
    work = pipeline.Work(job_id="job_big", ref="base", kind="paths", inputs=[str(tmp_path / "big")], force=False)
    pipeline.source_registration(store, work)
    assert pipeline.parsing_extraction(store, work).to_json() == _counts(failed=2)
    errors = {row[0]: row[1] for row in store.rows("SELECT name, json_extract(error, '$.code') FROM sources")}
    assert errors == {"big/exact.txt": "binary_content", "big/over.txt": "too_large"}  # read, then refused
