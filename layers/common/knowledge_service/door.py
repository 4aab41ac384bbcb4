"""What every function's door (``functions/<group>/app.py``) does at init, and nothing more.

- :func:`traced` wraps the handler in Powertools' ``Tracer`` only when tracing is on
  (``environment.tracing_on``): the X-Ray SDK is imported by a container that traces, never
  by one that does not.
- Importing this module (every door's first project import, after the third-party ones)
  freezes what is loaded so far: the project's own init then never makes the collector walk
  the libraries' objects again (without it, one full collection during init walked them all,
  15–18 ms of every cold start).
- :func:`end_of_init` is the door's last line: ``gc.freeze()`` moves every object init
  made (modules, routes, models) out of the collector's reach, so a request's full
  collection walks only what requests made (a frozen full collection costs ~0 instead of
  the tens of milliseconds a Lambda-sized heap takes).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any, TypeVar, cast

from knowledge_service.environment import tracing_on

Handler = TypeVar("Handler", bound=Callable[..., Any])

gc.freeze()  # what the door has imported so far (the libraries) lives as long as the container


def traced(handler: Handler) -> Handler:
    if not tracing_on():
        return handler
    from aws_lambda_powertools import Tracer  # imports the X-Ray SDK: only when tracing

    return cast(Handler, Tracer().capture_lambda_handler(handler))


def end_of_init() -> None:
    gc.freeze()
