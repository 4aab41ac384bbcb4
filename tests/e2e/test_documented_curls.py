"""Every curl in README.md and docs/api.md, and the README's ``kb`` round trip, work as
pasted against a local stack.

Each command is read from the documents, its token and URL substituted, and sent as curl
would send it: ``-d`` with no ``Content-Type`` goes as form encoding, which the edge reads
as JSON when the body is a JSON object. A command followed by a ``# {"success": false ...}``
line must answer exactly that refusal; every other must answer the envelope, never a 5xx
and never a refusal of its ``Content-Type`` or of a field curl's encoding made up.

The README's ``kb`` block runs as one bash script, unchanged but for the documented URL,
in an empty folder: ``$TOKEN`` is the stack's admin token (the README's line before it sets
it), and ``uv run`` runs the command in this test's own environment (the locked one).

The walk binds, unbinds, makes a knowledge base, seeds and syncs, so it runs on a stack of
its own rather than the session's shared one; the ``kb`` round trip shares it. The README's
second stack starts beside that one with the README's variables, and its second terminal's
``knowledge-admin --local`` finds it by ``DEVSTACK_STATE_DIR`` alone.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests import secrets
from tests.localstack import ROOT, LocalStack, _wait_until_ready, bearer, free_port, launch_stack

pytestmark = pytest.mark.e2e

DOCUMENTS = ("README.md", "docs/api.md")
DOCUMENTED_URL = "http://127.0.0.1:3000"
DEMO_RECORD = re.compile(r"/(?:ki|ent|cf|src|mc)_[0-9a-f]{16}(?:/|$)")
"""A record id written out in a document: it must name a record of the demo the stack starts with."""
NOT_A_RECORD = "0123456789abcdef"
"""What a ``<id>`` placeholder becomes: well-formed, naming nothing."""


@dataclass(frozen=True)
class Documented:
    source: str
    command: str  # one line, as a shell would join it
    expected: dict[str, object] | None  # the refusal the document prints after it, if any


@dataclass(frozen=True)
class Curl:
    method: str
    url: str
    headers: dict[str, str]
    data: str | None


def shell_blocks(text: str) -> Iterator[list[str]]:
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL):
        yield block.splitlines()


def documented_curls(document: str) -> list[Documented]:
    found: list[Documented] = []
    for lines in shell_blocks((ROOT / document).read_text()):
        index = 0
        while index < len(lines):
            line = lines[index]
            index += 1
            if not line.lstrip().startswith("curl "):
                continue
            command = line
            while command.rstrip().endswith("\\"):
                command = command.rstrip()[:-1] + " " + lines[index].strip()
                index += 1
            following = lines[index].strip() if index < len(lines) else ""
            expected = json.loads(following[1:]) if following.startswith('# {"success"') else None
            found.append(Documented(f"{document}: {command.strip()}", command.strip(), expected))
    return found


def parse(command: str) -> Curl:
    """The request curl sends for ``command`` (the options the documents use, no others)."""
    words = shlex.split(command)
    words = words[: words.index("|")] if "|" in words else words
    assert words[0] == "curl", command
    method, url, headers, data = "GET", "", {}, None
    args = iter(words[1:])
    for word in args:
        if word in ("-s", "-sL", "-L"):  # quiet; a redirect (an export's archive) is not followed here
            continue
        if word == "-o":  # where curl would write the answer
            next(args)
            continue
        if word == "-H":
            name, _, value = next(args).partition(":")
            headers[name.strip()] = value.strip()
        elif word == "-X":
            method = next(args)
        elif word in ("-d", "--data-binary"):
            data = next(args)
            if word == "--data-binary" and data.startswith("$"):  # bash's $'...': escapes as C reads them
                data = data[1:].encode().decode("unicode_escape")
            method = "POST" if method == "GET" else method
        elif word.startswith("http"):
            url = word
        else:
            raise AssertionError(f"the test does not know curl's {word!r} ({command}); teach it")
    if data is not None and not any(name.lower() == "content-type" for name in headers):
        headers["Content-Type"] = "application/x-www-form-urlencoded"  # what curl -d declares
    return Curl(method, url, headers, data)


def substitute(text: str, stack: LocalStack) -> str:
    values = {
        "TOKEN": stack.admin_token,
        "T": stack.admin_token,
        "ADMIN": stack.admin_token,
        "H": f"Authorization: Bearer {stack.admin_token}",
        "API": stack.url,
        "W": "falcon",  # the verbs' workspace: a project of the local stack
        "C": "cap_" + "0" * 24,  # a capture the shell took from an earlier answer: none here (404)
        "KB": f"{stack.url}/api/v1/projects/falcon/kb",  # the pages of project falcon
    }
    text = re.sub(r"\$\{?([A-Z]+)\}?", lambda m: values[m.group(1)], text)
    return text.replace(DOCUMENTED_URL, stack.url).replace("<id>", NOT_A_RECORD)


ENVELOPED = ("/knowledge", "/modules", "/settings")
"""The surface that answers the envelope; the pages and the verbs keep their own wire shapes."""

CURLS = [curl for document in DOCUMENTS for curl in documented_curls(document)]
LOCAL = [curl for curl in CURLS if "forager.internal" not in curl.command]
"""The README's remote-FORAGER example is for a deployment that allows that host."""


