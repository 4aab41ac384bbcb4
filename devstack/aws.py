"""Where the stack's AWS lives: moto's server on loopback, or a deployed stack.

``MotoEmulator`` is moto's ``ThreadedMotoServer`` with two fixes the local stack needs:
it binds in the caller's thread and a port in use raises ``OSError`` (moto's
``start()`` waits forever on a thread that died, and werkzeug's server calls
``sys.exit`` on a taken port), and ``stop()`` closes the listening socket (moto's only
shuts the serve loop down); the fixes to moto itself, which change its cost and never its
answers (a transaction's rollback copy, what each request looked up again), are
``devstack.moto_fixes``, installed when a ``MotoEmulator`` is made. Moto keeps its state in this process's
memory, shared by every server: ``reset()`` empties it. Once ``journal_to`` names a
``devstack.persistence.Journal``, every write to an item, object or parameter is journaled
(its after-images appended and flushed) before its answer leaves (``JournalingApp``).

``deployed_template`` reads a deployed stack (``DEVSTACK_AWS=real``): its resources'
physical names by logical id, and its parameters.
"""

from __future__ import annotations

import errno
import io
import json
import logging
import os
import socket
import threading
from typing import Any
from urllib.parse import parse_qs
from xml.etree import ElementTree

import httpx
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from moto.server import ThreadedMotoServer
from werkzeug.serving import make_server

from devstack import moto_fixes
from devstack.persistence import Change, Journal
from devstack.template import TEMPLATE, Template

log = logging.getLogger("devstack.aws")

LOCAL_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


_DYNAMODB_WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")
_SSM_WRITES = ("PutParameter", "DeleteParameter", "DeleteParameters")
_S3_SUBRESOURCES = ("uploadId", "uploads", "tagging", "acl", "retention", "legal-hold", "restore", "select")
"""Query keys of S3 requests that change no object's bytes, type or metadata (the parts of a
multipart upload are not state the snapshot keeps: its completion is)."""
_PARTIQL = ("ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction")


