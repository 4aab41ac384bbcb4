"""Running the template's functions the way Lambda runs them: in execution environments.

An execution environment is a process of its own (``devstack/environment.py``): started with
the function's environment (the stack's variables, the template's for that function, Lambda's
``AWS_LAMBDA_*``), it imports the handler once (the init), then runs one invocation at a time,
as long as it lives, exactly as Lambda's do. So nothing in a process (Powertools' resolvers and
their class-level ``current_event``, the cached ``runtime()``, a module's globals) is ever shared
by two concurrent invocations. ``EnvironmentHost`` is the local stack's: a call takes an idle
warm environment of its function (the lowest-numbered), else starts a new one while the
function has fewer than ``concurrency`` (``DEVSTACK_CONCURRENCY``), else waits for one to be
free. ``concurrency=1`` also runs one invocation at a time across the whole stack (race tests
rely on that order). An environment idle for ``idle_seconds`` is ended; a crashed one (it
exited, or was killed) answers its call as a function error and is replaced by a fresh one on
the next call; one that runs past the function's ``Timeout`` is killed (``Sandbox.Timedout``).
``stop()`` ends them all; each also ends by itself when the stack's process is gone (its
request pipe reaches EOF, or its parent changes).

The parent and an environment speak length-prefixed frames over two pipes (see
``devstack/environment.py``); the environment's stdout and stderr are the stack's, so its logs
are the stack's log. The AWS and FORAGER calls an invocation makes are counted inside the
environment and returned with its answer (``on_calls``: ``GET /_local/metrics``).

``FunctionHost`` runs the handlers in *this* process instead, one invocation at a time: for
tests whose AWS is mocked in this process (moto's ``mock_aws``), which a process of its own
could not reach. ``load_handler`` imports a function's handler by file path under a unique
module name (``lambda_StatusFunction``), once: the same code Lambda loads, with no
``sys.path`` tricks (the shared layer is installed in the environment, as Lambda's layer is on
its path). ``FakeLambdaContext`` is the context object Lambda passes.
"""

from __future__ import annotations

import abc
import contextlib
import gc
import importlib.util
import json
import logging
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

from devstack.template import Template

log = logging.getLogger("devstack.lambdas")

Handler = Callable[[Any, Any], Any]
Calls = Mapping[str, Mapping[str, Any]]
"""What one invocation called: ``{"aws": {"dynamodb:GetItem": 1}, "forager": {"GET": 2}}``."""

RESPONSE_LIMIT_BYTES = 6 * 1024 * 1024
"""Lambda's synchronous payload limit (request and response)."""

DEFAULT_CONCURRENCY = 8
"""Execution environments per function (``DEVSTACK_CONCURRENCY``; 1 also serialises the stack)."""

IDLE_SECONDS = 300.0
"""How long an idle environment stays warm before it is ended (Lambda keeps one for minutes)."""

INIT_TIMEOUT_SECONDS = 30.0
"""The init's bound. Lambda's is 10 s; this machine's cores are shared with test runs."""

_LOAD_LOCK = threading.RLock()
_FRAME = struct.Struct(">I")


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


def lambda_environment(spec: FunctionSpec) -> dict[str, str]:
    """The variables Lambda sets in a function's execution environment (the ones this stack models)."""
    return {
        "AWS_LAMBDA_FUNCTION_NAME": spec.name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_mb),
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "LAMBDA_TASK_ROOT": str(spec.handler_dir),  # /var/task on Lambda: the function's package
    }


def marshal(function: str, result: Any) -> bytes:
    """The handler's answer as the runtime sends it (JSON); ``Runtime.MarshalError`` when it is not JSON."""
    try:
        return json.dumps(result).encode("utf-8")
    except (TypeError, ValueError) as error:
        message = f"Unable to marshal response: {error}"
        raise FunctionError(function, message, error_type="Runtime.MarshalError") from error


