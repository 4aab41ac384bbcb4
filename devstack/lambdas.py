"""Running the template's functions in this process, the way Lambda runs them.

``load_handler`` imports a function's handler by file path under a unique module name
(``lambda_StatusFunction``), once: the same code Lambda loads, with no ``sys.path``
tricks (the shared layer is installed in the environment, as Lambda's layer is on its
path). ``FakeLambdaContext`` is the context object Lambda passes. ``FunctionHost``
invokes a function by logical id, the answer put through JSON as Lambda's runtime does.

Concurrency is Lambda's: a bounded pool of warm containers per function, each its own
handler instance. Container 0 is the handler module imported as above (in-process tests
reach its runtime); every further container, made only when all of that function's
containers are busy, imports the handler *and* the shared layer (``knowledge_service``)
afresh under private module names, so no module state (Powertools routers, the cached
``runtime()``) is shared between two concurrent invocations. With ``concurrency=1`` one
invocation runs at a time, the function's own variables and Lambda's ``AWS_LAMBDA_*`` set
in ``os.environ`` around each call; with more, ``os.environ`` (one per process) holds
the shared variables, and a function's own are set while its containers load.
"""

from __future__ import annotations

import builtins
import gc
import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from devstack.template import Template

log = logging.getLogger("devstack.lambdas")

Handler = Callable[[Any, Any], Any]

RESPONSE_LIMIT_BYTES = 6 * 1024 * 1024
"""Lambda's synchronous payload limit (request and response)."""

_LOAD_LOCK = threading.RLock()

DEFAULT_CONCURRENCY = 8
"""Containers the local stack runs at once (``DEVSTACK_CONCURRENCY``; 1 serialises every call)."""

_PRIVATE_PACKAGES = ("knowledge_service",)
"""What a container beyond the first imports for itself: the layer the handlers share."""


def handler_file(handler_dir: Path, handler: str) -> tuple[Path, str]:
    """The file and function a Lambda ``Handler`` string names (``app.lambda_handler``)."""
    module_path, _, function_name = handler.rpartition(".")
    if not module_path or not function_name:
        raise ValueError(f"Handler {handler!r} is not <module>.<function>.")
    return handler_dir / (module_path.replace(".", "/") + ".py"), function_name


def load_handler(handler_dir: Path, handler: str, module_name: str) -> Handler:
    """Import ``handler_dir``'s handler module as ``module_name`` (once) and return the handler."""
    path, function_name = handler_file(Path(handler_dir), handler)
    with _LOAD_LOCK:
        module = sys.modules.get(module_name)
        if module is None or _module_file(module) != path.resolve():
            module = _import_file(module_name, path)
    function = getattr(module, function_name, None)
    if not callable(function):
        raise HandlerNotFound(f"{path} has no callable {function_name!r}.")
    return function  # type: ignore[no-any-return]


class HandlerNotFound(ImportError):
    """Lambda's Runtime.HandlerNotFound: the module loads but names no such function."""


def _module_file(module: ModuleType) -> Path | None:
    file = getattr(module, "__file__", None)
    return Path(file).resolve() if file else None


