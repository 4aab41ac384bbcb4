"""The engine benchmark's CPU accounting (``benchmarks.engine.cpu_seconds``): a process's own CPU,
and that of the processes under it, live or ended, so the figure it prints beside the throughput
(the least wall time the job's CPU allows) counts the workers' share whole.

Each test measures a process of its own (``MIDDLE``), not the test's: the test runner's other
children (a local stack another test started) would be counted under it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from benchmarks.engine import cpu_seconds

MIDDLE = """
import os, subprocess, sys, time

SCRIPT = os.environ["MIDDLE"]  # this script, for a child of the same kind

def spin(seconds):  # CPU, never wall time: a busy machine cannot make it take less
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass

child = None
for line in sys.stdin:
    word, _, argument = line.strip().partition(" ")
    if word == "spin":
        spin(float(argument))
    elif word in ("child", "grandchild"):  # a process under this one that spins, then waits, alive
        child = subprocess.Popen(
            [sys.executable, "-c", SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=os.environ
        )
        child.stdin.write(("spin " if word == "child" else "child ") + argument + "\\n")
        child.stdin.flush()
        child.stdout.readline()
    elif word == "end":  # the child ends and is waited for
        child.stdin.close()
        child.wait()
    elif word == "tell":  # the child does what follows
        child.stdin.write(argument + "\\n")
        child.stdin.flush()
        child.stdout.readline()
    print("ok", flush=True)
"""


class Middle:
    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process

    def __call__(self, command: str) -> tuple[float, float]:
        """Sends ``command``, waits for it to be done, and answers the process's CPU then."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline() == "ok\n"
        return cpu_seconds(self.process.pid)


@contextmanager
def middle() -> Iterator[Middle]:
    process = subprocess.Popen(
        [sys.executable, "-c", MIDDLE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={"MIDDLE": MIDDLE},
    )
    try:
        yield Middle(process)
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=60)


def test_a_process_own_cpu_is_its_own() -> None:
    with middle() as run:
        own_before, under_before = run("spin 0")
        own_after, under_after = run("spin 0.4")
    assert own_after - own_before >= 0.35  # clock ticks are 0.01 s
    assert under_after == under_before


def test_a_child_is_counted_while_it_runs_and_once_after_it_ended() -> None:
    with middle() as run:
        own_before, under_before = run("spin 0")
        _, under_running = run("child 0.4")  # spun, alive: read from /proc
        own_ended, under_ended = run("end")  # waited for: in the kernel's count of the middle's children
    assert under_running - under_before >= 0.35
    assert under_ended - under_before >= 0.35
    assert under_ended - under_running < 0.2  # once, not once live and again ended
    assert own_ended - own_before < 0.35  # the child's CPU is not the middle's own


def test_a_grandchild_is_counted_too() -> None:
    with middle() as run:
        _, under_before = run("spin 0")
        _, under_running = run("grandchild 0.4")  # the middle's child's child spun 0.4 s, alive
        run("end")
    assert under_running - under_before >= 0.35


def test_a_grandchild_a_live_child_waited_for_is_counted_once() -> None:
    with middle() as run:
        _, under_before = run("spin 0")
        _, under_running = run("grandchild 0.4")
        _, under_waited = run("tell end")  # the child waited for its own: in the child's children's time
        run("end")
    assert under_waited - under_before >= 0.35
    assert abs(under_waited - under_running) < 0.2
