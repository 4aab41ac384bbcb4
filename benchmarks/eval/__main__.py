"""Score the engine and two baselines on the documentation sets: ``python -m benchmarks.eval`` (``make eval``).

Fetches each set once into ``.cache/eval/`` (docs/evaluation.md), checks its question file against
the files, then, over the same files in the same run, asks every question of each system and
prints per set a Markdown table of hit@1, hit@5 and MRR (top 5) per kind of question and overall,
with the engine's ingestion time. Then the precision part (``precision.py``): the people,
organizations and disagreements the engine finds on the two sets and on a folder of project
documents, scored against labels, with the ``Disputed`` statements per 10,000 of each import.
``--part retrieval`` or ``--part precision`` runs one; ``--json PATH`` writes everything, each
question's ranked files included.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from benchmarks.eval import baselines, datasets, engine, precision, questions, scoring
from benchmarks.eval.questions import KINDS, Question

SYSTEMS = ("engine", "fts5", "bm25s")
PARTS = ("retrieval", "precision")
LABELS = {
    "engine": "engine (retrieve)",
    "fts5": "FTS5 paragraphs",
    "bm25s": "bm25s paragraphs",
}


class Ranker(Protocol):
    def rank(self, question: str, k: int = scoring.TOP_K) -> list[tuple[str, ...]]: ...


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.eval", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        choices=list(datasets.SETS),
        help="a set to score (repeat it; default: every set, the held-out one last)",
    )
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help=f"comma-separated systems to score (default: {','.join(SYSTEMS)})",
    )
    parser.add_argument(
        "--part", choices=[*PARTS, "all"], default="all", help="retrieval, precision, or all (the default): both"
    )
    parser.add_argument("--json", type=Path, help="write the results, each question's ranked files included, here")
    parser.add_argument(
        "--unlabelled", type=Path, help="precision: write what the engine asserted that no label judges here (to label)"
    )
    parser.add_argument(
        "--cache", type=Path, default=datasets.CACHE, help=f"the sets' cache (default {datasets.CACHE})"
    )
    arguments = parser.parse_args(argv)
    systems = [s.strip() for s in arguments.systems.split(",") if s.strip()]
    unknown = sorted(set(systems) - set(SYSTEMS))
    if unknown or not systems:
        parser.error(f"--systems takes some of {', '.join(SYSTEMS)} (not {', '.join(unknown) or 'nothing'})")
    arguments.systems = [s for s in SYSTEMS if s in systems]
    arguments.sets = [name for name in datasets.SETS if name in (arguments.sets or datasets.SETS)]
    arguments.parts = PARTS if arguments.part == "all" else (arguments.part,)
    return arguments


def ask(ranker: Ranker, items: list[Question]) -> list[dict[str, Any]]:
    """Each question asked once, in the file's order: its rank of the first hit and what was ranked."""
    answers = []
    for q in items:
        ranked = ranker.rank(q.question, scoring.TOP_K)
        answers.append(
            {
                "number": q.number,
                "kind": q.kind,
                "rank": scoring.first_hit(ranked, q.files),
                "ranked": [list(files) for files in ranked],
            }
        )
    return answers


def scored(answers: list[dict[str, Any]]) -> dict[str, scoring.Scores]:
    return scoring.by_kind(((a["kind"], a["rank"]) for a in answers), KINDS)


def _engine(docset: datasets.DocSet, root: Path, items: list[Question]) -> dict[str, Any]:
    with engine.engine_process(root.resolve()) as client:
        ref, ingestion = engine.ingest(client, f"eval {docset.name} {docset.version}", root)
        run = engine.EngineRun(client, ref, root.resolve().name, ingestion)
        answers = ask(run, items)
    return {
        "answers": answers,
        "ingestion": {
            "seconds": round(ingestion.seconds, 2),
            "sources": ingestion.sources,
            "failed_sources": ingestion.failed_sources,
            "statements": ingestion.statements,
        },
        "retrieve_ms_p50": round(statistics.median(run.latencies_ms), 1) if run.latencies_ms else None,
        "read": "POST /api/projects/{ref}/retrieve, top_k 5; an item's files are its evidence's sources",
    }