class JournalingApp:
    """Moto's WSGI app, journaling every write to what the snapshot keeps before answering it.

    A request that may change a DynamoDB item, an S3 object or an SSM parameter (the state
    ``devstack.persistence.take_snapshot`` keeps; SQS and the event bus it does not keep) is
    applied, then the after-images of what it touched are read back from moto (in-process,
    not over HTTP) and appended to the journal and flushed, all under the journal's lock, and
    only then does its answer leave (the answer's body is read whole first, so nothing is
    sent before the record is written). Every other request (reads, long-polling SQS
    ``ReceiveMessage``, the bus's events) passes straight through and costs nothing.
    A refused write (a failed condition, a cancelled transaction) is journaled too: its
    after-images are what moto still holds, so replaying them changes nothing.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.journal: Journal | None = None
        self._key_schemas: dict[tuple[str, str], list[str]] = {}
        self._warned: set[str] = set()
        self._dynamodb = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        """Every DynamoDB request one at a time: moto's tables are plain dicts, and a read that
        iterates one while a write (a transaction deep-copies the table) changes it fails with
        ``dictionary changed size during iteration`` — a 500 that DynamoDB never answers. Eight
        ``kb import`` writes at once met it; DynamoDB's own answer to writes that meet on one
        item is ``TransactionConflict``, which the pages surface answers 503. The work is
        in-memory and holds the GIL, so serialising it costs nothing measurable."""
        if not str(environ.get("HTTP_X_AMZ_TARGET", "")).startswith("DynamoDB_"):
            return self._journaled(environ, start_response)
        with self._dynamodb:
            answer = self._journaled(environ, start_response)
            try:
                return [b"".join(answer)]
            finally:
                if hasattr(answer, "close"):
                    answer.close()

    def _journaled(self, environ: dict[str, Any], start_response: Any) -> Any:
        journal = self.journal
        touched = _touches(environ) if journal is not None else None
        if journal is None or touched is None:
            return self.app(environ, start_response)
        service, action = touched
        body = _read_body(environ) if service != "s3" or action == "DeleteObjects" else b""
        with journal.lock:
            answer = self.app(environ, start_response)  # moto applies the request here
            try:
                content = b"".join(answer)
            finally:
                if hasattr(answer, "close"):
                    answer.close()
            try:
                changes = self._after_images(environ, service, action, body)
            except Exception:
                log.exception(
                    "the after-images of %s %s could not be read: this write is not journaled", service, action
                )
                changes = []
            journal.append_locked(changes)
        return [content]

    # ------------------------------------------------------------------ after-images
    def _after_images(self, environ: dict[str, Any], service: str, action: str, body: bytes) -> list[Change]:
        if service == "dynamodb":
            return self._items(environ, action, json.loads(body or b"{}"))
        if service == "ssm":
            request = json.loads(body or b"{}")
            names = request.get("Names", []) if action == "DeleteParameters" else [request.get("Name")]
            return [self._parameter(environ, name) for name in names if isinstance(name, str)]
        bucket, key = _bucket_and_key(environ)
        keys = _deleted_keys(body) if action == "DeleteObjects" else [key]
        return [self._object(environ, bucket, k) for k in keys if k]

    def _items(self, environ: dict[str, Any], action: str, request: dict[str, Any]) -> list[Change]:
        if action in _PARTIQL:
            if action not in self._warned:
                self._warned.add(action)
                log.warning("DynamoDB %s is not journaled: a kill -9 before the next snapshot may lose it", action)
            return []
        keys: dict[tuple[str, str], dict[str, Any]] = {}  # (table, canonical key) -> key, in order
        for table, item in _item_targets(action, request):
            key = {name: item[name] for name in self._key_schema(environ, table)}
            keys.setdefault((table, json.dumps(key, sort_keys=True)), key)
        found = self._read_items(environ, list(keys.items()))
        return [Change("item", where, found.get(where)) for where in keys]

    def _read_items(
        self, environ: dict[str, Any], keys: list[tuple[tuple[str, str], dict[str, Any]]]
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """The items at ``keys`` as moto now holds them (BatchGetItem, 100 keys a call); absent: gone."""
        found: dict[tuple[str, str], dict[str, Any]] = {}
        schemas = {table: self._key_schema(environ, table) for (table, _), _ in keys}
        for start in range(0, len(keys), 100):
            wanted: dict[str, Any] = {}
            for (table, _), key in keys[start : start + 100]:
                wanted.setdefault(table, {"Keys": [], "ConsistentRead": True})["Keys"].append(key)
            while wanted:
                status, answer = _local_call(
                    self.app, environ, "dynamodb", "DynamoDB_20120810.BatchGetItem", {"RequestItems": wanted}
                )
                if status >= 300:
                    raise LookupError(f"BatchGetItem answered {status}: {answer}")
                for table, items in answer.get("Responses", {}).items():
                    for item in items:
                        key = {name: item[name] for name in schemas[table]}
                        found[(table, json.dumps(key, sort_keys=True))] = item
                wanted = answer.get("UnprocessedKeys") or {}
        return found

    def _key_schema(self, environ: dict[str, Any], table: str) -> list[str]:
        account = _credential(environ)[0]
        cached = self._key_schemas.get((account, table))
        if cached is None:
            status, described = _local_call(
                self.app, environ, "dynamodb", "DynamoDB_20120810.DescribeTable", {"TableName": table}
            )
            if status >= 300:
                raise LookupError(f"table {table}: {described}")
            cached = [k["AttributeName"] for k in described["Table"]["KeySchema"]]
            self._key_schemas[(account, table)] = cached
        return cached

    def _parameter(self, environ: dict[str, Any], name: str) -> Change:
        status, got = _local_call(
            self.app, environ, "ssm", "AmazonSSM.GetParameter", {"Name": name, "WithDecryption": True}
        )
        if status >= 300:
            return Change("parameter", (name,), None)
        found = got["Parameter"]
        return Change("parameter", (name,), {"Name": found["Name"], "Type": found["Type"], "Value": found["Value"]})

    def _object(self, environ: dict[str, Any], bucket: str, key: str) -> Change:
        status, headers, content = _local_request(self.app, environ, "s3", "GET", _s3_path(bucket, key), "", {}, b"")
        if status == 404:
            return Change("object", (bucket, key), None)
        if status >= 300:
            raise LookupError(f"s3://{bucket}/{key} answered {status}")
        value: dict[str, Any] = {}
        if headers.get("content-type"):
            value["ContentType"] = headers["content-type"]
        metadata = {k.removeprefix("x-amz-meta-"): v for k, v in headers.items() if k.startswith("x-amz-meta-")}
        if metadata:
            value["Metadata"] = metadata
        return Change("object", (bucket, key), value, content)


def _item_targets(action: str, request: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(table, its key or the whole item) of every item a DynamoDB write names."""
    if action in ("PutItem", "UpdateItem", "DeleteItem"):
        return [(request["TableName"], request.get("Item") or request["Key"])]
    targets: list[tuple[str, dict[str, Any]]] = []
    for table, writes in request.get("RequestItems", {}).items():  # BatchWriteItem
        for write in writes:
            named = write.get("PutRequest", {}).get("Item") or write.get("DeleteRequest", {}).get("Key")
            if named:
                targets.append((table, named))
    for entry in request.get("TransactItems", []):  # TransactWriteItems (a ConditionCheck changes nothing)
        for verb in ("Put", "Update", "Delete"):
            if verb in entry:
                targets.append((entry[verb]["TableName"], entry[verb].get("Item") or entry[verb]["Key"]))
    return targets


