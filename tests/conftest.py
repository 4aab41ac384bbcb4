"""Fixtures every tier shares: AWS faked by moto with tables built from template.yaml,
the FORAGER simulator on loopback, and a way to call a function as API Gateway would."""

from __future__ import annotations

import base64
import copy
import functools
import gc
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import boto3
import botocore.loaders
import botocore.session
import pytest
from boto3.dynamodb.types import TypeSerializer
from hypothesis import settings
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import dynamodb_backends

from devstack import moto_fixes
from devstack.events import rest_event
from devstack.lambdas import FakeLambdaContext, load_handler
from devstack.template import Route, Template, create_resources
from knowledge_service.identity.principal import (
    TOKEN_PREFIX,
    Permission,
    Principal,
    PrincipalKind,
    ProjectRole,
    token_hash,
)
from knowledge_service.models import KnowledgeSettings
from knowledge_service.runtime import Runtime, reset_runtime, runtime
from knowledge_service.storage.principals import PrincipalRecord
from local_engine.double import Double, start_double
from tests import secrets
from tests.export_verifier import ExportVerifier
from tests.localstack import LocalStack, launch_stack

# Hypothesis profiles (docs/testing.md, "Profiles"). No property test has a per-example deadline
# in either: a loaded machine (CI beside other work) slows an example past Hypothesis' default
# 200 ms and fails a law that held ("Unreliable test timings"). ``ci`` is the default; ``deep``
# (``make deep``, ``--hypothesis-profile=deep``) runs the large counts ``tests/budget.py`` names,
# and 1,000 examples where a property names none.
# ``ci`` is derandomized: every run draws the same examples, so what passes on a developer's machine
# passes in CI and a failure there is reproduced by running the test again. ``deep`` draws new ones
# each run: it is where laws are explored (a failure it finds is pinned as a fixed example).
settings.register_profile("ci", deadline=None, derandomize=True)
settings.register_profile("deep", deadline=None, max_examples=1_000)
settings.load_profile("ci")

# Every ``mock_aws`` test's transactions copy what they touch for their rollback, not their tables
# whole (moto's own copy was a fifth of the local stack's CPU over a run), and moto looks up what
# does not change once a process: devstack/moto_fixes.py.
moto_fixes.install()


@pytest.fixture(autouse=True, scope="session")
def _collector_on() -> None:
    """A door turns the cyclic collector off for a Lambda's init (``knowledge_service/door.py``)
    and its ``end_of_init`` turns it back on; a test module that imports the door alone, as
    some do, would leave this process running without it."""
    gc.enable()


# The longest files start first: pytest-xdist (``--dist loadfile``) hands a worker the next file
# each time it runs short, so a long file handed out late leaves the other worker idle at the end
# (the fuzz run, one test of ~130 s, was handed out last: one worker ran alone for 144 s). xdist
# sorts the files by their number of tests unless told not to (``--loadscope-reorder``, on by
# default), which put the one-test fuzz file near the end whatever this list said:
# ``pytest_configure`` turns that off. Ordered by ``--durations`` on this machine (docs/testing.md,
# "Worker balance": the files over ~20 s); files not named keep their collected order (the sort is
# stable).
LONGEST_FIRST = (
    "tests/e2e/test_fuzz.py",
    "tests/browser/test_screens.py",  # the browser tier: 80-140 s a file (one Chromium a worker)
    "tests/browser/test_console.py",
    "tests/browser/test_wiki.py",
    "tests/unit/test_fault_injection.py",
    "tests/e2e/test_kb_command.py",
    "tests/e2e/test_capacity.py",  # its own fresh stack and the mix replayed: 35-65 s
    "tests/unit/test_request_bodies.py",
    "tests/unit/test_feed_state_machine.py",
    "tests/unit/test_authorization_matrix.py",
    "tests/e2e/test_foundation.py",
    "tests/devstack/test_devstack_hard_kill.py",
    "tests/e2e/test_verbs.py",
    "tests/pages/test_pages_routes.py",
    "tests/unit/test_mcp_tools.py",
    "tests/e2e/test_curation_exports.py",
    "tests/unit/test_lean_cold_path.py",
    "tests/e2e/test_documented_curls.py",
    "tests/e2e/test_pages.py",
    "tests/devstack/test_devstack_journal.py",
    "tests/devstack/test_devstack_stack.py",
    "tests/e2e/test_mcp.py",
    "tests/pages/test_every_json_body.py",
    "tests/unit/test_verbs.py",
    "tests/unit/test_feed_restore.py",
    "tests/unit/test_bootstrap_uv.py",
    "tests/e2e/test_concurrent_invocations.py",
    "tests/unit/test_dead_letters.py",
    "tests/unit/test_dead_letter_actions.py",
    "tests/e2e/test_feed.py",
    "tests/e2e/test_invoke.py",
    "tests/unit/test_exports_routes.py",
    "tests/e2e/test_upstream_deadline.py",
    "tests/e2e/test_generated_client.py",
)


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # keep LONGEST_FIRST's order (above)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: place for place, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