def _baseline(make: Callable[[list[baselines.Paragraph]], Ranker], paragraphs: list[baselines.Paragraph],
              items: list[Question]) -> dict[str, Any]:  # fmt: skip
    ranker = make(paragraphs)
    return {"answers": ask(ranker, items), "paragraphs": len(paragraphs)}


def evaluate(docset: datasets.DocSet, systems: Sequence[str], cache: Path) -> dict[str, Any]:
    """One set: fetched, its questions checked against its files, every system asked."""
    root = datasets.ensure(docset, cache)
    files = datasets.files_of(root, docset.suffix)
    items = questions.load(docset.name)
    questions.check_against(items, root)
    paragraphs = baselines.paragraphs_of(root, files)
    results: dict[str, Any] = {}
    for system in systems:
        if system == "engine":
            results[system] = _engine(docset, root, items)
        elif system == "fts5":
            results[system] = _baseline(baselines.Fts5, paragraphs, items)
        else:
            results[system] = _baseline(baselines.Bm25s, paragraphs, items)
        results[system]["scores"] = {k: vars(v) for k, v in scored(results[system]["answers"]).items()}
    return {
        "package": docset.package,
        "version": docset.version,
        "sdist_sha256": docset.sha256,
        "markup": docset.markup,
        "held_out": docset.held_out,
        "files": len(files),
        "bytes": sum((root / f).stat().st_size for f in files),
        "questions": {kind: sum(q.kind == kind for q in items) for kind in KINDS},
        "systems": results,
    }


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, check=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def _changed(folder: str) -> int | None:
    """How many files under ``folder`` differ from the commit (the engine other work is changing)."""
    status = _git("status", "--porcelain", "--", folder)
    return None if status is None else len([line for line in status.splitlines() if line.strip()])


def report(name: str, result: dict[str, Any]) -> str:
    """One set's Markdown: what it is, the engine's ingestion, the table."""
    counts = result["questions"]
    role = "held out: the engine is not tuned on it" if result["held_out"] else "the set the engine may be tuned on"
    lines = [
        f"### {name} {result['version']} ({result['markup']}, {result['files']} files, "
        f"{sum(counts.values())} questions: {', '.join(f'{counts[k]} {k}' for k in KINDS)}; {role})",
        "",
    ]
    if "engine" in result["systems"]:
        seen = result["systems"]["engine"]
        ingestion = seen["ingestion"]
        lines += [
            f"Engine ingestion: {ingestion['seconds']:.1f} s for {ingestion['sources']} sources "
            f"({ingestion['failed_sources']} failed), {ingestion['statements']} statements; "
            f"retrieve p50 {seen['retrieve_ms_p50']} ms.",
            "",
        ]
    rows = []
    for system, seen in result["systems"].items():
        for kind in (*KINDS, scoring.OVERALL):
            rows.append((LABELS[system], kind, scoring.Scores(**seen["scores"][kind])))
    lines.append(scoring.markdown_table(rows))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _arguments(argv)
    started = time.perf_counter()
    run: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": _git("log", "-1", "--format=%h"),
        "engine_files_changed_since_commit": _changed("local_engine"),
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "systems": arguments.systems,
        "sets": {},
    }
    for name in arguments.sets if "retrieval" in arguments.parts else ():
        result = evaluate(datasets.SETS[name], arguments.systems, arguments.cache)
        run["sets"][name] = result
        print(report(name, result), end="\n\n", flush=True)
    if "precision" in arguments.parts:
        scored_precision = precision.evaluate(precision.IMPORTS, arguments.cache)
        run["precision"] = precision.as_json(scored_precision)
        print(precision.report(scored_precision), flush=True)
        if arguments.unlabelled is not None:
            lines = [line for part in scored_precision.values() for line in part["unlabelled"]]
            arguments.unlabelled.write_text("".join(f"{line}\n" for line in lines))
    run["load_at_end"] = [round(x, 2) for x in os.getloadavg()]
    run["seconds"] = round(time.perf_counter() - started, 1)
    print(
        f"{run['date']}, commit {run['commit']} ({run['engine_files_changed_since_commit']} files of local_engine/ "
        f"changed since), load average {run['load_at_start']} at start, {run['load_at_end']} at end, "
        f"{run['seconds']} s in all."
    )
    if arguments.json is not None:
        arguments.json.write_text(json.dumps(run, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
