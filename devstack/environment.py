"""A function's execution environments, processes of their own (``devstack.lambdas.EnvironmentHost``).

    python -m devstack.environment <control fd> <handler dir> <handler> <module name>

The process started is the function's **zygote**: started with the function's whole
environment (the parent builds it: the stack's variables, the template's for this function,
Lambda's ``AWS_LAMBDA_*``), it imports the handler once (the init: what Lambda's init phase
does), says so, then only forks. Each child of it is one execution environment, warm from
birth (it inherits the init copy-on-write; the door froze what init made), running one
invocation at a time until its request pipe reaches EOF. The zygote stays single-threaded, so
forking it is safe (forking the multi-threaded stack process would not be).

The control channel is a ``SOCK_SEQPACKET`` socket pair (one message a datagram, file
descriptors passed beside it), the parent asking, the zygote answering:

- first, unasked: ``{"ready": true, "init_seconds": s}``, or
  ``{"error": {"errorType", "errorMessage"}}`` and the zygote exits
  (``Runtime.HandlerNotFound``, ``Runtime.ImportModuleError``);
- ``{"do": "fork"}`` with two pipe ends (the environment's requests, its answers):
  ``{"pid": n}``;
- ``{"do": "wait", "pid": n, "kill": bool}`` (after the parent closed its pipes, or to kill a
  timed-out one): ``{"status": code}``, the exit code, negative for a signal (``Popen``'s);
- EOF (the stack stopped or died): every environment left is killed and the zygote exits.

An environment speaks frames (``devstack.lambdas.write_frame``: a 4-byte big-endian length,
then the bytes) on its pipes. Each invocation, parent to environment: the context's fields as
JSON (``FakeLambdaContext``'s: name, memory, remaining time, request id), then the event's
JSON. Each answer: ``{"calls": {"aws": {...}, "forager": {...}}}`` then the handler's answer
as JSON, or ``{"calls": ..., "error": {"errorType", "errorMessage"}}`` alone (the handler
raised, or its answer is not JSON: ``Runtime.MarshalError``).

stdout and stderr are the stack's: what the handler logs is the stack's log, and so is the
traceback of a handler that raised (Lambda writes it to the function's log). Each environment
has one log stream for its life. One whose zygote is gone exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import threading
import time
import traceback
import uuid
from pathlib import Path
from typing import Any

from devstack.lambdas import (
    FakeLambdaContext,
    FunctionError,
    Handler,
    HandlerNotFound,
    load_handler,
    marshal,
    read_frame,
    write_frame,
)
from devstack.metering import CallCounter

ORPHAN_CHECK_SECONDS = 0.5
REAP_SECONDS = 2.0
"""How long ``wait`` lets an environment whose pipes were closed exit by itself before killing it."""


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    control = socket.socket(fileno=int(argv[0]))
    handler_dir, handler, module_name = Path(argv[1]), argv[2], argv[3]
    calls = CallCounter()
    calls.install()
    calls.tap_stdout()  # the metrics the function prints: GET /_local/metrics's cloudwatch
    started = time.monotonic()
    try:
        function = load_handler(handler_dir, handler, module_name)
    except HandlerNotFound as error:
        return _init_failed(control, "Runtime.HandlerNotFound", str(error))
    except Exception as error:
        traceback.print_exc()
        return _init_failed(control, "Runtime.ImportModuleError", f"Unable to import module '{handler}': {error}")
    _send(control, {"ready": True, "init_seconds": round(time.monotonic() - started, 3)})
    children: set[int] = set()
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(control, 65536, 2)
        except OSError:
            data, fds = b"", []
        if not data:
            for pid in children:
                _wait(pid, kill=True)
            _flush()
            os._exit(0)
        message = json.loads(data)
        if message["do"] == "fork":
            pid = os.fork()
            if pid == 0:
                control.close()
                calls.take()  # the zygote's own calls (its init's) are no invocation's
                _serve(fds[0], fds[1], function, calls)  # never returns
            for fd in fds:
                os.close(fd)
            children.add(pid)
            _send(control, {"pid": pid})
        elif message["do"] == "wait":
            pid = int(message["pid"])
            children.discard(pid)
            _send(control, {"status": _wait(pid, kill=bool(message.get("kill")))})


def _serve(requests: int, answers: int, function: Handler, calls: CallCounter) -> None:
    """One execution environment: one invocation at a time until EOF."""
    threading.Thread(target=_exit_when_orphaned, args=(os.getppid(),), name="orphan-watch", daemon=True).start()
    name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "function")
    log_stream = f"{time.strftime('%Y/%m/%d', time.gmtime())}/[$LATEST]{uuid.uuid4().hex}"
    while True:
        fields = read_frame(requests)
        event = read_frame(requests) if fields is not None else None
        if fields is None or event is None:
            _flush()
            os._exit(0)  # nothing may keep an ended environment alive (a handler's leftover thread)
        context = FakeLambdaContext(**json.loads(fields), log_stream_name=log_stream)
        answer = b""
        status: dict[str, Any] = {}
        try:
            answer = marshal(name, function(json.loads(event), context))
        except FunctionError as error:  # the answer is not JSON
            status = {"error": {"errorType": error.error_type, "errorMessage": str(error)}}
        except Exception as error:
            traceback.print_exc()
            status = {"error": {"errorType": type(error).__name__, "errorMessage": str(error)}}
        status["calls"] = calls.take()
        _flush()
        write_frame(answers, json.dumps(status).encode())
        if "error" not in status:
            write_frame(answers, answer)


def _wait(pid: int, *, kill: bool) -> int | None:
    """Reap ``pid`` (killed first with ``kill``, or past ``REAP_SECONDS``); its exit code."""
    if kill:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + REAP_SECONDS
    try:
        while True:
            done, status = os.waitpid(pid, 0 if kill else os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                kill = True
            else:
                time.sleep(0.01)
    except ChildProcessError:
        return None


def _send(control: socket.socket, message: dict[str, Any]) -> None:
    control.send(json.dumps(message).encode())


def _init_failed(control: socket.socket, error_type: str, message: str) -> int:
    print(f"[ERROR] {error_type}: {message}", file=sys.stderr)
    _flush()
    _send(control, {"error": {"errorType": error_type, "errorMessage": message}})
    return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


def _exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(ORPHAN_CHECK_SECONDS)
    os._exit(1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
