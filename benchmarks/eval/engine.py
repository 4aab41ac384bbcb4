"""The engine as a user meets it: ``python -m local_engine`` in a process of its own, on a loopback
port, with a temporary data folder and the set's folder as its one input root.

A knowledge base is made (``POST /api/projects``), the set's folder imported by path
(``POST /api/projects/{ref}/jobs``) and the job waited for; the ingestion time is from the job's
POST to the first read that finds it terminal (polled every 50 ms). Each question is then asked
through ``POST /api/projects/{ref}/retrieve`` with ``top_k`` 5; each item's files are the sources
its evidence names (``source_name`` is ``<folder>/<path>``: the folder's name is taken off, so a
file is named as the question files name it), in the evidence's order.

**Ties.** The engine orders statements of equal score by their ids, and the ids are hashed from the
knowledge base's ref, which the engine draws at random: left alone, tied statements come in another
order each run. So the engine process is started through :data:`LAUNCHER`, which has the engine
mint the refs ``proj_000000000001``, ``proj_000000000002``, … (the shape it mints, in order) and
then runs ``python -m local_engine`` as it is; the same files then give the same ids and the same
order every run. Should the engine stop minting refs through ``state.new_project_ref``, the
engine runs unpinned and the runner warns that tied statements may come in another order.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.eval.datasets import ROOT
from benchmarks.eval.scoring import TOP_K

TOKEN = "eval-engine-token"  # noqa: S105 - the evaluation's own credential for its own engine
LISTENING = re.compile(r"api (http://127\.0\.0\.1:\d+)")
START_SECONDS = 60.0
JOB_SECONDS = 1800.0
UNPINNED = "benchmarks.eval: state.new_project_ref is gone; refs are not pinned"
LAUNCHER = f"""
import importlib, itertools, sys
try:
    state = importlib.import_module("local_engine.serving.state")
except ImportError:
    state = None
if callable(getattr(state, "new_project_ref", None)):
    numbers = itertools.count(1)
    state.new_project_ref = lambda: f"proj_{{next(numbers):012x}}"
else:
    print("{UNPINNED}", file=sys.stderr)
from local_engine.__main__ import main
sys.exit(main(sys.argv[1:]))
"""
"""``python -c`` this and the engine's arguments: ``python -m local_engine`` with its refs pinned."""


class EngineError(RuntimeError):
    """The engine did not start, refused a request, or its job did not complete."""


@dataclass
class Ingestion:
    seconds: float
    job: dict[str, Any]
    failed_sources: int
    statements: int
    sources: int


@dataclass
class EngineRun:
    """An engine holding one set, asked question by question."""

    client: httpx.Client
    ref: str
    folder_name: str
    ingestion: Ingestion
    latencies_ms: list[float] = field(default_factory=list)

    def rank(self, question: str, k: int = TOP_K) -> list[tuple[str, ...]]:
        started = time.perf_counter()
        answer = _post(self.client, f"/api/projects/{self.ref}/retrieve", {"query": question, "top_k": k})
        self.latencies_ms.append((time.perf_counter() - started) * 1000)
        return [self._files(item) for item in answer["items"][:k]]

    def _files(self, item: dict[str, Any]) -> tuple[str, ...]:
        prefix = self.folder_name + "/"
        names = (str(e["source_name"]) for e in item.get("evidence", []))
        return tuple(dict.fromkeys(n.removeprefix(prefix) for n in names))


def _post(client: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = client.post(path, json=body, headers={"Idempotency-Key": os.urandom(12).hex()})
    if answer.status_code >= 400:
        raise EngineError(f"POST {path} answered {answer.status_code}: {answer.text[:500]}")
    result: dict[str, Any] = answer.json()
    return result


def _get(client: httpx.Client, path: str) -> dict[str, Any]:
    answer = client.get(path)
    if answer.status_code >= 400:
        raise EngineError(f"GET {path} answered {answer.status_code}: {answer.text[:500]}")
    result: dict[str, Any] = answer.json()
    return result


def _wait_for_url(log: Path, process: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        said = log.read_text(errors="replace") if log.exists() else ""
        found = LISTENING.search(said)
        if found:
            if UNPINNED in said:
                print(f"warning: {UNPINNED}: tied statements may come in another order each run", file=sys.stderr)
            return found.group(1)
        if process.poll() is not None:
            raise EngineError(f"the engine exited with {process.returncode}: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.05)
    raise EngineError(f"the engine did not listen within {START_SECONDS:.0f} s")


@contextlib.contextmanager
def engine_process(input_root: Path) -> Iterator[httpx.Client]:
    """``python -m local_engine`` (through :data:`LAUNCHER`) on loopback ports it picks, a temporary
    data folder, ``input_root`` its one input root; a client of its API port (stopped and its folder
    removed on leaving)."""
    with tempfile.TemporaryDirectory(prefix="eval-engine-") as scratch_name:
        scratch = Path(scratch_name)
        log = scratch / "engine.log"
        command = [sys.executable, "-c", LAUNCHER, "--port", "0", "--control-port", "0", "--quiet"]
        command += ["--data", str(scratch / "data"), "--input-root", str(input_root), "--token", TOKEN]
        with log.open("wb") as sink:
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=sink, cwd=ROOT)
        try:
            url = _wait_for_url(log, process)
            headers = {"Authorization": f"Bearer {TOKEN}"}
            with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
                yield client
        finally:
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def ingest(client: httpx.Client, name: str, folder: Path) -> tuple[str, Ingestion]:
    """A new knowledge base that has imported ``folder`` by path: its ref and what the job took."""
    ref = str(_post(client, "/api/projects", {"name": name})["project_ref"])
    started = time.perf_counter()
    job = _post(client, f"/api/projects/{ref}/jobs", {"paths": [str(folder.resolve())]})
    deadline = time.monotonic() + JOB_SECONDS
    while not job["terminal"]:
        if time.monotonic() > deadline:
            raise EngineError(f"the import of {folder} did not finish within {JOB_SECONDS:.0f} s")
        time.sleep(0.05)
        job = _get(client, f"/api/projects/{ref}/jobs/{job['job_id']}")
    seconds = time.perf_counter() - started
    if job["status"] != "completed":
        raise EngineError(f"the import of {folder} ended {job['status']}: {job.get('error')}")
    failed = sum(int(stage.get("failed", 0)) for stage in job["stages"] if stage["name"] == "parsing_extraction")
    project = next(p for p in _get(client, "/api/projects")["projects"] if p["project_ref"] == ref)
    return ref, Ingestion(
        seconds=seconds,
        job=job,
        failed_sources=failed,
        statements=int(project["knowledge_count"]),
        sources=int(project["source_count"]),
    )