_busy: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each xdist worker's time in tests (setup, call and teardown), summed on the controller."""
    node = getattr(report, "node", None)
    if node is not None:
        _busy[node.gateway.id] = _busy.get(node.gateway.id, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _busy:
        shares = ", ".join(f"{worker} {seconds:.0f} s" for worker, seconds in sorted(_busy.items()))
        terminalreporter.write_line(f"time in tests per worker (close together when the order balances): {shares}")


@pytest.fixture(autouse=True)
def _no_metric_left_behind() -> None:
    """Powertools keeps one metric set per process (a Lambda flushes it after each invocation):
    a test that counted a metric and flushed none must not hand it to the next test's flush."""
    from aws_lambda_powertools import Metrics

    Metrics().clear_metrics()


@pytest.fixture(autouse=True, scope="session")
def _one_botocore_loader() -> Iterator[None]:
    """Every botocore session of this process reads the service models through one loader.

    ``mock_aws`` starts each test with no default boto3 session, so each test's clients made a
    new session whose loader parsed the models' JSON again (DynamoDB, S3, EventBridge, the
    endpoint rules): a fifth of a unit test's time. The models are read-only data, and one
    session already shares its loader's answers between all its clients."""

    @functools.cache
    def shared(search_path: str | None = None) -> botocore.loaders.Loader:
        return botocore.loaders.create_loader(search_path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(botocore.session, "create_loader", shared)
        yield


_CLIENT_ENVIRONMENT = (
    "AWS_ENDPOINT_URL",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_CONFIG_FILE",
)


class _KeptClients:
    """``knowledge_service.storage.aws``'s client factory, its clients kept for the process.

    The product keeps a container's boto3 clients for its life; a test forgets them with the rest
    of the runtime (``reset_runtime``) so the next one starts as a new container would, and each
    made its clients again: ~30 ms of CPU each, a few a test, over two thousand tests. A client is
    a function of the factory's arguments and of the environment it reads (endpoint, region,
    credentials, profile), so that is what a kept one is found by: a test that changes any of them
    gets a client made for it, as the product would. moto answers a client whichever ``mock_aws``
    is active (``_builder`` below relies on the same)."""

    def __init__(self, make: Callable[..., Any]) -> None:
        self._make = make
        self._made: dict[tuple[Any, ...], Any] = {}

    def __call__(self, *args: Any) -> Any:
        key = (args, tuple(os.environ.get(name) for name in _CLIENT_ENVIRONMENT))
        if key not in self._made:
            self._made[key] = self._make(*args)
        return self._made[key]

    def cache_clear(self) -> None:
        """What ``reset_clients`` calls: nothing to forget, the environment is the key."""


@pytest.fixture(autouse=True, scope="session")
def _clients_kept_across_tests() -> Iterator[None]:
    from knowledge_service.storage import aws as clients

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(clients, "dynamodb", _KeptClients(clients.dynamodb.__wrapped__))
        patch.setattr(clients, "client", _KeptClients(clients.client.__wrapped__))
        yield


TEMPLATE = Template()

ADMIN = Principal(
    name="ada",
    permissions=frozenset(Permission),
    project_roles={"falcon": ProjectRole.ADMIN, "colony-docs": ProjectRole.ADMIN},
    organizations=frozenset({"colony"}),
)


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    env = TEMPLATE.function_environment("StatusFunction")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_DEV": "false",
    }.items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_ENDPOINT_URL", "ANTHILL_KNOWLEDGE_ENABLED", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    reset_runtime()
    yield env
    reset_runtime()


@functools.cache
def _builder(service: str) -> Any:
    """The client that builds the template's resources, made once a process: moto serves a
    client through botocore's handlers whichever ``mock_aws`` is active, so a new client each
    test (~40 ms each under load) bought nothing."""
    session = boto3.session.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
    )
    return session.client(service)  # type: ignore[call-overload]


_empty_tables: dict[str, Any] = {}
"""The template's tables as moto holds them just made, empty: taken once a process (below)."""