def _import_file(module_name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"Cannot load {path}.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        gc.enable()  # a door turns collection off for its init; one that raised never turned it on
        raise
    return module


@dataclass
class FakeLambdaContext:
    """The context Lambda hands a handler; the remaining time counts down from ``timeout_seconds``."""

    function_name: str = "local-function"
    memory_limit_in_mb: int = 128
    timeout_seconds: float = 3.0
    region: str = "us-east-1"
    account_id: str = "123456789012"
    function_version: str = "$LATEST"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    invoked_function_arn: str = ""
    log_group_name: str = ""
    log_stream_name: str = ""
    identity: Any = None
    client_context: Any = None
    tenant_id: str | None = None
    _deadline: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._deadline = time.monotonic() + self.timeout_seconds
        if not self.invoked_function_arn:
            self.invoked_function_arn = f"arn:aws:lambda:{self.region}:{self.account_id}:function:{self.function_name}"
        if not self.log_group_name:
            self.log_group_name = f"/aws/lambda/{self.function_name}"
        if not self.log_stream_name:
            day = time.strftime("%Y/%m/%d", time.gmtime())
            self.log_stream_name = f"{day}/[{self.function_version}]{uuid.uuid4().hex}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


class FunctionError(Exception):
    """The invocation failed the way Lambda reports a failure (the handler's error is the cause)."""

    def __init__(self, function: str, message: str, *, error_type: str = "Exception"):
        super().__init__(message)
        self.function = function
        self.error_type = error_type


class FunctionTimedOut(FunctionError):
    pass


@dataclass(frozen=True)
class FunctionSpec:
    logical_id: str
    name: str
    handler_dir: Path
    handler: str
    timeout_seconds: int
    memory_mb: int
    environment: Mapping[str, str]

    @property
    def module_name(self) -> str:
        return f"lambda_{self.logical_id}"


@dataclass
class Container:
    """One warm instance of a function: its handler and, past the first, its own modules."""

    function: str
    index: int
    handler: Handler
    modules: dict[str, ModuleType] = field(default_factory=dict)
    invocations: int = 0


def _is_private(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in _PRIVATE_PACKAGES)


class _AliasLoader(importlib.machinery.SourceFileLoader):
    """Runs a module with the container's ``__builtins__`` (its ``__import__`` redirects)."""

    def __init__(self, fullname: str, path: str, builtins_: dict[str, Any]) -> None:
        super().__init__(fullname, path)
        self._builtins = builtins_

    def exec_module(self, module: ModuleType) -> None:
        module.__dict__["__builtins__"] = self._builtins
        super().exec_module(module)


class _ContainerFinder(importlib.abc.MetaPathFinder):
    """Finds ``<package>__c<n>.…``: the shared layer's files, loaded as a container's own modules."""

    def __init__(self) -> None:
        self.aliases: dict[str, tuple[str, dict[str, Any]]] = {}  # alias package -> (real, __builtins__)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        head, _, rest = fullname.partition(".")
        alias = self.aliases.get(head)
        if alias is None:
            return None
        real_head, builtins_ = alias
        real = real_head + ("." + rest if rest else "")
        found = importlib.util.find_spec(real)
        if found is None or not found.origin or not found.origin.endswith(".py"):
            return None
        loader = _AliasLoader(fullname, found.origin, builtins_)
        return importlib.util.spec_from_file_location(
            fullname, found.origin, loader=loader, submodule_search_locations=found.submodule_search_locations
        )


_FINDER = _ContainerFinder()
sys.meta_path.insert(0, _FINDER)


def _container_builtins(suffix: str) -> dict[str, Any]:
    """``__builtins__`` whose ``__import__`` sends the shared layer's names to the container's copies."""
    original = builtins.__import__

    def redirecting_import(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> ModuleType:
        if level == 0 and _is_private(name):
            head, dot, rest = name.partition(".")
            name = f"{head}{suffix}{dot}{rest}"
        return original(name, globals, locals, fromlist, level)

    own = dict(builtins.__dict__)
    own["__import__"] = redirecting_import
    return own


def load_isolated(
    handler_dir: Path, handler: str, module_name: str, index: int
) -> tuple[Handler, dict[str, ModuleType]]:
    """Import the handler with its own copy of the shared layer, leaving the shared one alone.

    Container ``n``'s copy of ``knowledge_service`` is the package ``knowledge_service__<Function>_c<n>``
    (same files, its own module objects, registered in ``sys.modules`` under those names so
    pydantic and typing find them); the handler and every module of the copy run with
    ``__builtins__`` whose ``__import__`` maps ``knowledge_service…`` to the copy.
    """
    path, function_name = handler_file(Path(handler_dir), handler)
    suffix = f"__{module_name.removeprefix('lambda_').split('__')[0]}_c{index}"
    own_builtins = _container_builtins(suffix)
    with _LOAD_LOCK:
        for package in _PRIVATE_PACKAGES:
            _FINDER.aliases[package + suffix] = (package, own_builtins)
        loader = _AliasLoader(module_name, str(path), own_builtins)
        spec = importlib.util.spec_from_file_location(module_name, path, loader=loader)
        if spec is None:
            raise ImportError(f"Cannot load {path}.")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            loader.exec_module(module)
        except BaseException:
            sys.modules.pop(module_name, None)
            gc.enable()  # as load_handler: a door whose init raised left collection off
            raise
    function = getattr(module, function_name, None)
    if not callable(function):
        raise HandlerNotFound(f"{path} has no callable {function_name!r}.")
    # A copy taken at once (one C call): other containers' handlers import lazily while they
    # run, outside the load lock, and iterating sys.modules itself would race them.
    loaded = dict(sys.modules)
    own = {name: m for name, m in loaded.items() if name.partition(".")[0].endswith(suffix)}
    return function, {module_name: module, **own}


class FunctionHost:
    """Invokes the template's functions by logical id, from a bounded pool of warm containers.

    The process's ``os.environ`` holds the variables every function shares (the stack
    sets them at start); around each call the host sets the variables where this
    function differs (``POWERTOOLS_SERVICE_NAME``) and Lambda's own ``AWS_LAMBDA_*``, and
    puts them back afterwards. The handler module is imported on the first call, inside
    that environment, so module-level objects (Powertools' ``Logger()``) see the
    function's own service name.
    """

    def __init__(self, template: Template, *, concurrency: int = 1, freeze_loaded: bool = False):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self._template = template
        self.concurrency = concurrency
        # gc.freeze() after each load: the long-lived modules leave every later collection
        # (a full collection over eight copies of the layer otherwise stalls a request ~50 ms)
        self._freeze_loaded = freeze_loaded
        self._lock = threading.RLock()  # concurrency 1: one call at a time (re-entrant)
        self._slots = threading.BoundedSemaphore(concurrency)
        self._pool_lock = threading.Lock()
        self._idle: dict[str, list[Container]] = {}
        self._made: dict[str, int] = {}
        self._handlers: dict[str, Handler] = {}
        self._specs: dict[str, FunctionSpec] = {}
        for logical_id, resource in template.functions().items():
            props = resource.get("Properties", {})
            self._specs[logical_id] = FunctionSpec(
                logical_id=logical_id,
                name=template.physical_name(logical_id),
                handler_dir=template.path.parent / props["CodeUri"],
                handler=props["Handler"],
                timeout_seconds=template.function_timeout(logical_id),
                memory_mb=template.function_memory(logical_id),
                environment=template.function_environment(logical_id),
            )

    @property
    def functions(self) -> dict[str, FunctionSpec]:
        return dict(self._specs)

    def spec(self, logical_id: str) -> FunctionSpec:
        try:
            return self._specs[logical_id]
        except KeyError:
            raise KeyError(f"The template declares no function {logical_id!r}.") from None

    def context_for(self, logical_id: str) -> FakeLambdaContext:
        spec = self.spec(logical_id)
        return FakeLambdaContext(
            function_name=spec.name,
            memory_limit_in_mb=spec.memory_mb,
            timeout_seconds=spec.timeout_seconds,
            region=self._template.region,
            account_id=self._template.account_id,
        )

    def invoke(self, logical_id: str, event: Any) -> Any:
        """Run the function on ``event``; the handler's answer after a JSON round trip.

        Raises ``FunctionError`` (the handler raised; its exception is the cause, its
        message the error message), ``FunctionTimedOut`` (it ran past its Timeout: Lambda
        would have stopped it) or the handler's ``ImportError`` (its module failed to load).
        """
        spec = self.spec(logical_id)
        payload = json.dumps(event)
        if len(payload.encode("utf-8")) > RESPONSE_LIMIT_BYTES:
            raise FunctionError(
                logical_id,
                "Request must be smaller than 6291456 bytes for the InvokeFunction operation",
                error_type="RequestEntityTooLargeException",
            )
        if self.concurrency == 1:
            with self._lock, self._function_environment(spec):
                container = self._checkout(spec)
                try:
                    result, elapsed = self._call(spec, container, payload)
                finally:
                    self._checkin(container)
        else:
            with self._slots:
                container = self._checkout(spec)
                try:
                    result, elapsed = self._call(spec, container, payload)
                finally:
                    self._checkin(container)
        if elapsed > spec.timeout_seconds:
            raise FunctionTimedOut(
                logical_id, f"Task timed out after {spec.timeout_seconds:.2f} seconds", error_type="Sandbox.Timedout"
            )
        try:
            answer = json.dumps(result)
        except (TypeError, ValueError) as error:
            raise FunctionError(
                logical_id, f"Unable to marshal response: {error}", error_type="Runtime.MarshalError"
            ) from error
        if len(answer.encode("utf-8")) > RESPONSE_LIMIT_BYTES:
            raise FunctionError(
                logical_id,
                "Response payload size exceeded maximum allowed payload size (6291556 bytes).",
                error_type="Function.ResponseSizeTooLarge",
            )
        return json.loads(answer)

    def _call(self, spec: FunctionSpec, container: Container, payload: str) -> tuple[Any, float]:
        context = self.context_for(spec.logical_id)
        started = time.monotonic()
        container.invocations += 1
        try:
            result = container.handler(json.loads(payload), context)
        except Exception as error:
            raise FunctionError(spec.logical_id, str(error), error_type=type(error).__name__) from error
        return result, time.monotonic() - started

    def containers(self, logical_id: str) -> int:
        """How many containers of ``logical_id`` this host has made (warm ones are reused)."""
        with self._pool_lock:
            return self._made.get(logical_id, 0)

    def _checkout(self, spec: FunctionSpec) -> Container:
        """An idle warm container (the lowest-numbered), else a new one."""
        with self._pool_lock:
            idle = self._idle.setdefault(spec.logical_id, [])
            if idle:
                idle.sort(key=lambda c: c.index)
                return idle.pop(0)
            index = self._made.get(spec.logical_id, 0)
            self._made[spec.logical_id] = index + 1
        try:
            return self._load(spec, index)
        except BaseException:
            with self._pool_lock:
                self._made[spec.logical_id] -= 1
            raise

    def _checkin(self, container: Container) -> None:
        with self._pool_lock:
            self._idle.setdefault(container.function, []).append(container)

    def _load(self, spec: FunctionSpec, index: int) -> Container:
        if index == 0:
            return Container(spec.logical_id, 0, self._handler(spec))
        with self._function_environment(spec):
            handler, modules = load_isolated(spec.handler_dir, spec.handler, f"{spec.module_name}__{index}", index)
        self._freeze()
        log.debug("%s: container %d is warm", spec.logical_id, index)
        return Container(spec.logical_id, index, handler, modules)

    def _freeze(self) -> None:
        if self._freeze_loaded:
            gc.freeze()

    def _handler(self, spec: FunctionSpec) -> Handler:
        handler = self._handlers.get(spec.logical_id)
        if handler is None:
            with _LOAD_LOCK, self._function_environment(spec):
                handler = load_handler(spec.handler_dir, spec.handler, spec.module_name)
                self._freeze()
            self._handlers[spec.logical_id] = handler
        return handler

    @contextmanager
    def _function_environment(self, spec: FunctionSpec) -> Iterator[None]:
        wanted = {k: v for k, v in spec.environment.items() if os.environ.get(k) != v}
        wanted.update(
            {
                "AWS_LAMBDA_FUNCTION_NAME": spec.name,
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_mb),
                "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            }
        )
        saved = {k: os.environ.get(k) for k in wanted}
        os.environ.update(wanted)
        try:
            yield
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
