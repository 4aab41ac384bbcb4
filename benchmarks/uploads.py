"""A 100 MB batch through the S3 upload-session path: the ingestion Lambda's peak memory.

The Lambda runs in a process of its own, as Lambda runs it: the ingestion function's
handler, imported from its directory, called with API Gateway events. AWS is moto's server
and FORAGER the simulator, both in this (the bench's) process on loopback, so the child's
peak resident memory is the function's alone. The child opens the session (one event),
the bench PUTs every part to its presigned URL as a client would, and the child commits it
(a second event): the commit reads each part from S3 a chunk at a time and streams one
multipart body to FORAGER. The figure is the child's peak resident memory after the commit
(``VmHWM``, what Lambda reports as "Max Memory Used"; not ``ru_maxrss``, which a child
inherits from the process that forked it) beside its resident memory before the commit.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import time
from typing import Any

import boto3
import httpx

from benchmarks.emulator import ADMIN_TOKEN
from devstack.aws import MotoEmulator
from devstack.template import Template, create_resources
from knowledge_service.identity.principal import Permission, Principal, ProjectRole, token_hash
from knowledge_service.models import KnowledgeSettings
from local_engine.double import start_double

TEMPLATE = Template()
MB = 1024 * 1024
BATCH_FILES = 2  # large parts: a part read whole would show at once
BATCH_BYTES = 100 * MB
LIMIT_MIB = 128

_CHILD = textwrap.dedent(
    """
    import json, sys, time
    from devstack.events import rest_event
    from devstack.lambdas import FakeLambdaContext, load_handler
    from devstack.template import Template
    TEMPLATE = Template()

    props = TEMPLATE.functions()["IngestionFunction"]["Properties"]
    handler = load_handler(TEMPLATE.path.parent / props["CodeUri"], props["Handler"], "lambda_ingestion")
    bearer = {"Authorization": "Bearer " + sys.argv[1]}

    def call(path, body):
        event = rest_event("POST", path, resource=path, query={"project": "falcon"},
                           headers={"Content-Type": "application/json", **bearer}, body=json.dumps(body))
        context = FakeLambdaContext("IngestionFunction")
        context.timeout_seconds = 29.0
        return handler(event, context)

    files = json.loads(sys.stdin.readline())
    opened = call("/knowledge/upload/sessions", {"files": files})
    print(opened["body"], flush=True)
    sys.stdin.readline()  # the parts are staged
    def status_kib(name):
        for line in open("/proc/self/status"):
            if line.startswith(name + ":"):
                return int(line.split()[1])
        return 0
    before = status_kib("VmRSS")
    started = time.monotonic()
    session = json.loads(opened["body"])["data"]["session_id"]
    committed = call("/knowledge/upload", {"session_id": session})
    seconds = time.monotonic() - started
    peak = status_kib("VmHWM")
    print(json.dumps({"status": committed["statusCode"], "body": json.loads(committed["body"]),
                      "rss_before_commit_kib": before, "peak_rss_kib": peak, "commit_seconds": seconds}), flush=True)
    """
)


def measure() -> dict[str, Any]:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto's per-request lines
    moto = MotoEmulator(port=0)
    moto.start()
    try:
        with start_double(port=0, control_port=0) as sim:  # a fresh random token
            return _run(moto.url, sim.url, sim.token, sim)
    finally:
        moto.stop()


def _run(aws_url: str, forager_url: str, token: str, sim: Any) -> dict[str, Any]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        **TEMPLATE.function_environment("IngestionFunction"),
        "AWS_ENDPOINT_URL": aws_url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        "LOG_LEVEL": "WARNING",
    }
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        from knowledge_service.runtime import reset_runtime, runtime

        reset_runtime()
        create_resources(TEMPLATE, boto3.client("dynamodb"), boto3.client("s3"), boto3.client("events"))
        rt = runtime()
        rt.config.save_settings(KnowledgeSettings(knowledge_enabled=True, knowledge_forager_endpoint=forager_url))
        rt.credentials.write(token)
        rt.projects.create("falcon", "colony")
        rt.config.bind("falcon", "falcon", "bench")
        rt.principals.create(
            Principal(name="bench", permissions=frozenset(Permission), project_roles={"falcon": ProjectRole.OPERATOR}),
            token_hash(ADMIN_TOKEN),
        )
        reset_runtime()
    finally:
        os.environ.clear()
        os.environ.update(saved)

    size = BATCH_BYTES // BATCH_FILES
    files = [{"name": f"batch/part-{i:02d}.bin", "size_bytes": size} for i in range(BATCH_FILES)]
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, ADMIN_TOKEN],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(json.dumps(files) + "\n")
    child.stdin.flush()
    opened = json.loads(child.stdout.readline())
    if not opened.get("success"):
        child.kill()
        raise RuntimeError(f"the session was not opened: {opened}")
    block = os.urandom(MB)
    for part in opened["data"]["parts"]:
        body = block * (part["size_bytes"] // MB)
        httpx.put(part["url"], content=body, headers=part["headers"], timeout=120).raise_for_status()
    staged_at = time.monotonic()
    child.stdin.write("staged\n")
    child.stdin.flush()
    line = child.stdout.readline()
    _, errors = child.communicate(timeout=120)
    if not line:
        raise RuntimeError(f"the commit did not answer: {errors[-2000:]}")
    result = json.loads(line)
    upload = next(r for r in sim.requests if r["path"] == "/api/projects/falcon/uploads")
    return {
        "route": "POST /knowledge/upload (S3 session commit)",
        "files": BATCH_FILES,
        "batch_bytes": BATCH_BYTES,
        "status": result["status"],
        "job_status": (result["body"].get("data") or {}).get("status"),
        "forwarded_content_length": int(upload["headers"].get("Content-Length", 0)),
        "rss_before_commit_mib": round(result["rss_before_commit_kib"] / 1024, 1),
        "peak_rss_mib": round(result["peak_rss_kib"] / 1024, 1),
        "limit_mib": LIMIT_MIB,
        "under_limit": result["peak_rss_kib"] / 1024 < LIMIT_MIB,
        "commit_seconds": round(result["commit_seconds"], 2),
        "wall_seconds": round(time.monotonic() - staged_at, 2),
    }


if __name__ == "__main__":
    print(json.dumps(measure(), indent=2))