def template_resources() -> None:
    """Inside a fresh ``mock_aws``: every table, bucket and bus ``template.yaml`` declares, empty.

    The first time in a process, ``create_resources`` makes them all through the API; moto's
    tables are then copied as made (``copy.deepcopy``, as moto itself copies a table to roll a
    transaction back), and each later time the copy is put in place before ``create_resources``
    runs, which finds the tables there and makes the bucket and the bus. Thirteen
    ``CreateTable`` and their ``UpdateTimeToLive`` through botocore and moto's dispatch were
    ~60 ms of CPU a test (0.3 s under load), in every test that touches AWS."""
    tables = dynamodb_backends[DEFAULT_ACCOUNT_ID][TEMPLATE.region].tables
    if _empty_tables:
        assert not tables, "template_resources() runs in a fresh mock_aws"
        tables.update(copy.deepcopy(_empty_tables))
    create_resources(TEMPLATE, _builder("dynamodb"), _builder("s3"), _builder("events"))
    if not _empty_tables:
        _empty_tables.update(copy.deepcopy(tables))


T = TypeVar("T")
_written_once: dict[str, tuple[Any, dict[str, Any]]] = {}
"""What :func:`written_once` made, each with the tables it wrote as moto held them after."""


def written_once(key: str, table: str, write: Callable[[], T]) -> T:
    """``write()`` into ``table`` the first time a process asks for ``key``; later, the table as
    it left then, put back in place (``copy.deepcopy``, as ``template_resources`` does).

    For a fixture whose writes are the same every test, through the product's own code the
    first time: the matrices enrol fifteen principals a test, each a read and a conditional
    put through botocore and moto, two thirds of their setup. ``write`` must start from the
    template's empty ``table`` and its answer (tokens, say) must hold for every later test."""
    tables = dynamodb_backends[DEFAULT_ACCOUNT_ID][TEMPLATE.region].tables
    if key in _written_once:
        answer, kept = _written_once[key]
        assert not len(tables[table]), f"{table} is written once by {key}: it must be empty before"
        tables[table] = copy.deepcopy(kept[table])
        return answer  # type: ignore[no-any-return]
    answer = write()
    _written_once[key] = (answer, {table: copy.deepcopy(tables[table])})
    return answer


@pytest.fixture
def aws(aws_env: dict[str, str]) -> Iterator[Runtime]:
    with mock_aws():
        template_resources()
        yield runtime()


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    """One local stack a worker, shared by every end-to-end and browser file it runs (each file
    its own project and principals; one test at a time). Declared here, at the root, so both tiers
    see the same fixture: a copy imported into a tier's conftest would be a second fixture, and a
    second stack."""
    with launch_stack(tmp_path_factory.mktemp("devstack")) as running:
        yield running


@pytest.fixture(scope="session")
def simulator() -> Iterator[Double]:
    with start_double(port=0, control_port=0, token="unit-simulator-token") as sim:
        secrets.register(sim.token)
        yield sim


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Fail a test whose logs or responses carried a secret (tests/secrets.py)."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call":
        return
    exempt = "Captured stdout" if item.get_closest_marker("prints_tokens") else None
    texts = [content for name, content in report.sections if not (exempt and name.startswith(exempt))]
    found = [leak for text in texts + secrets.drain() for leak in secrets.leaks(text)]
    if found and report.passed:
        report.outcome = "failed"
        report.longrepr = f"a secret leaked into a log line or a response body: {sorted(set(found))}"


@pytest.fixture
def forager(simulator: Double) -> Iterator[Double]:
    simulator.reset()
    yield simulator
    simulator.clear_faults()


FAULT_ANSWERS: dict[str, set[int]] = {
    "down": {503},
    "slow": {504},
    "trickle": {504},
    "stall": {504},
    "reset": {502},
    "429": {502},
    "5xx": {502},
    "malformed": {502},
    "redirect": {502},
}
"""Each upstream fault the simulator can play, and the status the edge answers it with."""

PACED_CALL_SECONDS = 0.5
"""The FORAGER call deadline ``inject_fault`` sets for ``trickle`` and ``stall``."""


