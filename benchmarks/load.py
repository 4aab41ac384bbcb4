"""The local stack under load, over loopback: ``python -m devstack`` in its own process.

- 2,000 requests at 8 and at 50 concurrent (one kept-alive connection per worker):
  resets, errors, requests/s, p50/p99;
- a burst of 200 new connections, each sending a POST at once: resets, errors;
- 2,000 requests back to back on one kept-alive connection: p50, p99, p99/p50;
- the stack process's resident memory over 100,000 requests to the FORAGER simulator.

Bounded loops, loopback only; not run in CI.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from devstack.template import ROOT

REQUESTS = 2_000
CONCURRENCY = (8, 50)
BURST = 200
SIMULATOR_REQUESTS = 100_000
READ = "/knowledge/search?project=falcon&q=launch"
WRITE = "/knowledge/project-map"
WRITE_BODY = b'{"project": "falcon", "knowledge_base": "falcon"}'


@dataclass
class Running:
    url: str
    simulator_url: str
    simulator_token: str
    admin_token: str
    pid: int
    simulator_control_url: str = ""
    state_dir: Path | None = None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def local_stack(concurrency: int | None = None, workspace: Path | None = None) -> Iterator[Running]:
    state = Path(tempfile.mkdtemp(prefix="bench-load-"))
    ports = {
        name: str(_free_port())
        for name in ("DEVSTACK_PORT", "DEVSTACK_MOTO_PORT", "DEVSTACK_FORAGER_PORT", "DEVSTACK_FORAGER_CONTROL_PORT")
    }
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FORAGER_", "DEVSTACK_"))},
        **ports,
        "DEVSTACK_STATE_DIR": str(state),
        "DEVSTACK_ENGINE_CONTROL": "1",  # the route benchmark resets the engine through its control port
    }
    if concurrency is not None:
        env["DEVSTACK_CONCURRENCY"] = str(concurrency)
    if workspace is not None:
        env["DEVSTACK_WORKSPACE"] = str(workspace)
    with (state / "stack.log").open("w") as log:
        process = subprocess.Popen([sys.executable, "-m", "devstack"], cwd=ROOT, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{ports['DEVSTACK_PORT']}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the local stack did not start; see {state / 'stack.log'}")
            try:
                httpx.get(url + "/knowledge/status", timeout=1.0)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        yield Running(
            url=url,
            simulator_url=f"http://127.0.0.1:{ports['DEVSTACK_FORAGER_PORT']}",
            simulator_token=(state / "simulator.token").read_text().strip(),
            admin_token=(state / "admin.token").read_text().strip(),
            pid=process.pid,
            simulator_control_url=f"http://127.0.0.1:{ports['DEVSTACK_FORAGER_CONTROL_PORT']}",
            state_dir=state,
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def _is_reset(error: BaseException) -> bool:
    while error is not None:
        if isinstance(error, ConnectionResetError) or getattr(error, "errno", None) == errno.ECONNRESET:
            return True
        if "reset" in str(error).lower():
            return True
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return False


def _percentile(values: list[float], q: int) -> float:
    return round(statistics.quantiles(values, n=100)[q - 1], 1) if len(values) > 1 else 0.0


def concurrent_row(stack: Running, concurrency: int, total: int = REQUESTS) -> dict[str, Any]:
    """``total`` requests (every fifth a POST) from ``concurrency`` workers, one connection each."""
    headers = {"Authorization": f"Bearer {stack.admin_token}"}
    timings: list[float] = []
    statuses: dict[int, int] = {}
    resets = errors = 0
    lock = threading.Lock()
    counter = iter(range(total))

    def worker() -> None:
        nonlocal resets, errors
        with httpx.Client(base_url=stack.url, headers=headers, timeout=60) as client:
            while True:
                with lock:
                    n = next(counter, None)
                if n is None:
                    return
                started = time.perf_counter()
                try:
                    if n % 5 == 4:
                        answer = client.post(WRITE, content=WRITE_BODY, headers={"Content-Type": "application/json"})
                    else:
                        answer = client.get(READ)
                except httpx.TransportError as error:
                    with lock:
                        if _is_reset(error):
                            resets += 1
                        else:
                            errors += 1
                    continue
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    timings.append(elapsed)
                    statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
                    if answer.status_code >= 500:
                        errors += 1

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    return {
        "row": f"{total} requests, {concurrency} concurrent",
        "requests": total,
        "concurrency": concurrency,
        "resets": resets,
        "errors": errors,
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "requests_per_second": round(total / seconds, 1),
        "p50_ms": _percentile(timings, 50),
        "p99_ms": _percentile(timings, 99),
    }


def burst_row(stack: Running, size: int = BURST) -> dict[str, Any]:
    """``size`` new connections opened at once, each sending one POST."""
    barrier = threading.Barrier(size)
    resets = errors = 0
    lock = threading.Lock()
    statuses: dict[int, int] = {}
    headers = {"Authorization": f"Bearer {stack.admin_token}", "Content-Type": "application/json"}

    def one() -> None:
        nonlocal resets, errors
        barrier.wait()
        try:
            answer = httpx.post(stack.url + WRITE, content=WRITE_BODY, headers=headers, timeout=120)
        except httpx.TransportError as error:
            with lock:
                if _is_reset(error):
                    resets += 1
                else:
                    errors += 1
            return
        with lock:
            statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
            if answer.status_code >= 500:
                errors += 1

    threads = [threading.Thread(target=one) for _ in range(size)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {
        "row": f"burst of {size} new connections (POST)",
        "requests": size,
        "resets": resets,
        "errors": errors,
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "seconds": round(time.perf_counter() - started, 2),
    }


def keep_alive_row(stack: Running, total: int = REQUESTS) -> dict[str, Any]:
    """``total`` requests back to back on one kept-alive connection."""
    timings: list[float] = []
    with httpx.Client(base_url=stack.url, headers={"Authorization": f"Bearer {stack.admin_token}"}) as client:
        client.get(READ)
        for _ in range(total):
            started = time.perf_counter()
            client.get(READ)
            timings.append((time.perf_counter() - started) * 1000)
    p50, p99 = _percentile(timings, 50), _percentile(timings, 99)
    return {
        "row": f"{total} requests on one kept-alive connection",
        "requests": total,
        "p50_ms": p50,
        "p99_ms": p99,
        "p99_over_p50": round(p99 / p50, 2) if p50 else None,
    }


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def simulator_memory_row(stack: Running, total: int = SIMULATOR_REQUESTS, workers: int = 4) -> dict[str, Any]:
    """The stack process's RSS every quarter of ``total`` requests to the simulator's API port."""
    headers = {"Authorization": f"Bearer {stack.simulator_token}"}
    samples = [_rss_mib(stack.pid)]
    quarter = total // 4
    for _ in range(4):
        share = quarter // workers

        def worker(share: int = share) -> None:
            with httpx.Client(base_url=stack.simulator_url, headers=headers) as client:
                for _ in range(share):
                    client.get("/api/status")

        threads = [threading.Thread(target=worker) for _ in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        samples.append(_rss_mib(stack.pid))
    return {
        "row": f"stack RSS over {total} simulator requests",
        "requests": total,
        "rss_mib": samples,
        "growth_mib_last_three_quarters": round(samples[-1] - samples[1], 1),
    }


def measure() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with local_stack() as stack:
        for concurrency in CONCURRENCY:
            rows.append(concurrent_row(stack, concurrency))
        rows.append(burst_row(stack))
        rows.append(keep_alive_row(stack))
        rows.append(simulator_memory_row(stack))
    with local_stack(concurrency=1) as serial:
        row = concurrent_row(serial, 8)
        row["row"] += " (DEVSTACK_CONCURRENCY=1)"
        rows.append(row)
    return rows


def print_load(rows: list[dict[str, Any]]) -> None:
    print("\nThe local stack under load (python -m devstack in its own process, loopback)")
    print(f"{'row':<56}{'resets':>7}{'errors':>7}{'req/s':>8}{'p50 ms':>8}{'p99 ms':>8}")
    for row in rows:
        if "rss_mib" in row:
            print(f"{row['row']:<56} RSS MiB {row['rss_mib']}")
            continue
        print(
            f"{row['row']:<56}{row.get('resets', ''):>7}{row.get('errors', ''):>7}"
            f"{row.get('requests_per_second', ''):>8}{row.get('p50_ms', ''):>8}{row.get('p99_ms', ''):>8}"
            + (f"   p99/p50 {row['p99_over_p50']}" if "p99_over_p50" in row else "")
        )


if __name__ == "__main__":  # the load rows alone: python -m benchmarks.load
    import json

    measured = measure()
    print_load(measured)
    print(json.dumps(measured, indent=2))
