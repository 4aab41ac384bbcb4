"""Real documents the tests build: a PDF by reportlab, a DOCX by python-docx, a handbook folder of
every format the engine reads (and one file it cannot), notes whose claims disagree across files,
and every row a store made of them (to hold two ways of reading the same files to the same rows),
read, decided and read again."""

from __future__ import annotations

import io
import random
import threading
from pathlib import Path
from typing import Any

import docx
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from local_engine.ingestion import pipeline
from local_engine.knowledge.curation import Curation
from local_engine.store.database import TABLES, Store

SUBJECTS = ["Project Falcon", "Project Heron", "Project Osprey", "Acme Robotics", "Harbour Logistics"]
FILLER = "The team met in the north office and agreed the plan for the quarter ahead."


def pdf_bytes(lines: list[str]) -> bytes:
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    y = 800
    for line in lines:
        page.drawString(72, y, line)
        y -= 18
    page.showPage()
    page.drawString(72, 800, "The second page says the warehouse closes at six in the evening.")
    page.save()
    return buffer.getvalue()


def docx_bytes() -> bytes:
    document = docx.Document()
    document.add_heading("Quarterly review", level=1)
    document.add_paragraph("The quarterly review found that churn fell by four percent in spring.")
    document.add_heading("Actions", level=2)
    document.add_paragraph("The board approved a second support desk for the northern region.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def handbook(root: Path) -> Path:
    """Seven files under ``root/handbook``: markdown (one a byte-for-byte copy), HTML, a PDF, a
    DOCX, a PDF no reader opens and a plain-text licence."""
    root = root / "handbook"
    (root / "guides").mkdir(parents=True)
    (root / "guides" / "boats.md").write_text(
        "---\ndate: 2026-02-01\n---\n# Boats\n\nThe rowing club lends kayaks to members on Saturdays.\n\n"
        "## Safety\n\n- Every paddler must wear a buoyancy aid on the water.\n- Capsize drills happen in July.\n"
    )
    (root / "ferry.html").write_text(
        "<html><head><title>x</title><script>var hidden = 'never a statement here at all';</script></head>"
        "<body><h1>Ferry</h1><p>The harbour ferry leaves pier four at nine every morning.</p></body></html>"
    )
    (root / "warehouse.pdf").write_bytes(pdf_bytes(["Warehouse rules", "Forklifts are parked in bay seven overnight."]))
    (root / "review.docx").write_bytes(docx_bytes())
    (root / "broken.pdf").write_bytes(b"%PDF-1.7 this is not really a pdf")
    (root / "copy-of-boats.md").write_bytes((root / "guides" / "boats.md").read_bytes())
    (root / "LICENSE.APACHE").write_text(
        "Licensed under the Apache License, Version 2.0, for the rowing club's code.\n"
    )
    return root


def disagreeing_notes(folder: Path) -> None:
    """Files whose statements give each subject dated and counted claims that disagree across
    files, interleaved so that subjects open and close at different points of each text."""
    rng = random.Random(11)
    folder.mkdir()
    for n in range(8):
        lines = [f"# Notes {n}", ""]
        for _ in range(60):
            subject = rng.choice(SUBJECTS)
            if rng.random() < 0.5:
                lines.append(f"{subject} ships the first release on 2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}.")
            else:
                lines.append(f"{subject} employs {rng.randint(10, 20)} engineers in the harbour office.")
            if rng.random() < 0.3:
                lines.append(FILLER)
            lines.append("")
        (folder / f"notes-{n}.md").write_text("\n".join(lines))


def every_row(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Each table's rows, sorted, less the columns that say when (they differ between two reads)."""
    kept: dict[str, list[tuple[Any, ...]]] = {}
    for table in TABLES:
        columns = [r[1] for r in store.db.execute(f"PRAGMA table_info({table})")]
        stable = [c for c in columns if not c.endswith("_at") and c not in {"at", "decision", "blob"}]
        read = f"SELECT {', '.join(stable)} FROM {table}"  # noqa: S608 - the store's own names
        kept[table] = sorted(tuple(r) for r in store.db.execute(read))
    return kept


def ingest_decide_reread(folder: Path) -> tuple[dict[str, list[tuple[Any, ...]]], dict[str, int]]:
    """The folder read into a store of its own; a third of the contradictions decided for the side
    not suggested (so the suggested winner is archived when the re-read finds it again); every file
    read again. Every row then, and the counts that say the rules were exercised."""
    store = Store(None, threading.RLock())
    work = pipeline.Work(job_id="job_x", ref="base", kind="paths", inputs=[str(folder)], force=True)
    for stage in pipeline.STAGE_WORK.values():
        stage(store, work)
    curation = Curation(store)
    conflicts = store.rows(
        "SELECT conflict_id, suggested_winner FROM conflicts WHERE type = 'contradiction' ORDER BY conflict_id"
    )
    for conflict in conflicts[::3]:
        sides = [r[0] for r in store.rows("SELECT knowledge_id FROM conflict_sides WHERE conflict_id = ?", conflict[0])]
        loser = next(s for s in sides if s != conflict[1])
        curation.resolve(conflict[0], {"action": "accept_winner", "winner_id": loser, "actor": "test"})
    for stage in pipeline.STAGE_WORK.values():
        stage(store, work)
    counts = {
        "contradictions": int(store.value("SELECT COUNT(*) FROM conflicts WHERE type = 'contradiction'") or 0),
        "decided": len(conflicts[::3]),
        "archived": int(store.value("SELECT COUNT(*) FROM statements WHERE status = 'Archived'") or 0),
    }
    rows = every_row(store)
    store.close()
    return rows, counts


def read_to_validation(folder: Path) -> Store:
    """The folder through the stages that read it, up to indexing (what search would index is read)."""
    store = Store(None, threading.RLock())
    work = pipeline.Work(job_id="job_x", ref="base", kind="paths", inputs=[str(folder)], force=True)
    for name, stage in pipeline.STAGE_WORK.items():
        if name == "indexing":
            break
        stage(store, work)
    return store