def write_frame(fd: int, data: bytes) -> None:
    """One frame: its length (4 bytes, big-endian), then its bytes."""
    view = memoryview(_FRAME.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def read_frame(fd: int, deadline: float | None = None) -> bytes | None:
    """The next frame, ``None`` at EOF; ``TimeoutError`` when it is not whole by ``deadline`` (monotonic)."""
    head = _read_exactly(fd, _FRAME.size, deadline)
    if head is None:
        return None
    (length,) = _FRAME.unpack(head)
    body = _read_exactly(fd, length, deadline)
    if body is None:
        return None
    return body


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes | None:
    chunks: list[bytes] = []
    wanted = size
    while wanted:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(wanted, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        wanted -= len(chunk)
    return b"".join(chunks)


class _Host(abc.ABC):
    """What both hosts share: the template's functions, their contexts, Lambda's payload limits."""

    def __init__(self, template: Template):
        self._template = template
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

    def context_fields(self, logical_id: str) -> dict[str, Any]:
        """What a ``FakeLambdaContext`` of one invocation of ``logical_id`` is made of (a fresh request id)."""
        spec = self.spec(logical_id)
        return {
            "function_name": spec.name,
            "memory_limit_in_mb": spec.memory_mb,
            "timeout_seconds": spec.timeout_seconds,
            "region": self._template.region,
            "account_id": self._template.account_id,
            "aws_request_id": str(uuid.uuid4()),
        }

    def context_for(self, logical_id: str) -> FakeLambdaContext:
        return FakeLambdaContext(**self.context_fields(logical_id))

    def invoke(self, logical_id: str, event: Any) -> Any:
        """Run the function on ``event``; the handler's answer after a JSON round trip.

        Raises ``FunctionError``: the handler raised (its type and message), its answer is
        not JSON (``Runtime.MarshalError``) or too large (``Function.ResponseSizeTooLarge``),
        the event is too large (``RequestEntityTooLargeException``), the init failed
        (``Runtime.ImportModuleError``, ``Runtime.HandlerNotFound``), the environment died
        (``Runtime.ExitError``); ``FunctionTimedOut`` when it ran past its Timeout.
        """
        spec = self.spec(logical_id)
        payload = json.dumps(event).encode("utf-8")
        if len(payload) > RESPONSE_LIMIT_BYTES:
            raise FunctionError(
                logical_id,
                "Request must be smaller than 6291456 bytes for the InvokeFunction operation",
                error_type="RequestEntityTooLargeException",
            )
        answer = self._run(spec, payload)
        if len(answer) > RESPONSE_LIMIT_BYTES:
            raise FunctionError(
                logical_id,
                "Response payload size exceeded maximum allowed payload size (6291556 bytes).",
                error_type="Function.ResponseSizeTooLarge",
            )
        return json.loads(answer)

    @abc.abstractmethod
    def _run(self, spec: FunctionSpec, payload: bytes) -> bytes:
        """Run one invocation of ``spec`` on ``payload`` (JSON bytes); the answer's JSON bytes."""


def _timed_out(spec: FunctionSpec) -> FunctionTimedOut:
    return FunctionTimedOut(
        spec.logical_id, f"Task timed out after {spec.timeout_seconds:.2f} seconds", error_type="Sandbox.Timedout"
    )


class FunctionHost(_Host):
    """The handlers in this process, one invocation at a time, for tests that mock AWS here.

    Around each call the function's own variables and Lambda's ``AWS_LAMBDA_*`` are set in
    ``os.environ`` and put back afterwards; the handler module is imported on the first call,
    inside that environment. A call past its Timeout is noticed after the fact (a thread
    cannot be stopped). The local stack runs ``EnvironmentHost`` instead.
    """

    def __init__(self, template: Template):
        super().__init__(template)
        self._lock = threading.RLock()  # one call at a time: one process is one environment
        self._handlers: dict[str, Handler] = {}

    def _run(self, spec: FunctionSpec, payload: bytes) -> bytes:
        with self._lock, _function_environment(spec):
            handler = self._handlers.get(spec.logical_id)
            if handler is None:
                handler = load_handler(spec.handler_dir, spec.handler, spec.module_name)
                self._handlers[spec.logical_id] = handler
            started = time.monotonic()
            try:
                result = handler(json.loads(payload), self.context_for(spec.logical_id))
            except Exception as error:
                raise FunctionError(spec.logical_id, str(error), error_type=type(error).__name__) from error
            if time.monotonic() - started > spec.timeout_seconds:
                raise _timed_out(spec)
            return marshal(spec.logical_id, result)


def _function_environment(spec: FunctionSpec) -> contextlib.AbstractContextManager[object]:
    """The process environment with ``spec``'s own variables and Lambda's, put back afterwards."""
    return mock.patch.dict(os.environ, {**spec.environment, **lambda_environment(spec)})


class Zygote:
    """A function's init, done once, in a single-threaded process that forks its environments.

    ``devstack/environment.py`` holds the other side of the control channel (its protocol).
    """

    def __init__(self, spec: FunctionSpec, variables: Mapping[str, str], init_timeout: float):
        self.function = spec.logical_id
        self._lock = threading.Lock()  # one question at a time on the control channel
        self._timeout = init_timeout
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._control = ours
        started = time.monotonic()
        command = [sys.executable, "-m", "devstack.environment", str(theirs.fileno())]
        command += [str(spec.handler_dir), spec.handler, spec.module_name]
        try:
            self.process = subprocess.Popen(
                command, pass_fds=(theirs.fileno(),), env=dict(variables), stdin=subprocess.DEVNULL
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        try:
            told = self._receive(started + init_timeout)
        except TimeoutError:
            self.stop()
            raise FunctionError(
                spec.logical_id, f"Init timed out after {init_timeout:.2f} seconds", error_type="Sandbox.Timedout"
            ) from None
        if told is None:
            self.stop()
            raise FunctionError(
                spec.logical_id,
                f"Runtime exited during init with error: {_exit_reason(self.process.wait())}",
                error_type="Runtime.ExitError",
            )
        if "error" in told:
            self.stop()
            raise FunctionError(
                spec.logical_id, str(told["error"]["errorMessage"]), error_type=str(told["error"]["errorType"])
            )
        self.init_seconds = float(told.get("init_seconds", 0.0))

    def alive(self) -> bool:
        return self.process.poll() is None

    def fork(self, index: int) -> Environment:
        """A new environment, warm: a child of this zygote, with its own pair of pipes."""
        to_worker, requests = os.pipe()
        answers, from_worker = os.pipe()
        try:
            with self._lock:
                socket.send_fds(self._control, [b'{"do": "fork"}'], [to_worker, from_worker])
                told = self._receive(time.monotonic() + self._timeout)
        except (OSError, TimeoutError):
            told = None
        finally:
            os.close(to_worker)
            os.close(from_worker)
        if told is None or "pid" not in told:
            os.close(requests)
            os.close(answers)
            raise FunctionError(self.function, "The function's init process is gone.", error_type="Runtime.ExitError")
        return Environment(self.function, index, int(told["pid"]), requests, answers, self)

    def wait(self, pid: int, *, kill: bool) -> int | None:
        """Reap one of its environments (killed first with ``kill``); its exit code, if known."""
        try:
            with self._lock:
                self._control.send(json.dumps({"do": "wait", "pid": pid, "kill": kill}).encode())
                told = self._receive(time.monotonic() + 10)
        except (OSError, TimeoutError):
            told = None
        if not told or told.get("status") is None:
            return None
        return int(told["status"])

    def stop(self) -> None:
        """EOF on the control channel: the zygote kills what is left of its environments and exits."""
        with contextlib.suppress(OSError):
            self._control.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _receive(self, deadline: float) -> dict[str, Any] | None:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self._control], [], [], left)[0]:
            raise TimeoutError
        data = self._control.recv(65536)
        return json.loads(data) if data else None


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "exit status unknown"
    if code == -signal.SIGKILL:
        return "signal: killed"
    if code < 0:
        return f"signal: {signal.Signals(-code).name.removeprefix('SIG').lower()}"
    return f"exit status {code}"


@dataclass(eq=False)
class Environment:
    """One execution environment: a child of its function's zygote, and the two pipes to it."""

    function: str
    index: int
    pid: int
    requests: int  # the pipe the parent writes invocations to (its EOF ends the environment)
    answers: int  # the pipe the environment answers on
    zygote: Zygote
    invocations: int = 0
    idle_since: float = 0.0
    exit_code: int | None = None
    _ended: bool = False

    def end(self, *, kill: bool = False) -> None:
        """Close its pipes (an idle environment exits at EOF), then reap it (killed first with ``kill``)."""
        if self._ended:
            return
        self._ended = True
        for fd in (self.requests, self.answers):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.exit_code = self.zygote.wait(self.pid, kill=kill)

    def exit_reason(self) -> str:
        return _exit_reason(self.exit_code)


class EnvironmentHost(_Host):
    """Invokes the template's functions in execution environments, each a process of its own.

    ``environment`` is the base of every environment's variables (``os.environ`` as it is when
    the environment starts, by default); the function's own from the template and Lambda's
    ``AWS_LAMBDA_*`` go over it. ``on_calls`` receives, after each answered invocation, the
    AWS and FORAGER calls it made (counted inside the environment).
    """

    def __init__(
        self,
        template: Template,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        environment: Mapping[str, str] | None = None,
        on_calls: Callable[[Calls], None] | None = None,
        idle_seconds: float = IDLE_SECONDS,
        init_timeout_seconds: float = INIT_TIMEOUT_SECONDS,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        super().__init__(template)
        self.concurrency = concurrency
        self._base = dict(environment) if environment is not None else None
        self._on_calls = on_calls
        self._idle_seconds = idle_seconds
        self._init_timeout = init_timeout_seconds
        self._serial = threading.RLock() if concurrency == 1 else None  # 1: one call at a time, stack-wide
        self._cond = threading.Condition()
        self._idle: dict[str, list[Environment]] = {}
        self._indexes: dict[str, set[int]] = {}  # per function: the indexes alive (busy, idle, starting)
        self._alive: set[Environment] = set()
        self._stopped = False
        self._stopping = threading.Event()
        self._reaper: threading.Thread | None = None
        self._zygote_lock = threading.Lock()  # one init per function at a time
        self._zygotes: dict[str, Zygote] = {}

    # ------------------------------------------------------------------ the public surface
    def environments(self, logical_id: str) -> int:
        """How many execution environments of ``logical_id`` are alive (warm ones are reused)."""
        with self._cond:
            return len(self._indexes.get(logical_id, ()))

    def stop(self) -> None:
        """End every environment, the busy ones too (their calls fail); no process is left."""
        with self._cond:
            self._stopped = True
            self._stopping.set()
            everyone = list(self._alive)
            self._alive.clear()
            self._idle.clear()
            self._indexes.clear()
            self._cond.notify_all()
        for environment in everyone:
            environment.end(kill=True)
        with self._zygote_lock:
            zygotes = list(self._zygotes.values())
            self._zygotes.clear()
        for zygote in zygotes:
            zygote.stop()
        if self._reaper is not None:
            self._reaper.join(timeout=5)

    # ------------------------------------------------------------------ one invocation
    def _run(self, spec: FunctionSpec, payload: bytes) -> bytes:
        if self._serial is None:
            return self._run_in_an_environment(spec, payload)
        with self._serial:
            return self._run_in_an_environment(spec, payload)

    def _run_in_an_environment(self, spec: FunctionSpec, payload: bytes) -> bytes:
        environment = self._checkout(spec)
        context = self.context_fields(spec.logical_id)
        deadline = time.monotonic() + spec.timeout_seconds
        environment.invocations += 1
        told: dict[str, Any] | None = None
        answer: bytes | None = b""
        try:
            write_frame(environment.requests, json.dumps(context).encode("utf-8"))
            write_frame(environment.requests, payload)
            status = read_frame(environment.answers, deadline)
            if status is not None:
                told = json.loads(status)
                if told.get("error") is None:
                    answer = read_frame(environment.answers, deadline)
        except TimeoutError:
            self._discard(environment, kill=True)
            log.warning("%s: %s timed out; its environment is ended", spec.logical_id, context["aws_request_id"])
            raise _timed_out(spec) from None
        except OSError:  # a pipe broke: the environment is gone
            told = None
        if told is None or answer is None:
            self._discard(environment, kill=False)
            raise FunctionError(
                spec.logical_id,
                f"RequestId: {context['aws_request_id']} Error: Runtime exited with error: {environment.exit_reason()}",
                error_type="Runtime.ExitError",
            )
        self._checkin(environment)
        if self._on_calls is not None:
            self._on_calls(told.get("calls") or {})
        error = told.get("error")
        if error is not None:
            raise FunctionError(spec.logical_id, str(error["errorMessage"]), error_type=str(error["errorType"]))
        return answer

    # ------------------------------------------------------------------ the pool
    def _checkout(self, spec: FunctionSpec) -> Environment:
        """An idle warm environment (the lowest-numbered), else a new one, else the next one free."""
        with self._cond:
            while True:
                if self._stopped:
                    raise FunctionError(spec.logical_id, "The local stack is stopping.", error_type="ServiceException")
                idle = self._idle.setdefault(spec.logical_id, [])
                if idle:
                    idle.sort(key=lambda e: e.index)
                    return idle.pop(0)
                used = self._indexes.setdefault(spec.logical_id, set())
                if len(used) < self.concurrency:
                    index = min(set(range(self.concurrency)) - used)
                    used.add(index)
                    break
                self._cond.wait()
        try:
            environment = self._start(spec, index)
        except BaseException:
            with self._cond:
                self._indexes.get(spec.logical_id, set()).discard(index)
                self._cond.notify_all()
            raise
        with self._cond:
            stopped = self._stopped
            if not stopped:
                self._alive.add(environment)
                self._start_reaper()
        if stopped:
            environment.end(kill=True)
            raise FunctionError(spec.logical_id, "The local stack is stopping.", error_type="ServiceException")
        return environment

    def _checkin(self, environment: Environment) -> None:
        with self._cond:
            if environment not in self._alive:  # stopped meanwhile
                environment.end()
                return
            environment.idle_since = time.monotonic()
            self._idle.setdefault(environment.function, []).append(environment)
            self._cond.notify_all()

    def _discard(self, environment: Environment, *, kill: bool) -> None:
        """A broken environment (timed out: killed; crashed: reaped) leaves the pool; the next
        call starts a fresh one."""
        with self._cond:
            self._alive.discard(environment)
            self._indexes.get(environment.function, set()).discard(environment.index)
            self._cond.notify_all()
        environment.end(kill=kill)

    def _start(self, spec: FunctionSpec, index: int) -> Environment:
        """A new environment of ``spec``: forked from its zygote, which is started (the init) when
        there is none alive (``FunctionError`` when the init fails; the next call tries again)."""
        with self._zygote_lock:
            zygote = self._zygotes.get(spec.logical_id)
            if zygote is None or not zygote.alive():
                if zygote is not None:
                    zygote.stop()
                base = self._base if self._base is not None else dict(os.environ)
                variables = {**base, **spec.environment, **lambda_environment(spec)}
                zygote = Zygote(spec, variables, self._init_timeout)
                log.debug("%s: init %.2f s", spec.logical_id, zygote.init_seconds)
                self._zygotes[spec.logical_id] = zygote
        return zygote.fork(index)

    def _start_reaper(self) -> None:
        if self._reaper is None:
            self._reaper = threading.Thread(target=self._reap, name="devstack-environments", daemon=True)
            self._reaper.start()

    def _reap(self) -> None:
        """End the environments idle longer than ``idle_seconds``."""
        interval = max(0.05, min(self._idle_seconds / 4, 5.0))
        while not self._stopping.wait(interval):
            now = time.monotonic()
            with self._cond:
                cold = [e for idle in self._idle.values() for e in idle if now - e.idle_since >= self._idle_seconds]
                for environment in cold:
                    self._idle[environment.function].remove(environment)
                    self._alive.discard(environment)
                    self._indexes.get(environment.function, set()).discard(environment.index)
                if cold:
                    self._cond.notify_all()
            for environment in cold:
                log.debug("%s: environment %d was idle, ended", environment.function, environment.index)
                environment.end()