def readme_blocks(marker: str) -> list[list[str]]:
    """The README's shell blocks with a line that holds ``marker``."""
    return [lines for lines in shell_blocks((ROOT / "README.md").read_text()) if any(marker in x for x in lines)]


def readme_kb_block() -> list[str]:
    """The README's one shell block that runs the ``kb`` command."""
    blocks = readme_blocks("uv run kb ")
    assert len(blocks) == 1, "the README shows one kb round trip"
    return blocks[0]


def run_as_pasted(
    block: list[str], stack: LocalStack, cwd: Path, *, link_state: bool = True
) -> subprocess.CompletedProcess[str]:
    """``block`` run by bash in ``cwd`` as a reader pastes it into the shell where ``make run``'s
    token is ``$TOKEN``: the documented URL is the stack's, ``.devstack`` (what
    ``knowledge-admin --local`` reads) is the stack's state unless the block names its own
    (``link_state=False``), and ``uv run`` runs the command in this test's own environment (the
    locked one)."""
    if link_state and not (cwd / ".devstack").is_symlink():  # the workspace's walks share one link
        (cwd / ".devstack").symlink_to(stack.state_dir, target_is_directory=True)
    script = "\n".join(block).replace(DOCUMENTED_URL, stack.url)
    prelude = 'set -euo pipefail\nuv() { [ "$1" = run ] || return 2; shift; "$@"; }\n'
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HUB_", "AWS_", "DEVSTACK_"))}
    env |= {"TOKEN": stack.admin_token, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"}
    return subprocess.run(
        ["bash", "-c", prelude + script], cwd=cwd, env=env, capture_output=True, text=True, timeout=180, check=False
    )


def test_the_documents_hold_the_curls_this_test_runs() -> None:
    assert len([c for c in CURLS if c.source.startswith("README.md")]) >= 8
    assert len([c for c in CURLS if c.source.startswith("docs/api.md")]) >= 15
    assert any(c.expected for c in CURLS)


def test_curl_d_without_a_type_is_sent_as_form_encoding() -> None:
    sent = parse("curl -s -X POST http://x/settings -d '{\"a\": 1}'")
    assert (sent.method, sent.headers, sent.data) == (
        "POST",
        {"Content-Type": "application/x-www-form-urlencoded"},
        '{"a": 1}',
    )


@pytest.fixture(scope="module")
def own_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    with launch_stack(tmp_path_factory.mktemp("documented-curls")) as running:
        yield running


def test_every_documented_curl_works_as_pasted(own_stack: LocalStack) -> None:
    failures = []
    with httpx.Client(timeout=30.0) as http:
        for documented in LOCAL:
            curl = parse(substitute(documented.command, own_stack))
            answer = http.request(
                curl.method,
                curl.url,
                headers=curl.headers,
                content=None if curl.data is None else curl.data.encode(),
            )
            try:
                body = answer.json()
            except json.JSONDecodeError:
                failures.append(f"{documented.source}\n  -> {answer.status_code}, not JSON: {answer.text[:200]}")
                continue
            if documented.expected is not None:
                if (body.get("message"), body.get("code")) != (
                    documented.expected["message"],
                    documented.expected["code"],
                ):
                    failures.append(f"{documented.source}\n  -> {answer.status_code} {body}")
                continue
            if not curl.url.split(own_stack.url, 1)[-1].startswith(ENVELOPED):  # pages, verbs: their own shapes
                if answer.status_code >= 500 or not isinstance(body, dict | list):
                    failures.append(f"{documented.source}\n  -> {answer.status_code} {body}")
                continue
            refused_wrongly = str(body.get("message", "")).startswith(("Content-Type", "body: has a field"))
            names_a_record = DEMO_RECORD.search(curl.url.split("?", 1)[0]) is not None  # an id the reader can try
            if (
                answer.status_code >= 500
                or refused_wrongly
                or "success" not in body
                or (names_a_record and answer.status_code != 200)
            ):
                failures.append(f"{documented.source}\n  -> {answer.status_code} {body}")
    assert not failures, "\n".join(failures)


def test_the_readme_kb_round_trip_works_as_pasted(own_stack: LocalStack, tmp_path: Path) -> None:
    # Given the README's kb block (export, edit, import) and an empty folder to run it in
    block = readme_kb_block()
    assert {"kb export", "kb import"} <= {word for line in block for word in re.findall(r"kb \w+", line)}
    script = "\n".join(block)
    # When bash runs it as pasted
    done = run_as_pasted(block, own_stack, tmp_path)
    # Then every command succeeds, the dry run and the import say what the README says,
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    said = done.stdout.splitlines()
    for line in block:
        documented = line.partition("  # ")[2].strip()
        if documented.startswith(("would update", "update")):
            assert documented in said, f"the README says {documented!r}; kb said {said}"
    # and the hub holds the page as the folder edited it
    appended = re.search(r">> \./([^/\s]+)/(\S+)", script)
    assert appended is not None, "the README's edit appends to a page in the exported folder"
    edited = tmp_path / appended.group(1) / appended.group(2)
    assert (tmp_path / appended.group(1) / ".agent-hub-kb.json").is_file()
    page = httpx.get(
        f"{own_stack.url}/api/v1/projects/falcon/kb/pages/fs/{appended.group(2)}",
        headers={"Authorization": f"Bearer {own_stack.admin_token}"},
        timeout=30.0,
    )
    assert page.status_code == 200, page.text
    assert page.json()["content"] == edited.read_text()
    assert page.json()["content"].endswith("Then sam deploy.\n")


def test_the_readmes_own_documents_walk_answers_with_evidence_as_pasted(own_stack: LocalStack) -> None:
    # Given the README's walk (a folder in the workspace, imported by path, searched, retrieved)
    (block,) = readme_blocks("my-notes")
    # When bash runs it as pasted in the workspace
    done = run_as_pasted(block, own_stack, own_stack.workspace)
    # Then the search answers the file's statement and the retrieval quotes it with its place
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    sentence = "The harbour ferry leaves pier four at nine every morning."
    assert done.stdout.splitlines()[0] == sentence
    assert f'evidence: my-notes/ferry.md line 3: "{sentence}"' in done.stdout
    assert f'`evidence: my-notes/ferry.md line 3: "{sentence}"`' in (ROOT / "README.md").read_text()


def test_the_readmes_admin_commands_work_as_pasted(own_stack: LocalStack, tmp_path: Path) -> None:
    # Given each README block that runs knowledge-admin against the local stack (principals,
    # an agent's mission); the deployment's --stack block needs an AWS account and is left out
    blocks = [
        b
        for b in readme_blocks("uv run knowledge-admin --local ")
        if not any("DEVSTACK_" in x for x in b) and b != readme_walk()
    ]
    assert len(blocks) >= 2  # the second stack's block and the own-project walk run below, each once
    for number, block in enumerate(blocks):
        # When bash runs it as pasted, in a folder of its own
        here = tmp_path / str(number)
        here.mkdir()
        done = run_as_pasted(block, own_stack, here)
        # Then every command in it succeeds
        assert done.returncode == 0, f"{block}\nexit {done.returncode}\n{done.stdout}\n{done.stderr}"


def readme_walk() -> list[str]:
    """The README's "your own project" block: the one that makes a project and its knowledge base."""
    [walk] = [
        b for b in readme_blocks("/knowledge/bases") if any("knowledge-admin --local project create" in x for x in b)
    ]
    return walk


def test_the_readmes_own_project_walk_works_as_pasted(own_stack: LocalStack) -> None:
    # Given the README's walk: a project, its admin role for the admin, its knowledge base, bound,
    # a folder of the workspace imported into it and searched
    assert shutil.which("curl") and shutil.which("jq"), "the walk runs curl and jq as a reader does"
    walk = readme_walk()
    [project] = re.findall(r"project create (\S+)", " ".join(walk))
    assert f"principal grant local-admin --role {project}=admin" in " ".join(walk)
    readme = (ROOT / "README.md").read_text()
    after = readme[readme.index("\n".join(walk)) :].split("```", 1)[1]
    assert after.strip().startswith("Run it from the workspace"), "the README says where it runs"
    # When bash runs it as pasted, in the workspace
    done = run_as_pasted(walk, own_stack, own_stack.workspace)
    # Then every command succeeds, the knowledge base made is printed,
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    made = json.loads(done.stdout.splitlines()[0])
    assert isinstance(made, str) and made, done.stdout
    # and the project reads it: the binding the last command shows, the base FORAGER holds
    admin = bearer(own_stack.admin_token)
    bindings = httpx.get(f"{own_stack.url}/knowledge/project-map", headers=admin, timeout=30.0).json()["data"]
    assert {"project": project, "knowledge_base": made} in [
        {"project": b["project"], "knowledge_base": b["knowledge_base"]} for b in bindings["bindings"]
    ]
    assert json.loads("\n".join(done.stdout.splitlines()[1:-1]))["knowledge_base"] == made
    # and the folder imported into it answers its search with the file's statement
    assert done.stdout.splitlines()[-1] == "High tide at the north pier comes forty minutes after the harbour mouth."
    bases = httpx.get(f"{own_stack.url}/knowledge/projects", headers=admin, timeout=30.0).json()["data"]
    assert made in [b["project_ref"] for b in bases["projects"]]


def test_without_the_grant_the_walk_is_refused_as_the_readme_says(own_stack: LocalStack) -> None:
    # Given a project of the colony made by the admin, who owns the colony but holds no role on it
    own_stack.admin("project", "create", "no-grant-docs", "--organization", "colony")
    # When the admin makes its knowledge base
    answer = httpx.post(
        f"{own_stack.url}/knowledge/bases",
        headers=bearer(own_stack.admin_token),
        json={"name": "Refused", "project": "no-grant-docs"},
        timeout=30.0,
    )
    # Then it is the 403 the README names, and nothing is bound
    body = answer.json()
    assert (answer.status_code, body["code"]) == (403, "permission_denied"), body
    assert "takes that project's admin role" in body["message"]
    assert '"takes that project\'s admin role"' in (ROOT / "README.md").read_text()


PORTS = ("DEVSTACK_PORT", "DEVSTACK_MOTO_PORT", "DEVSTACK_FORAGER_PORT")
"""The ports a second ``make run`` moves (the engine's control port is closed there: tests only)."""
STACK_KNOBS = (
    *PORTS,
    "DEVSTACK_FORAGER_CONTROL_PORT",
    "DEVSTACK_ENGINE_CONTROL",
    "DEVSTACK_STATE_DIR",
    "DEVSTACK_WORKSPACE",
)
"""Every variable of ``make run`` a person needs, named in the README's table."""


def readme_knobs() -> dict[str, str]:
    """The README's table of ``make run``'s variables: each one's documented default."""
    rows = re.findall(r"^\| `(DEVSTACK_[A-Z_]+)` \| ([^|]+) \|", (ROOT / "README.md").read_text(), re.MULTILINE)
    return {name: default.strip().strip("`") for name, default in rows}


@contextmanager
def started_as_pasted(block: list[str], cwd: Path, ports: dict[str, int]) -> Iterator[LocalStack]:
    """The README's ``make run`` line run by bash in ``cwd``, as a person pastes it, until the block
    ends: ``make run`` is what it runs once installed (``python -m devstack``, in this test's
    environment), and each documented port is ``ports``' (the test machine may hold the documented
    ones)."""
    script = "\n".join(block)
    for name, port in ports.items():
        script = re.sub(rf"\b{name}=\d+", f"{name}={port}", script)
    prelude = 'make() { [ "$1" = run ] || return 2; exec "$PYTHON" -m devstack; }\n'
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FORAGER_", "DEVSTACK_"))}
    env["PYTHON"] = sys.executable
    log = cwd / "make-run.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            ["bash", "-c", prelude + script], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, text=True
        )
    state = cwd / dict(re.findall(r"\b(DEVSTACK_STATE_DIR)=(\S+)", script))["DEVSTACK_STATE_DIR"]
    try:
        url = f"http://127.0.0.1:{ports['DEVSTACK_PORT']}"
        _wait_until_ready(url, process, log)
        if (state / "simulator.token").is_file():
            secrets.register((state / "simulator.token").read_text().strip())
        yield LocalStack(url, "", state, (state / "admin.token").read_text().strip(), process)  # no control port
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
    assert secrets.scan_stack_log(log) == [], "a secret leaked into the second stack's log"


