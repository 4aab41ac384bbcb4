"""What every function's door (``functions/<group>/app.py``) does at init, and nothing more.

- :func:`traced` wraps the handler in Powertools' ``Tracer`` only when tracing is on
  (``environment.tracing_on``): the X-Ray SDK is imported by a container that traces, never
  by one that does not.
- Importing this module (every door's first import, before any library's) turns the cyclic
  garbage collector off for the rest of init: what init makes — modules, classes, routes,
  every library the door imports — lives as long as the container, so a collection during
  init is work for nothing (each full one walks the whole heap of boto3, botocore and
  pydantic: 7–10 ms of a cold start measured, ``docs/benchmarks.md``). This is the order the
  ``gc`` documentation gives for long-lived processes: ``gc.disable()`` early,
  ``gc.freeze()`` once the long-lived objects are made.
- Right after this module, a door loads the libraries its routes use (``import boto3``, and
  httpcore and httpx, markdown-it or the MCP SDK where its routes need them) with bare
  imports, before any of the project's modules: each library's module code then runs at the
  top of the stack, as in the floor ``make bench`` measures. Imported from deep inside the
  project's own imports instead, CPython 3.11 allocates and frees a 16 KiB frame-stack chunk
  each time a call crosses a chunk's edge at that depth (python/cpython#142183, fixed in
  3.13 and 3.14, not in 3.11): up to ~3,000 mmap/munmap pairs per cold start, 10–30 ms
  measured. A function that talks to FORAGER loads its client's (httpcore, httpx) there too,
  even where only a request would load them (the changes function): its routes all use them.
  A door never names the libraries it loads; ``tests/unit/test_lean_cold_path.py`` holds
  each list to exactly what its function uses.
- :func:`end_of_init` is the door's last line: ``gc.freeze()`` moves every object init
  made out of the collector's reach, then ``gc.enable()`` turns it back on, so a request's
  collections walk only what requests made (a frozen full collection costs ~0 instead of
  the tens of milliseconds a Lambda-sized heap takes). A door whose init raises never gets
  there: Lambda discards that sandbox (the local stack turns collection back on itself).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any, TypeVar, cast

Handler = TypeVar("Handler", bound=Callable[..., Any])

gc.disable()  # init makes only what lives as long as the container: nothing to collect until its end


def traced(handler: Handler) -> Handler:
    from knowledge_service.environment import tracing_on  # loaded after collection is off

    if not tracing_on():
        return handler
    from aws_lambda_powertools import Tracer  # imports the X-Ray SDK: only when tracing

    return cast(Handler, Tracer().capture_lambda_handler(handler))


def end_of_init() -> None:
    gc.freeze()
    gc.enable()