def _touches(environ: dict[str, Any]) -> tuple[str, str] | None:
    """(service, action) when the request may change what the snapshot keeps; None otherwise."""
    method = environ.get("REQUEST_METHOD", "GET")
    if method in ("GET", "HEAD", "OPTIONS") or str(environ.get("PATH_INFO", "")).startswith("/moto-api"):
        return None
    service = _credential(environ)[2]
    target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
    action = target.rsplit(".", 1)[-1]
    if service == "dynamodb":
        return (service, action) if action in (*_DYNAMODB_WRITES, *_PARTIQL) else None
    if service == "ssm":
        return (service, action) if action in _SSM_WRITES else None
    if service != "s3":
        return None
    key = _bucket_and_key(environ)[1]
    query = parse_qs(str(environ.get("QUERY_STRING", "")), keep_blank_values=True)
    if not key:  # bucket-level: only a DeleteObjects changes objects
        return ("s3", "DeleteObjects") if method == "POST" and "delete" in query else None
    if method == "POST" and "uploadId" in query:
        return ("s3", "CompleteMultipartUpload")
    if any(name in query for name in _S3_SUBRESOURCES):
        return None
    return ("s3", f"{method}Object")


def _credential(environ: dict[str, Any]) -> tuple[str, str, str]:
    """(access key, region, service) of the request's SigV4 scope; an unsigned request is S3 (moto's default)."""
    scope = ""
    auth = str(environ.get("HTTP_AUTHORIZATION", ""))
    if "Credential=" in auth:
        scope = auth.split("Credential=", 1)[1].split(",", 1)[0].strip()
    else:
        scope = parse_qs(str(environ.get("QUERY_STRING", ""))).get("X-Amz-Credential", [""])[0]
    parts = scope.split("/")
    if len(parts) == 5:
        return parts[0], parts[2], parts[3].lower()
    return LOCAL_CREDENTIALS["AWS_ACCESS_KEY_ID"], "us-east-1", "s3"


def _bucket_and_key(environ: dict[str, Any]) -> tuple[str, str]:
    """Path-style S3 (the only style botocore uses for an endpoint that is an IP address)."""
    path = str(environ.get("PATH_INFO", "")).encode("latin-1").decode("utf-8", "replace")
    bucket, _, key = path.lstrip("/").partition("/")
    return bucket, key


def _s3_path(bucket: str, key: str) -> str:
    return f"/{bucket}/{key}".encode().decode("latin-1")


def _deleted_keys(body: bytes) -> list[str]:
    # The body moto has just parsed itself, from a client on loopback (the stack binds nothing else).
    root = ElementTree.fromstring(body)  # noqa: S314
    return [e.text or "" for e in root.iter() if e.tag.rsplit("}", 1)[-1] == "Key"]


def _read_body(environ: dict[str, Any]) -> bytes:
    """The request's body, read whole and put back for moto."""
    stream = environ["wsgi.input"]
    if environ.get("wsgi.input_terminated"):
        body = stream.read()
    else:
        length = str(environ.get("CONTENT_LENGTH") or "0")
        body = stream.read(int(length)) if length.isdigit() else b""
    environ["wsgi.input"] = io.BytesIO(body)
    return bytes(body)


def _local_call(app: Any, environ: dict[str, Any], service: str, target: str, body: dict[str, Any]) -> tuple[int, Any]:
    """A JSON-protocol call to moto in-process, signed as ``environ``'s caller (same account)."""
    status, _, content = _local_request(
        app,
        environ,
        service,
        "POST",
        "/",
        "",
        {"HTTP_X_AMZ_TARGET": target, "CONTENT_TYPE": "application/x-amz-json-1.1"},
        json.dumps(body).encode("utf-8"),
    )
    return status, json.loads(content or b"{}")


def _local_request(
    app: Any,
    environ: dict[str, Any],
    service: str,
    method: str,
    path: str,
    query: str,
    headers: dict[str, str],
    body: bytes,
) -> tuple[int, dict[str, str], bytes]:
    access, region, _ = _credential(environ)
    request = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": environ.get("SERVER_NAME", "127.0.0.1"),
        "SERVER_PORT": environ.get("SERVER_PORT", "80"),
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": environ.get("HTTP_HOST", "127.0.0.1"),
        "HTTP_AUTHORIZATION": (
            f"AWS4-HMAC-SHA256 Credential={access}/20200101/{region}/{service}/aws4_request, "
            "SignedHeaders=host, Signature=0"
        ),
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": environ.get("wsgi.errors", io.StringIO()),
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        **headers,
    }
    started: list[Any] = []

    def start_response(status: str, response_headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        started[:] = [int(status.split(maxsplit=1)[0]), {k.lower(): v for k, v in response_headers}]

    answer = app(request, start_response)
    try:
        content = b"".join(answer)
    finally:
        if hasattr(answer, "close"):
            answer.close()
    return started[0], started[1], content


class MotoEmulator(ThreadedMotoServer):
    def __init__(self, host: str = "127.0.0.1", port: int = 4566):
        moto_fixes.install()  # a transaction copies what it names, a request lists no folder
        super().__init__(ip_address=host, port=port, verbose=False)
        self._app = JournalingApp(DomainDispatcherApplication(create_backend_app))

    def journal_to(self, journal: Journal | None) -> None:
        """Journal every write from now on (None: stop journaling)."""
        self._app.journal = journal

    def start(self) -> None:
        _check_port(self._ip_address, self._port)
        try:
            self._server = make_server(
                self._ip_address,
                self._port,
                self._app,
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
