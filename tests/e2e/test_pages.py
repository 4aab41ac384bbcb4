"""Knowledge base pages over HTTP against the local stack, as the human's wiki calls them:
every route, and every row of the Refusals table."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.localstack import LocalStack, bearer, launch_stack

pytestmark = pytest.mark.e2e

KB = "/api/v1/projects/falcon/kb"
PAGE = "---\ntype: Runbook\ntitle: Deploy the hub\n---\n# Deploy\n"


@pytest.fixture
def base(stack: LocalStack) -> str:
    """A fresh directory of the shared stack's falcon base, for one test."""
    return f"t-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def kb(http: httpx.Client, stack: LocalStack) -> httpx.Client:
    http.headers.update(bearer(stack.admin_token))
    return http


def put(kb: httpx.Client, path: str, content: str = PAGE, **guard: str) -> dict[str, Any]:
    answer = kb.put(f"{KB}/pages/{path}", json={"content": content, **guard})
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def refused(answer: httpx.Response, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"] == code


def test_put_get_list_and_delete_a_page(kb: httpx.Client, base: str) -> None:
    written = put(kb, f"{base}/./svc/../deploy.md")
    assert written["path"] == f"/fs/{base}/deploy.md" and written["lint"] == []
    text = kb.put(f"{KB}/pages/fs/{base}/notes.md", content=b"plain notes\n", headers={"Content-Type": "text/markdown"})
    assert text.status_code == 200 and text.json()["lint"][0]["code"] == "missing_frontmatter"
    got = kb.get(f"{KB}/pages/{base}/deploy.md").json()
    assert got["content"] == PAGE and got["last_write"]["actor"] == "human"
    level = kb.get(f"{KB}/pages", params={"prefix": base}).json()
    assert [e["path"] for e in level["entries"]] == [f"/fs/{base}/deploy.md", f"/fs/{base}/notes.md"]
    meta = kb.get(f"{KB}/pages", params={"prefix": base, "meta": "1"}).json()["entries"]
    assert meta[0]["title"] == "Deploy the hub" and meta[0]["trust"] == "unverified"
    assert kb.delete(f"{KB}/pages/{base}/notes.md").json() == {"ok": True, "path": f"/fs/{base}/notes.md"}
    refused(kb.get(f"{KB}/pages/{base}/notes.md"), 404, "not_found")


def test_review_revert_versions_and_history(kb: httpx.Client, base: str) -> None:
    one = put(kb, f"{base}/p.md")
    reviewed = kb.post(f"{KB}/pages/{base}/p.md/review", json={"if_version": one["version"]})
    assert reviewed.status_code == 200, reviewed.text
    meta = kb.get(f"{KB}/pages", params={"prefix": base, "meta": "1"}).json()["entries"][0]
    assert meta["trust"] == "human_reviewed" and meta["verified_by"] == "human"
    reverted = kb.post(f"{KB}/pages/{base}/p.md/revert", json={"version": one["version"]}).json()
    assert reverted["changed"] is True and reverted["version"] == one["version"]
    versions = kb.get(f"{KB}/versions", params={"path": f"{base}/p.md"}).json()
    assert [v["summary"] for v in versions["versions"]][1:] == ["reviewed", "created"]
    assert versions["versions"][0]["summary"].startswith("restored the version of ")
    old = kb.get(f"{KB}/pages/{base}/p.md", params={"version": one["version"]}).json()
    assert old["current"] is True and old["content"] == PAGE
    history = kb.get(f"{KB}/history", params={"prefix": base, "limit": "2"}).json()
    assert [r["op"] for r in history["rows"]] == ["kb.revert", "kb.review"]
    assert history["total"] == 3 and history["truncated"] is True
    assert kb.get(f"{KB}/history", params={"prefix": base, "limit": "0"}).json()["rows"] == []
    forgotten = kb.delete(f"{KB}/versions", params={"path": f"{base}/p.md"}).json()
    assert forgotten["ok"] is True and forgotten["versions_forgotten"] == 1


def test_promote_backlinks_lint_and_stats(kb: httpx.Client, base: str, stack: LocalStack) -> None:
    put(kb, f"{base}/a.md", "---\ntype: Concept\ntitle: A\n---\n[b](b.md)\n```\n[c](c.md)\n```\n")
    put(kb, f"{base}/b.md", "---\ntype: Concept\n---\n")
    backlinks = kb.get(f"{KB}/backlinks", params={"path": f"{base}/b.md"}).json()
    assert backlinks == [{"path": f"/fs/{base}/a.md", "title": "A"}]
    findings = kb.get(f"{KB}/lint", params={"fresh": "1"}).json()["findings"]
    assert (f"/fs/{base}/a.md", "orphan_page") in {(f["path"], f["code"]) for f in findings}
    stats = kb.get(f"{KB}/stats").json()
    assert stats["pages"] >= 2 and stats["last_change_by"] == "human"
    session = f"s-{base}"
    table = stack.env["PAGES_TABLE"]
    dynamodb, s3 = stack.aws_client("dynamodb"), stack.aws_client("s3")
    dynamodb.put_item(
        TableName=table,
        Item={"pk": {"S": f"SESSION#{session}"}, "sk": {"S": "#"}, "project": {"S": "falcon"}, "name": {"S": "Night"}},
    )
    s3.put_object(Bucket=stack.env["ARCHIVE_BUCKET"], Key=f"brain/{session}/x", Body=b"# Notes\n")
    dynamodb.put_item(
        TableName=table,
        Item={
            "pk": {"S": f"SESSION#{session}"},
            "sk": {"S": "brain#/notes.md"},
            "sha256": {"S": "x"},
            "size_bytes": {"N": "8"},
        },
    )
    promoted = kb.post(
        f"{KB}/promote",
        json={"from_session_id": session, "from_path": "/notes.md", "to_path": f"{base}/n.md", "type": "Concept"},
    )
    assert promoted.status_code == 200, promoted.text
    content = kb.get(f"{KB}/pages/{base}/n.md").json()["content"]
    assert content.startswith('---\ntype: "Concept"\nsources:\n') and content.endswith("---\n# Notes\n")


# ---------------------------------------------------------------------- the Refusals table
def test_400_invalid_argument_rows(kb: httpx.Client, base: str) -> None:
    refused(kb.put(f"{KB}/pages/kv/x.md", json={"content": "x"}), 400, "invalid_argument")
    refused(kb.put(f"{KB}/pages/{base}/a%00b.md", json={"content": "x"}), 400, "invalid_argument")
    refused(kb.put(f"{KB}/pages/{base}/a%5Cb.md", json={"content": "x"}), 400, "invalid_argument")
    refused(kb.put(f"{KB}/pages/{base}/{'y' * 520}.md", json={"content": "x"}), 400, "invalid_argument")
    bad_json = kb.put(f"{KB}/pages/{base}/j.md", content=b'{"content": ', headers={"Content-Type": "application/json"})
    refused(bad_json, 400, "invalid_argument")
    refused(kb.get(f"{KB}/pages/{base}/j.md"), 404, "not_found")  # never stored as the page
    refused(kb.put(f"{KB}/pages/{base}/j.md", json={"content": "x", "other": 1}), 400, "invalid_argument")
    refused(kb.put(f"{KB}/pages/{base}/c.md", json={"content": "---\ntitle: a\x01b\n---\n"}), 400, "invalid_argument")
    put(kb, f"{base}/u.md", "---yaml\ntype: Concept\n---\n")
    refused(kb.post(f"{KB}/pages/{base}/u.md/review"), 400, "invalid_argument")
    refused(kb.post(f"{KB}/pages/{base}/u.md/review", json={"verified_by": "agent"}), 400, "invalid_argument")
    refused(kb.get(f"{KB}/history", params={"limit": "201"}), 400, "invalid_argument")
    refused(
        kb.post(f"{KB}/pages/{base}/u.md/revert", content=b"{", headers={"Content-Type": "application/json"}),
        400,
        "invalid_argument",
    )
    refused(kb.delete(f"{KB}/pages/{base}"), 400, "invalid_argument")


def test_401_on_every_route_whatever_the_body(http: httpx.Client, stack: LocalStack, base: str) -> None:
    agent = stack.principal(
        f"agent-{base}", "--kind", "agent", "--permission", "read_knowledge", "--role", "falcon=admin"
    )
    viewer = stack.principal(
        f"viewer-{base}",
        "--permission",
        "read_knowledge",
        "--permission",
        "manage_knowledge",
        "--role",
        "falcon=viewer",
    )
    calls = [
        ("GET", "/pages", None),
        ("GET", f"/pages/{base}/x.md", None),
        ("PUT", f"/pages/{base}/x.md", b"{not json"),
        ("DELETE", f"/pages/{base}/x.md", None),
        ("POST", f"/pages/{base}/x.md/review", b"{}"),
        ("POST", f"/pages/{base}/x.md/revert", b"x" * 100),
        ("POST", "/promote", b"{"),
        ("GET", "/history", None),
        ("GET", "/versions?path=x.md", None),
        ("DELETE", "/versions?path=x.md", None),
        ("GET", "/backlinks?path=x.md", None),
        ("GET", "/lint", None),
        ("GET", "/stats", None),
        ("GET", "/search?q=x", None),
    ]
    for token in (agent, viewer, None):
        for method, target, body in calls:
            headers = {"Content-Type": "application/json", **(bearer(token) if token else {})}
            answer = http.request(method, KB + target, content=body, headers=headers)
            assert answer.status_code == 401, (method, target, answer.text)


def test_a_route_that_reads_no_body_refuses_one_as_knowledge_does(kb: httpx.Client, base: str) -> None:
    # Given a page, and routes that read no body: delete a page, forget its history, list pages
    put(kb, f"{base}/kept.md")
    body = {"content": b'{"path": "/fs/elsewhere.md"}', "headers": {"Content-Type": "application/json"}}
    # When each is sent a body
    deleted = kb.request("DELETE", f"{KB}/pages/{base}/kept.md", **body)  # type: ignore[arg-type]
    forgotten = kb.request("DELETE", f"{KB}/versions", params={"path": f"{base}/kept.md"}, **body)  # type: ignore[arg-type]
    listed = kb.request("GET", f"{KB}/pages", params={"prefix": base}, **body)  # type: ignore[arg-type]
    # Then each is 400 naming the body, and the page and its history are untouched
    for answer in (deleted, forgotten, listed):
        refused(answer, 400, "invalid_argument")
        assert "body" in answer.json()["detail"], answer.text
    assert kb.get(f"{KB}/pages/{base}/kept.md").status_code == 200
    assert kb.request("DELETE", f"{KB}/pages/{base}/kept.md", content=b"{}").status_code == 200  # {} reads as none


def test_404_rows(kb: httpx.Client, base: str) -> None:
    refused(kb.get(f"{KB}/pages/{base}/none.md"), 404, "not_found")
    refused(kb.delete(f"{KB}/pages/{base}/none.md"), 404, "not_found")
    one = put(kb, f"{base}/v.md")
    refused(kb.get(f"{KB}/pages/{base}/v.md", params={"version": "sha256:" + "0" * 64}), 404, "not_found")
    refused(
        kb.post(f"{KB}/promote", json={"from_session_id": "none", "from_path": "/x", "to_path": "x.md"}),
        404,
        "not_found",
    )
    refused(kb.delete(f"{KB}/versions", params={"path": f"{base}/never.md"}), 404, "not_found")
    put(kb, f"{base}/v.md", "two")
    kb.delete(f"{KB}/versions", params={"path": f"{base}/v.md"})
    refused(kb.get(f"{KB}/pages/{base}/v.md", params={"version": one["version"]}), 404, "not_found")


def test_409_names_the_current_version(kb: httpx.Client, base: str) -> None:
    one = put(kb, f"{base}/g.md", "one", if_version="absent")
    answer = kb.put(f"{KB}/pages/{base}/g.md", json={"content": "x", "if_version": "absent"})
    refused(answer, 409, "conflict")
    assert answer.json()["detail"].endswith(f"current_version={one['version']}")
    kb.delete(f"{KB}/pages/{base}/g.md")
    answer = kb.put(
        f"{KB}/pages/{base}/g.md",
        params={"if_version": one["version"]},
        content=b"y",
        headers={"Content-Type": "text/plain"},
    )
    refused(answer, 409, "conflict")
    assert answer.json()["detail"].endswith("current_version=absent")


def test_413_and_415(kb: httpx.Client, base: str) -> None:
    big = b"a" * (1024 * 1024 + 1)
    refused(
        kb.put(f"{KB}/pages/{base}/big.md", content=big, headers={"Content-Type": "text/markdown"}),
        413,
        "payload_too_large",
    )
    huge = b"{" + b" " * (4 * 1024 * 1024 + 1)
    refused(
        kb.put(f"{KB}/pages/{base}/big.md", content=huge, headers={"Content-Type": "application/json"}),
        413,
        "payload_too_large",
    )
    refused(kb.get(f"{KB}/pages/{base}/big.md"), 404, "not_found")
    refused(
        kb.put(f"{KB}/pages/{base}/x.md", content=b"<x/>", headers={"Content-Type": "application/xml"}),
        415,
        "invalid_argument",
    )


@pytest.fixture(scope="module")
def serial_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    """A stack that runs one invocation at a time (``DEVSTACK_CONCURRENCY=1``): moto's
    transactions are not isolated between threads, so a race is judged as the issue sets it,
    against an emulator in one thread, where requests interleave atomically."""
    previous = os.environ.get("DEVSTACK_CONCURRENCY")
    os.environ["DEVSTACK_CONCURRENCY"] = "1"
    try:
        with launch_stack(tmp_path_factory.mktemp("serial")) as running:
            yield running
    finally:
        if previous is None:
            os.environ.pop("DEVSTACK_CONCURRENCY", None)
        else:
            os.environ["DEVSTACK_CONCURRENCY"] = previous


def test_two_writers_racing_with_the_same_if_version(serial_stack: LocalStack) -> None:
    kb = httpx.Client(base_url=serial_stack.url, headers=bearer(serial_stack.admin_token), timeout=30.0)
    base = f"t-{uuid.uuid4().hex[:10]}"
    version = put(kb, f"{base}/race.md", "base")["version"]
    # The long run is tests/pages/test_pages_routes.py (200 trials in make deep), against the emulator in one thread.
    trials = 20
    with ThreadPoolExecutor(max_workers=2) as pool:
        for trial in range(trials):
            answers = list(
                pool.map(
                    lambda n, v=version, t=trial: kb.put(
                        f"{KB}/pages/{base}/race.md", json={"content": f"{t}-{n}", "if_version": v}
                    ),
                    (1, 2),
                )
            )
            assert sorted(a.status_code for a in answers) == [200, 409], trial
            version = next(a.json()["version"] for a in answers if a.status_code == 200)
