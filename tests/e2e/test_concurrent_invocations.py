"""Concurrent traffic against ``python -m devstack``: every answer, and every stored body,
belongs to its own request (issue 25).

Lambda runs one invocation at a time in an execution environment; the local stack must too
(``devstack/README.md``, "Execution environments"). The traffic mixes every route group, each
with the admin token and with none, and page writes with distinct bodies: a request sent with
no token is always 401 and never stored, an admin write is stored with exactly its own body,
``GET kb/stats`` interleaved is always 200. With one process serving a function's concurrent
calls from threads, Powertools' class-level ``current_event`` handed one request's headers and
body to another, and this test failed.
"""

from __future__ import annotations

import random
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.localstack import LocalStack, bearer, launch_stack

pytestmark = pytest.mark.e2e

KB = "/api/v1/projects/falcon/kb"
PAIRS = 20


@dataclass(frozen=True)
class Call:
    """One request of the mix and what its own answer must be."""

    method: str
    path: str
    admin: bool
    expect: int
    json: Any = None
    params: dict[str, str] = field(default_factory=dict)

    def send(self, client: httpx.Client, token: str) -> httpx.Response:
        headers = bearer(token) if self.admin else {}
        return client.request(self.method, self.path, json=self.json, params=self.params, headers=headers)


# One route of every route group the API serves, asked with the admin token (its own answer)
# and with none (401 from the function's own authentication).
GROUPS: list[tuple[str, str, Any, dict[str, str], int]] = [
    ("GET", "/knowledge/status", None, {}, 200),  # StatusFunction
    ("GET", "/knowledge/projects", None, {}, 200),  # BindingsFunction
    ("GET", "/knowledge/search", None, {"project": "falcon", "q": "deploy"}, 200),  # ReadsFunction
    ("GET", "/knowledge/feed", None, {"project": "falcon"}, 200),  # FeedFunction
    ("GET", "/knowledge/changes", None, {"project": "falcon"}, 200),  # ChangesFunction
    ("GET", "/knowledge/jobs", None, {"project": "falcon"}, 200),  # IngestionFunction
    ("POST", "/v/knowledge.list", {"limit": 5}, {"workspace": "falcon"}, 200),  # VerbsFunction
    ("GET", "/knowledge/events", None, {"project": "falcon"}, 200),  # CurationFunction
    ("GET", "/knowledge/exports", None, {"project": "falcon"}, 200),  # ExportsFunction
    ("GET", f"{KB}/stats", None, {}, 200),  # PagesFunction
]


def mix(base: str) -> list[Call]:
    calls: list[Call] = []
    for i in range(PAIRS):
        calls.append(Call("PUT", f"{KB}/pages/{base}/a{i}.md", True, 200, {"content": f"# admin {base} {i}\n"}))
        calls.append(Call("PUT", f"{KB}/pages/{base}/x{i}.md", False, 401, {"content": f"# anonymous {base} {i}\n"}))
        calls.append(Call("GET", f"{KB}/stats", True, 200))
    for method, path, body, params, status in GROUPS:
        for _ in range(2):
            calls.append(Call(method, path, True, status, body, params))
            calls.append(Call(method, path, False, 401, body, params))
    random.Random(base).shuffle(calls)
    return calls


def test_mixed_concurrent_traffic_answers_each_request_its_own_answer(stack: LocalStack) -> None:
    # The shared stack: the pages it writes sit under a base of their own, the rest only reads.
    base = f"c-{uuid.uuid4().hex[:8]}"
    calls = mix(base)
    with httpx.Client(base_url=stack.url, timeout=60.0) as client, ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(lambda call: call.send(client, stack.admin_token), calls))

        wrong = [
            f"{c.method} {c.path} ({'admin' if c.admin else 'no token'}): {a.status_code} {a.text[:160]}"
            for c, a in zip(calls, answers, strict=True)
            if a.status_code != c.expect
        ]
        assert wrong == [], "\n".join(wrong)

        admin = bearer(stack.admin_token)
        for i in range(PAIRS):
            mine = client.get(f"{KB}/pages/{base}/a{i}.md", headers=admin)
            assert mine.status_code == 200, mine.text
            assert mine.json()["content"] == f"# admin {base} {i}\n"
            never = client.get(f"{KB}/pages/{base}/x{i}.md", headers=admin)
            assert never.status_code == 404, never.text
        listed = client.get(f"{KB}/pages", params={"prefix": base}, headers=admin).json()
        assert sorted(e["path"] for e in listed["entries"]) == sorted(f"/fs/{base}/a{i}.md" for i in range(PAIRS))


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_kill_9_of_the_stack_leaves_no_execution_environment_behind(tmp_path: Path) -> None:
    # A stack of its own: the test kills it.
    with launch_stack(tmp_path) as running, httpx.Client(base_url=running.url, timeout=60.0) as client:
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(lambda _: client.get(f"{KB}/stats", headers=bearer(running.admin_token)), range(8)))
        environments = _descendants(running.process.pid)
        assert len(environments) >= 2  # the pages function's zygote and at least one environment of it

        running.process.kill()
        running.process.wait()
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in environments) and time.monotonic() < deadline:
            time.sleep(0.1)

        assert [pid for pid in environments if _alive(pid)] == []
