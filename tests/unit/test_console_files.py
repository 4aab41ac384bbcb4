"""The console's files: served from the function's own package under ``/console/``, to anyone,
with a strict Content-Security-Policy, an ETag, and nothing but the package's text files."""

from __future__ import annotations

import gzip
import json

import pytest

from devstack.gateway import Gateway, HttpAnswer
from devstack.lambdas import FunctionHost
from devstack.template import Template
from knowledge_service.edge.routes.console import content_security_policy, upload_origin
from knowledge_service.runtime import Runtime

STATIC = Template().path.parent / "functions" / "console" / "static"


@pytest.fixture
def gateway(aws: Runtime) -> Gateway:
    template = Template()
    return Gateway.from_template(template, FunctionHost(template).invoke)


def get(gateway: Gateway, target: str, *headers: tuple[str, str]) -> HttpAnswer:
    return gateway.handle("GET", target, list(headers), b"")


def test_the_console_is_its_index_page_at_both_spellings_to_anyone(gateway: Gateway) -> None:
    index = (STATIC / "index.html").read_bytes()
    for target in ("/console", "/console/", "/console/index.html"):
        answer = get(gateway, target)
        assert (answer.status, answer.body) == (200, index), target
        assert answer.header("Content-Type") == "text/html; charset=utf-8"


def test_every_file_carries_the_strict_policy_and_is_revalidated(gateway: Gateway) -> None:
    answer = get(gateway, "/console/")
    policy = answer.header("Content-Security-Policy")
    assert policy == content_security_policy(upload_origin())
    directives = dict(d.split(" ", 1) for d in policy.split("; "))  # type: ignore[union-attr]
    assert directives["script-src"] == directives["style-src"] == "'self'"  # no inline script or style, no other origin
    assert directives["default-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
    assert "unsafe" not in policy  # type: ignore[operator]
    # the one other origin: the staging bucket's, where an upload session's presigned PUTs go
    bucket = Template().physical_name("ArchiveBucket")
    assert directives["connect-src"] == f"'self' https://{bucket}.s3.amazonaws.com"
    assert [d for d in directives.values() if "http" in d] == [directives["connect-src"]]
    assert answer.header("X-Content-Type-Options") == "nosniff"
    assert answer.header("Cache-Control") == "no-cache"
    etag = answer.header("ETag")
    again = get(gateway, "/console/", ("If-None-Match", str(etag)))
    assert (again.status, again.body) == (304, b"")


def test_every_shipped_file_is_served_with_its_type(gateway: Gateway) -> None:
    files = [p for p in STATIC.rglob("*") if p.is_file()]
    assert files
    for path in files:
        relative = path.relative_to(STATIC).as_posix()
        answer = get(gateway, f"/console/{relative}")
        assert (answer.status, answer.body) == (200, path.read_bytes()), relative


@pytest.mark.parametrize(
    "target",
    [
        "/console/nothing.js",
        "/console/../template.yaml",
        "/console/%2e%2e/app.py",
        "/console/..%2fapp.py",
        "/console/.hidden",
        "/console/a/b/c/d.js",  # deeper than any file of the console
        "/console/app.py",  # not a kind of file the console is made of
        "/console/" + "a" * 300 + ".js",
    ],
)
def test_nothing_but_a_file_of_the_console_is_served(gateway: Gateway, target: str) -> None:
    answer = get(gateway, target)
    assert answer.status in (403, 404), (target, answer.status)
    assert b"lambda_handler" not in answer.body and b"AWSTemplateFormatVersion" not in answer.body


def test_answers_over_a_kibibyte_are_gzip_compressed_for_a_client_that_accepts_it(gateway: Gateway) -> None:
    """The API's MinimumCompressionSize, as API Gateway applies it (the local stack does the same)."""
    large = max((p for p in STATIC.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    target = f"/console/{large.relative_to(STATIC).as_posix()}"
    plain = get(gateway, target)
    assert plain.header("Content-Encoding") is None
    packed = get(gateway, target, ("Accept-Encoding", "gzip, deflate, br"))
    if len(plain.body) >= 1024:
        assert packed.header("Content-Encoding") == "gzip"
        assert gzip.decompress(packed.body) == plain.body
    refused = get(gateway, target, ("Accept-Encoding", "gzip;q=0"))
    assert refused.header("Content-Encoding") is None


def test_a_miss_under_console_is_the_envelope_s_404(gateway: Gateway) -> None:
    answer = get(gateway, "/console/nothing.js")
    assert answer.status == 404
    assert json.loads(answer.body)["code"] == "not_found"


@pytest.mark.parametrize(
    ("size", "accept", "encoded"),
    [
        (1024, "gzip", True),
        (1023, "gzip", False),  # under the API's MinimumCompressionSize
        (5000, "deflate, br", False),
        (5000, "GZIP;q=0.5", True),
        (5000, "gzip;q=0", False),
        (5000, "", False),
    ],
)
def test_the_local_gateway_compresses_as_api_gateway_does(size: int, accept: str, encoded: bool) -> None:
    from devstack.gateway import compressed

    body = b"x" * size
    answer = compressed(HttpAnswer(200, [("Content-Type", "text/plain")], body), [("Accept-Encoding", accept)], 1024)
    assert (answer.header("Content-Encoding") == "gzip") is encoded
    assert (gzip.decompress(answer.body) if encoded else answer.body) == body
