"""Worker processes for the stages' pure work, so ingestion uses more than one core.

A stage's work on a source is of two kinds: computing (a file converted, its text cut into
chunks and sentences, the statement rules, the names it says, each statement's claim) and writing
what was computed in one transaction. The computing needs nothing but plain values and answers
plain values, so it can run in another process: :meth:`Workers.ahead` hands the next sources'
computations to the workers while this process writes the one before, and yields the answers in
the sources' order.
The store, its lock and every write stay in the engine's own process, so what is written, and in
which order, does not depend on whether workers ran (``processes=0`` computes every call in
place, and the tests hold both ways to the same rows).

A worker is a ``spawn``-ed interpreter (no copy of the engine's threads or open database) started
when a job first needs one and kept until the engine stops, or until it has had no call for a
minute. It exits on its own within a second when the engine's process goes, a ``kill -9``
included. A worker that dies mid-call (killed, out of memory) costs nothing but time: the call
runs again in place and the next ones go to a new pool; so does a call the engine's stop
cancelled (the stage then ends at its next source).
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import resource
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

T = TypeVar("T")
WORKERS_ENV = "LOCAL_ENGINE_WORKERS"
MAX_WORKERS = 32
DEFAULT_WORKERS = 2
"""The default's ceiling: a worker holds about 50 MiB while it works, and past two the engine's own
writing, not the computing, is what a job waits for (docs/history/benchmarks.md, "A sixth pass")."""
IDLE_SECONDS = 60.0
"""Workers unused this long leave (the next job starts new ones): a worker that read a large batch
keeps what its libraries and heap grew to, 90 MiB after 25 MB of documentation."""
AHEAD_PER_WORKER = 2
"""Sources in flight per worker: one computing, one waiting, so a worker never idles while this
process writes (and a source's text is held by at most this many × workers at a time)."""

Call = tuple[Callable[..., Any], tuple[Any, ...]]
"""A module-level function and its plain arguments: what a worker is sent."""
Sent = tuple[Future[Any], ProcessPoolExecutor]
"""A call on its way: its future, and the pool it went to."""


def default_workers(environ: Mapping[str, str] | None = None) -> int:
    """``$LOCAL_ENGINE_WORKERS`` if set, else one per core up to :data:`DEFAULT_WORKERS`."""
    raw = (os.environ if environ is None else environ).get(WORKERS_ENV, "").strip()
    if raw:
        if not (raw.isascii() and raw.isdigit()) or int(raw) > MAX_WORKERS:
            raise ValueError(f"{WORKERS_ENV} must be a number of processes from 0 to {MAX_WORKERS}, not {raw!r}")
        return int(raw)
    return min(os.cpu_count() or 1, DEFAULT_WORKERS)


WORKER_MEMORY_BYTES = 3 * 1024**3
"""A worker's address space cap: a file that would take more (a decompression bomb) raises a memory
error in the worker, the source's failure, rather than taking the machine's memory."""


def _started(parent: int) -> None:
    """A worker's first act: leave Ctrl-C to the engine, cap its memory, and go when the engine's
    process goes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(ValueError, OSError):  # a cap the system refuses is no cap, not a failure
        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="worker-watch", daemon=True).start()


class Workers:
    """``processes`` worker processes (0: every call in place), started on first use."""

    def __init__(self, processes: int = 0) -> None:
        if not 0 <= processes <= MAX_WORKERS:
            raise ValueError(f"workers must be 0 to {MAX_WORKERS}, not {processes}")
        self.processes = processes
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._used = 0.0  # time.monotonic() of the last call sent or answered
        self._running = 0  # calls sent and not yet answered (or cancelled)

    @property
    def beside(self) -> bool:
        """True when calls are sent to worker processes (a stage may then prepare more for them)."""
        return self.processes > 0 and not self._closed

    def _submit(self, call: Call) -> Sent | None:
        """The call sent to a worker, or None when it is to run in place."""
        if self.processes == 0:
            return None
        with self._lock:
            if self._closed:
                return None
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    self.processes,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_started,
                    initargs=(os.getpid(),),
                )
            pool = self._pool
            self._used = time.monotonic()
        function, arguments = call
        try:
            future = pool.submit(function, *arguments)
        except (BrokenProcessPool, RuntimeError):  # a worker died, or the engine is closing
            self._discard(pool)
            return None
        with self._lock:
            self._running += 1
        future.add_done_callback(self._done)
        return future, pool

    def _done(self, _: Future[Any]) -> None:
        with self._lock:
            self._running -= 1
            self._used = time.monotonic()

    def _discard(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    def _answer(self, call: Call, sent: Sent | None, broken: Callable[[], Any] | None = None) -> Any:
        if sent is not None:
            future, pool = sent
            try:
                return future.result()
            except BrokenProcessPool:  # a worker died mid-call (this call's, or another's): a new pool
                self._discard(pool)
                if broken is not None:
                    return self._again(call, broken)
            except CancelledError:  # the engine is stopping: in place, and the stage ends at its next source
                pass
        function, arguments = call
        return function(*arguments)

    def _again(self, call: Call, broken: Callable[[], Any]) -> Any:
        """A call whose pool broke, sent once more to a new pool, never run in place (it may be the
        one that broke it: a file that takes all the memory would take the engine's); a second
        break is ``broken()``'s answer."""
        resent = self._submit(call)
        if resent is None:
            return broken()
        future, pool = resent
        try:
            return future.result()
        except BrokenProcessPool:
            self._discard(pool)
            return broken()
        except CancelledError:
            return broken()

    def ahead(
        self, items: Iterable[T], call: Callable[[T], Call], broken: Callable[[T], Any] | None = None
    ) -> Iterator[tuple[T, Any]]:
        """Each item with the answer of ``call(item)``, in the items' order, the next items'
        calls already running in the workers. An item is taken from ``items`` only when there is
        room in flight, so a stop raised by ``items`` comes between two sources. With ``broken``,
        a call whose worker died is sent to a new one once, and answered ``broken(item)`` if that
        dies too; without, it runs in place."""
        depth = max(1, self.processes * AHEAD_PER_WORKER)
        flying: deque[tuple[T, Call, Sent | None]] = deque()
        source = iter(items)
        exhausted = False
        try:
            while True:
                while not exhausted and len(flying) < depth:
                    try:
                        item = next(source)
                    except StopIteration:
                        exhausted = True
                        break
                    made = call(item)
                    flying.append((item, made, self._submit(made)))
                if not flying:
                    return
                item, made, sent = flying.popleft()
                yield item, self._answer(made, sent, None if broken is None else functools.partial(broken, item))
        finally:
            for _, _, sent in flying:
                if sent is not None:
                    sent[0].cancel()

    def release_if_idle(self, now: float | None = None) -> bool:
        """Let the workers go when none has had a call for :data:`IDLE_SECONDS` (the engine's clock
        asks between jobs); True when they went."""
        now = time.monotonic() if now is None else now
        with self._lock:
            pool = self._pool
            if pool is None or self._running or now - self._used < IDLE_SECONDS:
                return False
            self._pool = None
        pool.shutdown(wait=True, cancel_futures=True)
        return True

    def close(self) -> None:
        """Stop the workers (the engine stops): calls not begun are dropped."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
