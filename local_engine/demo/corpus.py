"""The demo knowledge bases: a handful of documents in ``demo/``, read by the pipeline.

``falcon`` and ``harbour`` are markdown and text files kept beside this module; at the first
start (and after the control port's reset) every file goes through the same eleven stages a
person's documents take, and then the decisions in ``demo/curation.json`` (a review, a
dismissed disagreement — named by what the records say, never by id) are made through the
engine's own curation. Nothing the demo answers is written into the code: change a document
and the answers change.

Reading the demo is a few milliseconds of work, but a test suite resets its engine thousands
of times, so the result is built once a process and copied (SQLite's backup) into the store.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from local_engine.ingestion import pipeline
from local_engine.knowledge.curation import Curation
from local_engine.store.database import Store

DEMO_ROOT = Path(__file__).parent
DECISIONS = DEMO_ROOT / "curation.json"
VERSION = "2"
"""The demo as the store holds it; a store with an older (or no) demo reads the documents again."""

_template: Store | None = None
_template_lock = threading.Lock()


def bases() -> list[Path]:
    return sorted(p for p in DEMO_ROOT.iterdir() if p.is_dir())


def build(store: Store) -> None:
    """Read every demo document into ``store`` through the pipeline, then make the decisions."""
    for base in bases():
        files = sorted(str(f) for f in base.iterdir() if f.is_file() and not f.name.startswith("."))
        job_id = pipeline.short_id("job", "demo", base.name)
        work = pipeline.Work(job_id=job_id, ref=base.name, kind="paths", inputs=files, force=True)
        counts = [stage(store, work).to_json() for stage in pipeline.STAGE_WORK.values()]
        created = time.time()
        store.save_job(  # the demo's one job a base, as the job book keeps a job (ingestion.Job)
            job_id,
            base.name,
            created,
            {
                "job_id": job_id, "project_ref": base.name, "kind": "paths", "inputs": files, "force": True,
                "created_at": created, "entries": len(files), "status": "completed",
                "stage_index": len(counts) - 1, "stage_started_at": created,
                "stage_status": ["completed"] * len(counts),
                "cancel_requested": False, "fail_at": None, "error": None, "admission_job_id": None, "counts": counts,
            },
        )  # fmt: skip
    decide(store)


def decide(store: Store) -> None:
    """The demo's curators' decisions, through the curation every person's goes through."""
    curation = Curation(store)
    for act in json.loads(DECISIONS.read_text(encoding="utf-8"))["acts"]:
        base, body = act["base"], act["body"]
        if "review" in act:
            item = store.value(
                "SELECT knowledge_id FROM statements WHERE ref = ? AND statement = ?", base, act["review"]
            )
            curation.review(str(item), body)
        elif "resolve" in act:
            conflict = store.value(
                "SELECT c.conflict_id FROM conflicts c JOIN conflict_sides s USING (conflict_id)"
                " JOIN statements i USING (knowledge_id) WHERE c.ref = ? AND c.type = ? AND i.statement = ?",
                base,
                act["type"],
                act["resolve"],
            )
            curation.resolve(str(conflict), body)


def template() -> Store:
    """The demo read once this process (an in-memory store)."""
    global _template  # noqa: PLW0603 - built once a process, on first use
    with _template_lock:
        if _template is None:
            built = Store(None, threading.RLock())
            build(built)
            _template = built
        return _template


def load(store: Store) -> None:
    """``store`` becomes the demo: every record it held is replaced."""
    source = template()
    with source.lock, store.lock:
        source.db.backup(store.db)
        if store.path is not None:
            store.db.execute("PRAGMA journal_mode=WAL")
    store.set_meta("demo", VERSION)


def ensure(store: Store) -> None:
    """At a start: the demo, unless the store holds it already. A store with a person's records
    but no (or an older) demo has the documents read into it beside them."""
    if store.meta("demo") == VERSION:
        return
    if store.value("SELECT 1 FROM sources LIMIT 1") is None and store.value("SELECT 1 FROM jobs LIMIT 1") is None:
        load(store)
        return
    build(store)
    store.set_meta("demo", VERSION)