@pytest.fixture
def inject_fault(forager: Double, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """Make FORAGER fail one way: down, hanging past the client's timeout, trickling its body
    a byte every 0.1 s (each read well inside any per-read timeout) or stalling after its
    headers past the call's 0.5 s deadline, resetting mid-body, rate-limiting with
    Retry-After, failing, answering malformed JSON, or redirecting."""

    def inject(mode: str) -> None:
        if mode == "slow":
            monkeypatch.setenv("FORAGER_TIMEOUT_SECONDS", "0.3")
            reset_runtime()
            forager.set_fault("slow", delay_seconds=1.0)
        elif mode in ("trickle", "stall"):
            monkeypatch.setenv("FORAGER_TIMEOUT_SECONDS", str(PACED_CALL_SECONDS))
            reset_runtime()
            forager.set_fault(mode, delay_seconds=0.1 if mode == "trickle" else 30.0)
        elif mode == "429":
            forager.set_fault("429", retry_after=3)
        else:
            forager.set_fault(mode)

    yield inject
    forager.clear_faults()


@pytest.fixture
def knowledge_on(aws: Runtime, forager: Double) -> Runtime:
    """Knowledge enabled against the simulator; projects colony-docs and falcon (colony),
    elsewhere (another organization); falcon bound to FORAGER's falcon."""
    aws.config.save_settings(KnowledgeSettings(knowledge_enabled=True, knowledge_forager_endpoint=forager.url))
    aws.credentials.write(forager.token)
    aws.projects.create("colony-docs", "colony")
    aws.projects.create("falcon", "colony")
    aws.projects.create("elsewhere", "other-org")
    aws.config.bind("falcon", "falcon", "test")
    return aws


@pytest.fixture
def export_verifier(knowledge_on: Runtime) -> ExportVerifier:
    """The template's rule for the export verifier on moto's bus, its events delivered on demand."""
    return ExportVerifier.on_the_bus(TEMPLATE)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: Any
    raw: str


def token_of(who: Principal) -> str:
    """A well-formed bearer token that stands for ``who`` (the same one every time)."""
    digest = hashlib.sha256(who.model_dump_json().encode()).digest()
    return TOKEN_PREFIX + base64.urlsafe_b64encode(digest).decode().rstrip("=")


_SERIALIZER = TypeSerializer()


@functools.cache
def _routes() -> dict[tuple[str, str], Route]:
    """The template's routes by method and path, read once a process (a walk of every function)."""
    return {(r.method, r.path): r for r in TEMPLATE.routes()}


def enrol(who: Principal, token: str | None = None) -> str:
    """Store ``who`` in the principals table (moto) under ``token`` (else :func:`token_of`)
    and return the token."""
    token = token or token_of(who)
    record = PrincipalRecord(**who.model_dump(), token_hash=token_hash(token))
    item = {k: v for k, v in record.model_dump(mode="json", exclude_none=True).items() if v not in ([], {})}
    # the process's one builder client (``_builder``): a ``boto3.resource`` made a session each time
    _builder("dynamodb").put_item(TableName=runtime().env.principals_table, Item=_SERIALIZER.serialize(item)["M"])
    return token


class Api:
    """Calls a function's handler with a REST proxy event, as API Gateway sends it, with
    ``principal``'s bearer token (enrolled in the principals table on first use)."""

    def __init__(self) -> None:
        self._routes = _routes()
        self._enrolled: dict[str, str] = {}

    def token(self, who: Principal) -> str:
        key = who.model_dump_json()
        if key not in self._enrolled:
            self._enrolled[key] = enrol(who)
        return self._enrolled[key]

    def call(
        self,
        method: str,
        path: str,
        principal: Principal | None = ADMIN,
        *,
        body: Any = None,
        query: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        resource: str | None = None,
        lambda_timeout: float | None = None,
    ) -> Answer:
        route = self._routes[(method, resource or path)]
        handler = load_handler(route.handler_dir, route.handler, f"lambda_{route.function}")
        if principal is not None and not any(name.lower() == "authorization" for name in headers or {}):
            headers = {**(headers or {}), "Authorization": f"Bearer {self.token(principal)}"}
        raw_body = body if isinstance(body, (str, bytes)) or body is None else json.dumps(body)
        event = rest_event(method, path, resource=route.path, headers=headers, query=query, body=raw_body)
        # Lambda's context counts down from the function's Timeout (or ``lambda_timeout``).
        timeout = TEMPLATE.function_timeout(route.function) if lambda_timeout is None else lambda_timeout
        response = handler(event, FakeLambdaContext(route.function, timeout_seconds=timeout))
        text = response.get("body") or ""
        secrets.record(text)
        try:
            parsed = json.loads(text) if text else None
        except json.JSONDecodeError:
            parsed = None
        headers = dict(response.get("headers") or {})
        for name, values in (response.get("multiValueHeaders") or {}).items():
            headers.setdefault(name, ", ".join(values))
        return Answer(response["statusCode"], headers, parsed, text)


@pytest.fixture
def api() -> Api:
    return Api()


def principal(
    name: str = "pat",
    *permissions: Permission,
    kind: PrincipalKind = PrincipalKind.HUMAN,
    roles: dict[str, ProjectRole] | None = None,
    owns: frozenset[str] = frozenset(),
) -> Principal:
    return Principal(
        name=name, kind=kind, permissions=frozenset(permissions), project_roles=roles or {}, organizations=owns
    )