def test_a_second_stack_runs_beside_the_first_with_the_readmes_knobs(own_stack: LocalStack, tmp_path: Path) -> None:
    # Given the README's table of make run's variables and its second stack's make run line
    knobs = readme_knobs()
    assert set(STACK_KNOBS) <= set(knobs), f"the README's table names {sorted(knobs)}"
    [started] = [b for b in readme_blocks("make run") if any("DEVSTACK_STATE_DIR=" in x for x in b)]
    line = " ".join(x.rstrip("\\").strip() for x in started)
    assert line.endswith(" make run"), line
    variables = dict(re.findall(r"\b(DEVSTACK_[A-Z_]+)=(\S+)", line))
    assert set(variables) == {*PORTS, "DEVSTACK_STATE_DIR"}, variables
    # (its ports differ from the defaults, which the first stack holds on a laptop)
    assert all(variables[port] != knobs[port] for port in PORTS), variables
    # When bash runs it as pasted, from a folder of the person's own, beside the first
    with started_as_pasted(started, tmp_path, {port: free_port() for port in PORTS}) as second:
        # Then both answer, each with its own admin token and its own tables, its state where it said
        assert second.state_dir == tmp_path / variables["DEVSTACK_STATE_DIR"]
        for stack in (own_stack, second):
            status = httpx.get(f"{stack.url}/knowledge/status", headers=bearer(stack.admin_token), timeout=30.0)
            assert status.status_code == 200, status.text
        assert second.admin_token != own_stack.admin_token
        assert second.env["PRINCIPALS_TABLE"] and second.env["AWS_ENDPOINT_URL"] != own_stack.env["AWS_ENDPOINT_URL"]
        # and the README's second terminal reaches the second stack with DEVSTACK_STATE_DIR alone
        [terminal] = [b for b in readme_blocks("uv run knowledge-admin --local ") if any("DEVSTACK_" in x for x in b)]
        second.principal("second-only")  # a principal the first stack does not hold
        done = run_as_pasted(terminal, second, tmp_path, link_state=False)
        assert not (tmp_path / ".devstack").exists()
        assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        assert "second-only" in done.stdout
