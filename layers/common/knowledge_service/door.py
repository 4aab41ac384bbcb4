"""What every function's door (``functions/<group>/app.py``) does at init: one call.

A door is its docstring and one line: ``lambda_handler = door.api("reads", preload=(...))``
for a route group of the API, ``lambda_handler = door.bus("six_hourly_pass", preload=(...))``
for a function EventBridge invokes. That call does the whole of init, in this order:

- Importing this module (every door's one import) turns the cyclic garbage collector off for
  the rest of init: what init makes — modules, classes, routes, every library the function
  loads — lives as long as the container, so a collection during init is work for nothing
  (each full one walks the whole heap of boto3, botocore and pydantic: 7–10 ms of a cold
  start measured, ``docs/benchmarks.md``). This is the order the ``gc`` documentation gives
  for long-lived processes: ``gc.disable()`` early, ``gc.freeze()`` once the long-lived
  objects are made.
- ``preload``: the libraries the function uses (boto3, and httpcore and httpx, markdown-it or
  the MCP SDK where its routes need them) are imported first, one ``__import__`` each from the
  door's own call, before any of the project's modules: each library's module code then runs
  at the top of the stack, as in the floor ``make bench`` measures. Imported from deep inside
  the project's own imports instead, CPython 3.11 allocates and frees a 16 KiB frame-stack
  chunk each time a call crosses a chunk's edge at that depth (python/cpython#142183, fixed
  in 3.13 and 3.14, not in 3.11): up to ~3,000 mmap/munmap pairs per cold start, 10–30 ms
  measured. A function that talks to FORAGER loads its client's (httpcore, httpx) there too,
  even where only a request would load them (the changes function): its routes all use them.
  ``tests/unit/test_lean_cold_path.py`` holds each list to exactly what its function uses, and
  holds that each library's first import comes from here, inside no module of the project.
- Then the project: the group's router (``edge/routes/<group>.py``) included into its
  surface's resolver, or the bus handler (``edge/bus/<name>.py``); the handler wrapped in
  Powertools' ``Logger`` and in :func:`traced`.
- :func:`measured` outermost: Powertools' ``log_metrics`` publishes the metrics the invocation
  counted (``knowledge_service.observability``, one embedded-metric-format line) when it ends,
  whether it returned or raised, and the cold start once per container.
- :func:`end_of_init` last: ``gc.freeze()`` moves every object init made out of the
  collector's reach, then ``gc.enable()`` turns it back on, so a request's collections walk
  only what requests made (a frozen full collection costs ~0 instead of the tens of
  milliseconds a Lambda-sized heap takes). A door whose init raises never gets there: Lambda
  discards that sandbox (the local stack turns collection back on itself).

:func:`traced` wraps the handler in Powertools' ``Tracer`` only when tracing is on
(``environment.tracing_on``): the X-Ray SDK is imported by a container that traces, never
by one that does not.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver

Handler = TypeVar("Handler", bound=Callable[..., Any])
LambdaHandler = Callable[[dict[str, Any], Any], dict[str, Any]]

# What a door may preload: the libraries the layer uses that are worth loading from the top.
Library = Literal["boto3", "httpcore", "httpx", "markdown_it", "referencing", "mcp"]
# The route groups of the API (``edge/routes/<group>.py``), each one function's.
RouteGroup = Literal[
    "status",
    "bindings",
    "reads",
    "curation",
    "exports",
    "ingestion",
    "feed",
    "changes",
    "pages",
    "verbs",
    "mcp",
    "console",
]
# What EventBridge (a schedule, the bus) invokes: ``edge/bus/<name>.py``, each a ``handler``.
BusHandler = Literal["six_hourly_pass", "mission_intake", "search_compaction", "export_verification", "kb_archive"]

gc.disable()  # init makes only what lives as long as the container: nothing to collect until its end


def api(group: RouteGroup, *, preload: tuple[Library, ...]) -> LambdaHandler:
    """The whole init of a function serving one route group of the API; its handler."""
    for library in preload:  # from this call: one frame below the door's own code, above every project module
        __import__(library)
    from aws_lambda_powertools import Logger
    from aws_lambda_powertools.logging import correlation_paths

    from knowledge_service.edge.answer_headers import standard_headers
    from knowledge_service.observability import count_outcome

    app = _resolver(group)
    module = import_module(f"knowledge_service.edge.routes.{group}")
    for router in getattr(module, "routers", (module.router,)):  # a group may serve more than one router
        app.include_router(router)

    def resolve(event: dict[str, Any], context: Any) -> dict[str, Any]:
        answer = standard_headers(event, app.resolve(event, context))  # nosniff, no-store, the console's CSP
        count_outcome("Requests", str(answer.get("statusCode", "")))  # per function, that is per route group
        return answer

    handler = Logger().inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)(traced(resolve))
    handler = measured(handler)
    end_of_init()
    return cast(LambdaHandler, handler)


def bus(name: BusHandler, *, preload: tuple[Library, ...]) -> LambdaHandler:
    """The whole init of a function EventBridge invokes (``edge/bus/<name>.py``); its handler."""
    for library in preload:  # as in api
        __import__(library)
    from aws_lambda_powertools import Logger

    handler = measured(
        Logger().inject_lambda_context(traced(import_module(f"knowledge_service.edge.bus.{name}").handler))
    )
    end_of_init()
    return cast(LambdaHandler, handler)


def _resolver(group: RouteGroup) -> APIGatewayRestResolver:
    """The resolver of the surface the group belongs to: its renderer of refusals."""
    if group == "pages":
        from knowledge_service.edge.pages_resolver import pages_api

        return pages_api()
    if group == "verbs":
        from knowledge_service.edge.verbs_resolver import verbs_api

        return verbs_api()
    if group == "mcp":  # the MCP SDK answers: Powertools routes, the SDK renders
        from aws_lambda_powertools.event_handler import APIGatewayRestResolver

        return APIGatewayRestResolver()
    from knowledge_service.edge.resolver import knowledge_api

    return knowledge_api()


def traced(handler: Handler) -> Handler:
    from knowledge_service.environment import tracing_on  # loaded after collection is off

    if not tracing_on():
        return handler
    from aws_lambda_powertools import Tracer  # imports the X-Ray SDK: only when tracing

    return cast(Handler, Tracer().capture_lambda_handler(handler))


def measured(handler: Handler) -> Handler:
    """The handler publishing the invocation's metrics when it returns or raises (Powertools'
    ``log_metrics``: one EMF line, ``knowledge_service.observability``), and the cold start."""
    import warnings

    from knowledge_service.observability import metrics

    # An invocation that counted nothing is the usual case, not a fault: no warning line for it.
    warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)
    return cast(Handler, metrics().log_metrics(handler, capture_cold_start_metric=True))


def end_of_init() -> None:
    gc.freeze()
    gc.enable()
