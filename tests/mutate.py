"""``make mutate MODULE=<file>``: a mutation round on one module, with the tests that reach it.

Cosmic Ray (from PyPI, a dev dependency) mutates the module's file in place, one mutation at a
time (``==`` to ``!=``, a number one off, a condition removed, ``and`` to ``or``, …), runs the
tests against each and puts the file back: a mutant the tests still pass *survived*, and names
a behaviour no test holds. The tests are the files ``make check`` would pick for a change to the
module (``tests/changed.py``: every test file outside ``tests/e2e/`` that imports it), unless
``TESTS`` names them. ``SAMPLE=N`` keeps N mutants drawn at random (seeded) for a quick round.

Outside ``make test`` (a round on one module takes minutes to hours): make it a habit on the
modules a change touches, and hold each survivor with the test that kills it (docs/testing.md,
"Mutation rounds"). The session database and the report are left in ``.mutation/``.

Usage: ``python -m tests.mutate MODULE [--tests FILE ...] [--sample N] [--timeout SECONDS]``.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.changed import ROOT, Reach, build_graph, is_product, select_for

OUT = ROOT / ".mutation"
COSMIC_RAY = Path(sys.executable).parent / "cosmic-ray"


def tests_for(module_file: str) -> list[str]:
    """The test files ``make check`` runs for a change to the module, end-to-end files left out
    (each mutant would start a stack)."""
    if not is_product(module_file):
        raise SystemExit(
            f"{module_file} is no module of the project (layers/common/, devstack/, local_engine/, kb/, …)"
        )
    chosen = select_for(module_file, Reach(build_graph()), [])
    return sorted(t for t in chosen if not t.startswith("tests/e2e/"))


def config(module_file: str, tests: list[str], timeout: float) -> str:
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider", *tests]
    return "\n".join(
        [
            "[cosmic-ray]",
            f"module-path = {json.dumps(module_file)}",
            f"timeout = {timeout}",
            "excluded-modules = []",
            f"test-command = {json.dumps(shlex.join(command))}",
            "",
            "[cosmic-ray.distributor]",
            'name = "local"',
            "",
        ]
    )


def sample(session: Path, keep: int, seed: int = 39) -> int:
    """Keep ``keep`` of the session's pending mutants, drawn at random; the count kept."""
    with sqlite3.connect(session) as db:
        jobs = [row[0] for row in db.execute("SELECT job_id FROM work_items ORDER BY job_id")]
        if keep >= len(jobs):
            return len(jobs)
        dropped = sorted(set(jobs) - set(random.Random(seed).sample(jobs, keep)))
        for table in ("mutation_specs", "work_items"):
            db.executemany(f"DELETE FROM {table} WHERE job_id = ?", [(job,) for job in dropped])  # noqa: S608
    return keep


def outcomes(session: Path) -> tuple[int, int, list[str]]:
    """(killed, total, the survivors each as ``line: operator``) from the session's results."""
    dumped = subprocess.run(
        [str(COSMIC_RAY), "dump", str(session)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    killed, total, survivors = 0, 0, []
    for line in dumped.splitlines():
        item, result = json.loads(line)
        if not result:
            continue
        total += 1
        if result.get("test_outcome") == "survived":
            spec = item["mutations"][0]
            survivors.append(f"line {spec['start_pos'][0]}: {spec['operator_name']} #{spec['occurrence']}")
        else:
            killed += 1
    return killed, total, survivors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", help="the module's file, e.g. layers/common/knowledge_service/edge/body.py")
    parser.add_argument("--tests", nargs="*", default=None, help="the test files (default: those that import it)")
    parser.add_argument("--sample", type=int, default=0, help="keep this many mutants, drawn at random")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one test run may take")
    args = parser.parse_args(argv)
    module_file = args.module.removeprefix("./")
    if not (ROOT / module_file).is_file():
        raise SystemExit(f"no such file: {module_file}")
    tests = args.tests or tests_for(module_file)
    if not tests:
        raise SystemExit(f"no test file imports {module_file}: name some with TESTS=")
    OUT.mkdir(exist_ok=True)
    stem = module_file.replace("/", "_").removesuffix(".py")
    cfg, session = OUT / f"{stem}.toml", OUT / f"{stem}.sqlite"
    cfg.write_text(config(module_file, tests, args.timeout))
    session.unlink(missing_ok=True)
    cosmic = [str(COSMIC_RAY)]
    original = (ROOT / module_file).read_bytes()
    subprocess.run([*cosmic, "init", str(cfg), str(session)], check=True, cwd=ROOT)
    if args.sample:
        sample(session, args.sample)
    print(f"mutating {module_file} against {len(tests)} test file(s): {' '.join(tests)}", flush=True)
    try:
        subprocess.run([*cosmic, "exec", str(cfg), str(session)], check=True, cwd=ROOT)
    finally:  # the module as it was, whatever stopped the round
        if (ROOT / module_file).read_bytes() != original:
            (ROOT / module_file).write_bytes(original)
    killed, total, survivors = outcomes(session)
    rate = 100 * killed / total if total else 0.0
    print(f"{killed} of {total} mutants killed ({rate:.0f} %) in {module_file}")
    for survivor in survivors:
        print(f"  survived: {survivor}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
