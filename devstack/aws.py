"""Where the stack's AWS lives: moto's server on loopback, or a deployed stack.

``MotoEmulator`` is moto's ``ThreadedMotoServer`` with two fixes the local stack needs:
it binds in the caller's thread and a port in use raises ``OSError`` (moto's
``start()`` waits forever on a thread that died, and werkzeug's server calls
``sys.exit`` on a taken port), and ``stop()`` closes the listening socket (moto's only
shuts the serve loop down). Moto keeps its state in this process's
memory, shared by every server: ``reset()`` empties it. ``writes`` counts the requests
that may have changed it, each counted once moto has applied it and before its answer
leaves, so a snapshot begun after a write was acknowledged holds it.

``deployed_template`` reads a deployed stack (``DEVSTACK_AWS=real``): its resources'
physical names by logical id, and its parameters.
"""

from __future__ import annotations

import errno
import os
import socket
import threading
from typing import Any

import httpx
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from moto.server import ThreadedMotoServer
from werkzeug.serving import make_server

from devstack.template import TEMPLATE, Template

LOCAL_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


_READ_ACTIONS = ("Get", "Describe", "List", "Query", "Scan", "BatchGet", "TransactGet")


class WriteCounter:
    """A WSGI wrapper counting the requests that may change moto's state (not reads)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.count = 0
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        answer = self.app(environ, start_response)  # moto applies the request here
        if _may_write(environ):
            with self._lock:
                self.count += 1
        return answer


def _may_write(environ: dict[str, Any]) -> bool:
    if environ.get("REQUEST_METHOD", "GET") in ("GET", "HEAD", "OPTIONS"):
        return False
    target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
    return not (target and target.rsplit(".", 1)[-1].startswith(_READ_ACTIONS))


class MotoEmulator(ThreadedMotoServer):
    def __init__(self, host: str = "127.0.0.1", port: int = 4566):
        super().__init__(ip_address=host, port=port, verbose=False)
        self._writes = WriteCounter(DomainDispatcherApplication(create_backend_app))

    @property
    def writes(self) -> int:
        """How many requests that may have changed moto's state it has answered."""
        return self._writes.count

    def start(self) -> None:
        _check_port(self._ip_address, self._port)
        try:
            self._server = make_server(
                self._ip_address,
                self._port,
                self._writes,
                True,
                request_handler=MotoRequestHandler,
            )
        except SystemExit as error:  # werkzeug exits the process when the port is taken
            raise OSError(errno.EADDRINUSE, os.strerror(errno.EADDRINUSE)) from error
        self._server_ready_event.set()
        self._thread = threading.Thread(target=self._server.serve_forever, name="devstack-moto", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self.get_host_and_port()
        return f"http://{host}:{port}"

    def reset(self) -> None:
        """Forget every resource moto holds in this process."""
        httpx.post(f"{self.url}/moto-api/reset", timeout=30).raise_for_status()

    def stop(self) -> None:
        server = self._server
        if server is None:
            return
        super().stop()
        server.server_close()
        self._server = None


def _check_port(host: str, port: int) -> None:
    """Raise ``OSError`` if ``host:port`` cannot be bound (werkzeug would call ``sys.exit`` instead)."""
    if port == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))


def deployed_template(stack_name: str, session: Any, *, path: Any = TEMPLATE) -> Template:
    """The template bound to a deployed stack: physical names and parameter values from CloudFormation."""
    cloudformation = session.client("cloudformation")
    stack = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
    resources = cloudformation.describe_stack_resources(StackName=stack_name)["StackResources"]
    physical = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in resources if r.get("PhysicalResourceId")}
    parameters = {
        p["ParameterKey"]: p.get("ResolvedValue", p.get("ParameterValue", "")) for p in stack.get("Parameters", [])
    }
    # arn:aws:cloudformation:<region>:<account>:stack/<name>/<id>
    _, _, _, region, account_id, _ = stack["StackId"].split(":", 5)
    return Template(
        stack_name=stack_name,
        parameters=parameters,
        path=path,
        region=region,
        account_id=account_id,
        physical_ids=physical,
    )
