"""The whole system on loopback: ``start_stack`` and the ``Stack`` it returns.

    from devstack.stack import start_stack

    stack = start_stack(state_dir=tmp_path, api_port=0, moto_port=0, forager_port=0, forager_control_port=0)
    stack.url, stack.admin_token, stack.engine, stack.moto_url, stack.env
    stack.run_schedule("ScheduleFunction")
    stack.snapshot()
    stack.stop()

Start order: the local engine, a process the stack supervises (unless a real FORAGER is named), moto (emptied: a
fresh emulator every start), the template's resources, the snapshot restored, the
seed, the process environment the functions read, then the API and the schedules.
``stop`` reverses it, snapshotting after the API and the schedules have stopped and
before moto does, and puts ``os.environ`` back as it found it.

The Python API reads no environment switches; ``options_from_env`` turns them into
``start_stack``'s arguments (``python -m devstack`` does exactly that).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import secrets
import shlex
import socket
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import boto3

from devstack import persistence
from devstack.aws import LOCAL_CREDENTIALS, MotoEmulator, deployed_template
from devstack.bus import BusDelivery
from devstack.gateway import ApiServer, Gateway, local_routes
from devstack.lambdas import DEFAULT_CONCURRENCY, EnvironmentHost
from devstack.metering import Meter
from devstack.schedules import Scheduler
from devstack.seed import DEMO_ROLE, Admin, ensure_admin, seed_demo, seed_demo_role, write_secret
from devstack.supervisor import EngineCommand, EngineSupervisor
from devstack.template import ROOT, TEMPLATE, Template, create_resources

log = logging.getLogger("devstack")

DEFAULT_STATE_DIR = ROOT / ".devstack"
DEFAULT_API_PORT = 3000
DEFAULT_MOTO_PORT = 4566
DEFAULT_FORAGER_PORT = 8790
DEFAULT_FORAGER_CONTROL_PORT = 8791

STATE_FILE = "aws-state.json"
ENV_FILE = "env"
CLOCK_FILE = "clock"  # the functions' clock offset in seconds (DEVSTACK_CLOCK_FILE; PUT /_local/clock)
SIMULATOR_TOKEN_FILE = "simulator.token"  # noqa: S105 - a file name
UPSTREAM_FILE = "upstream.json"
SIMULATOR_STATE_FILE = "forager-simulator.json"
ENGINE_DATA_DIR = "engine"  # the local engine's database and uploaded files
ENGINE_LOG_FILE = "engine.log"  # what the engine process writes (its requests, its start and stop)
ENGINE_STATE_FILE = "engine.json"  # what the supervisor says the engine does (DEVSTACK_ENGINE_FILE)

AwsMode = Literal["local", "real"]

# Variables a Lambda never inherits from a developer's shell: they would send the local
# stack's AWS calls somewhere else, or sign them as someone else.
_LOCAL_AWS_UNSET = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
)


class _Running:
    """The one stack this process runs (``os.environ`` is per process)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stack: Stack | None = None


_running = _Running()

T = TypeVar("T")


class StackStartError(RuntimeError):
    """The stack could not start; the message says what to change."""


class _EnvironmentGuard:
    """Changes ``os.environ`` and remembers how to put every changed variable back."""

    def __init__(self) -> None:
        self._saved: dict[str, str | None] = {}

    def set(self, values: Mapping[str, str]) -> None:
        for key, value in values.items():
            self._saved.setdefault(key, os.environ.get(key))
            os.environ[key] = value

    def unset(self, keys: list[str]) -> None:
        for key in keys:
            if key in os.environ:
                self._saved.setdefault(key, os.environ.get(key))
                del os.environ[key]

    def restore(self) -> None:
        for key, value in self._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved.clear()


class Stack:
    """A running local stack. Build it with ``start_stack``."""

    def __init__(
        self,
        state_dir: Path,
        *,
        host: str,
        persist: bool,
        aws: AwsMode,
        concurrency: int = DEFAULT_CONCURRENCY,
        journal_records: int = persistence.JOURNAL_RECORDS,
        workspace: Path | None = None,
    ):
        self.state_dir = state_dir
        self.workspace = (workspace or Path.cwd()).resolve()
        self.journal_records = journal_records
        self.concurrency = concurrency
        self.host = host
        self.persist = persist
        self.aws: AwsMode = aws
        self.url = ""
        self.admin_token = ""
        self.admin_name = ""
        self.engine: EngineSupervisor | None = None  # the local engine's process, when this stack runs one
        self.forager_url = ""
        self.moto_url: str | None = None
        self.env: dict[str, str] = {}
        self.template: Template | None = None
        self.seeded: list[str] = []
        self._environment = _EnvironmentGuard()
        self._moto: MotoEmulator | None = None
        self._api: ApiServer | None = None
        self._scheduler: Scheduler | None = None
        self._bus: BusDelivery | None = None
        self._functions: EnvironmentHost | None = None
        self._session: Any = None
        self._endpoint_url: str | None = None
        self._snapshot_lock = threading.Lock()
        self._last_snapshot: str | None = None
        self._journal: persistence.Journal | None = None
        self._object_cache: persistence.ObjectCache = {}
        self._clients: dict[str, Any] = {}
        self._clients_lock = threading.Lock()
        self._persister: threading.Thread | None = None
        self._stopping = threading.Event()
        self._stopped = False

    # ------------------------------------------------------------------ the public surface
    @property
    def state_file(self) -> Path:
        return self.state_dir / STATE_FILE

    @property
    def functions(self) -> EnvironmentHost:
        if self._functions is None:
            raise RuntimeError("the stack is not running")
        return self._functions

    def client(self, service: str) -> Any:
        """A boto3 client for this stack's AWS (moto, or the deployed stack's account); one per service."""
        if self._session is None:
            raise RuntimeError("the stack is not running")
        with self._clients_lock:
            if service not in self._clients:
                self._clients[service] = self._session.client(service, endpoint_url=self._endpoint_url)
            return self._clients[service]

    def resource(self, service: str) -> Any:
        return self._session.resource(service, endpoint_url=self._endpoint_url)  # type: ignore[union-attr]

    def run_schedule(self, function: str) -> Any:
        """Run ``function``'s schedule now (a real "Scheduled Event"); its handler's answer."""
        if self._scheduler is None:
            raise RuntimeError("the stack is not running")
        return self._scheduler.run_now(function)

    def snapshot(self) -> bool:
        """Write the emulator's state to ``<state dir>/aws-state.json``; False when nothing changed.

        Only a local stack that persists snapshots (real AWS keeps its own data).
        """
        if not self.persist or self._moto is None or self._session is None or self._journal is None:
            return False
        with self._snapshot_lock:
            # Writes go on while the tables are read: the snapshot holds every write journaled
            # before the rotation and maybe some after; replaying the after-images from the
            # new file on is right either way (they are idempotent).
            generation = self._journal.rotate()
            state = persistence.take_snapshot(
                self.client("dynamodb"), self.client("ssm"), self.client("s3"), self._object_cache
            )
            state["journal"] = generation
            digest = persistence.fingerprint(state)
            if digest == self._last_snapshot and self.state_file.exists():
                return False
            persistence.write_snapshot(self.state_file, state)
            self._last_snapshot = digest
            self._journal.drop_before(generation)
            return True

    def exports(self) -> dict[str, str]:
        """What a second terminal needs to reach this stack's AWS and tables (also ``<state dir>/env``)."""
        return dict(self.env)

    def banner(self) -> str:
        return _banner(self)

    def stop(self) -> None:
        """Snapshot (when persisting) and shut down the API, schedules, moto and the local engine."""
        if self._stopped:
            return
        self._stopped = True
        self._stopping.set()
        try:
            self._shutdown(final_snapshot=True)
        finally:
            with _running.lock:
                if _running.stack is self:
                    _running.stack = None

    def __enter__(self) -> Stack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ start
    def _boot(
        self,
        *,
        api_port: int,
        moto_port: int,
        forager_port: int,
        forager_control_port: int | None,
        schedule_seconds: float | None,
        forager_endpoint: str | None,
        forager_token: str | None,
        stack_name: str | None,
        parameters: Mapping[str, str],
        template_path: Path,
    ) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        endpoint, credential = self._start_upstream(forager_endpoint, forager_token, forager_port, forager_control_port)
        wired = {"ForagerEndpoint": endpoint, **_remote_parameters(endpoint)} if forager_endpoint else {}
        parameters = {"WorkspaceRoot": str(self.workspace), **parameters}
        if self.aws == "local":
            template = self._start_moto(moto_port, {"ForagerEndpoint": endpoint, **wired, **parameters}, template_path)
        else:
            template = self._attach_deployed(stack_name, {**wired, **parameters}, template_path)
        self.template = template

        if self.aws == "local":
            create_resources(template, self.client("dynamodb"), self.client("s3"), self.client("events"))
            if self.persist:
                self._restore()
            self._migrate()
        admin = self._seed(template, endpoint, credential)
        self.admin_token, self.admin_name = admin.token, admin.name
        write_secret(self.state_dir / ENV_FILE, "".join(f"{k}={v}\n" for k, v in self.env.items()))
        self.snapshot()
        self._start_serving(template, api_port, schedule_seconds)

    def _start_upstream(
        self, forager_endpoint: str | None, forager_token: str | None, port: int, control_port: int | None
    ) -> tuple[str, str]:
        """FORAGER's endpoint and credential: the local engine's, or the real FORAGER named. The
        engine is the test double, with its control port, only when ``control_port`` is given."""
        if forager_endpoint:
            if not forager_token:
                log.warning("FORAGER_ENDPOINT is set without FORAGER_TOKEN: FORAGER will refuse every call")
            self.forager_url = forager_endpoint.rstrip("/")
            return self.forager_url, forager_token or ""
        token = _kept_secret(self.state_dir / SIMULATOR_TOKEN_FILE)
        command = EngineCommand(
            host=self.host,
            port=port or _free_port(self.host),  # chosen once: a restart answers where the functions look
            token=token,
            input_roots=[self.workspace],
            data_dir=self.state_dir / ENGINE_DATA_DIR if self.persist else None,
            state_file=self.state_dir / SIMULATOR_STATE_FILE if self.persist else None,
            control_port=None if control_port is None else control_port or _free_port(self.host),
            log_file=self.state_dir / ENGINE_LOG_FILE,
        )
        ports = [(port, "DEVSTACK_FORAGER_PORT")]
        if control_port is not None:
            ports.append((control_port, "DEVSTACK_FORAGER_CONTROL_PORT"))
        supervisor = EngineSupervisor(command, self.state_dir / ENGINE_STATE_FILE)
        self.engine = _listening("the local engine", ports, self.host, supervisor.start)
        self.forager_url = self.engine.url
        return self.forager_url, token

    def _start_moto(self, port: int, parameters: Mapping[str, str], template_path: Path) -> Template:
        moto = MotoEmulator(self.host, port)
        _listening("the AWS emulator (moto)", [(port, "DEVSTACK_MOTO_PORT")], self.host, moto.start)
        self._moto = moto
        moto.reset()  # moto's state is per process: a restart in this process must start empty
        self.moto_url = self._endpoint_url = moto.url
        template = Template(parameters=dict(parameters), path=template_path)
        self._session = boto3.session.Session(
            aws_access_key_id=LOCAL_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=LOCAL_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            region_name=template.region,
        )
        unset = [*_LOCAL_AWS_UNSET, *(k for k in os.environ if k.startswith("AWS_ENDPOINT_URL_"))]
        self._apply_environment(
            template,
            {
                "AWS_ENDPOINT_URL": moto.url,
                **LOCAL_CREDENTIALS,
                "AWS_DEFAULT_REGION": template.region,
                "AWS_REGION": template.region,
            },
            unset,
        )
        return template

    def _attach_deployed(self, stack_name: str | None, parameters: Mapping[str, str], template_path: Path) -> Template:
        if not stack_name:
            raise StackStartError("DEVSTACK_AWS=real needs DEVSTACK_STACK_NAME (the deployed stack's name).")
        self._session = boto3.session.Session()
        template = deployed_template(stack_name, self._session, path=template_path)
        template.parameters.update(parameters)
        self._apply_environment(template, {"AWS_DEFAULT_REGION": template.region, "AWS_REGION": template.region}, [])
        return template

    def _apply_environment(self, template: Template, aws_env: Mapping[str, str], unset: list[str]) -> None:
        """The functions' shared environment into ``os.environ``; the runtime's caches forgotten."""
        shared, undeclared = _shared_environment(template)
        # The one switch only the local stack sets: the functions read their clock through it, so
        # a test moves time (PUT /_local/clock) instead of waiting. template.yaml never declares it.
        self.env = {**aws_env, **shared, "DEVSTACK_CLOCK_FILE": str(self.state_dir / CLOCK_FILE)}
        # No X-Ray here (no daemon to send to): left on, the SDK logs "Subsegment … discarded" for
        # every call a function makes, half of the stack's log
        self.env.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
        if self.engine is not None:  # the engine this host manages: what its supervisor says, its roots
            self.env["DEVSTACK_ENGINE_FILE"] = str(self.state_dir / ENGINE_STATE_FILE)
            self.env["KNOWLEDGE_FORAGER_MANAGED"] = "true"
            self.env["FORAGER_ALLOWED_INPUT_ROOTS"] = str(self.workspace)
        # Deployed, a container keeps the settings up to 5 s (environment.SETTINGS_CACHE_SECONDS);
        # the local stack reads them on every request unless told otherwise, so a change made
        # through one function is seen at once by the others (each its own process here).
        self.env.setdefault("SETTINGS_CACHE_SECONDS", os.environ.get("SETTINGS_CACHE_SECONDS", "0"))
        self._environment.unset([*unset, *undeclared])
        self._environment.set(self.env)
        self._environment.set(_no_proxy_for_loopback())
        _reset_runtime()

    def _start_serving(self, template: Template, api_port: int, schedule_seconds: float | None) -> None:
        self.meter = Meter()
        # each function's invocations run in execution environments of their own (processes),
        # which take os.environ as it is now: the functions' shared environment set above
        self._functions = EnvironmentHost(template, concurrency=self.concurrency, on_calls=self.meter.add_calls)
        invoke = self.meter.metered(self._functions.invoke)
        self._scheduler = Scheduler(template, invoke, override_seconds=schedule_seconds)
        gateway = Gateway.from_template(
            template,
            invoke,
            local_route=local_routes(self._scheduler.run_now, self.state_dir / CLOCK_FILE, self.meter.snapshot),
        )
        self._api = _listening(
            "the API", [(api_port, "DEVSTACK_PORT")], self.host, lambda: ApiServer(gateway, self.host, api_port).start()
        )
        self.url = self._api.url
        self._scheduler.start()
        if self._moto is not None:  # a deployed stack's own EventBridge delivers its rules
            self._bus = BusDelivery(
                template,
                invoke,
                self._session.client("events", endpoint_url=self._endpoint_url),
                self._session.client("sqs", endpoint_url=self._endpoint_url),
            )
            self._bus.start()
        if self.persist and self._moto is not None:
            self._persister = threading.Thread(target=self._persist_loop, name="devstack-snapshot", daemon=True)
            self._persister.start()

    def _restore(self) -> None:
        try:
            state = persistence.read_snapshot(self.state_file)
        except (ValueError, OSError) as error:
            raise StackStartError(
                f"{self.state_file} cannot be read ({error}); move it aside to start empty."
            ) from error
        clients = (self.client("dynamodb"), self.client("ssm"), self.client("s3"))
        if state is None:
            log.info("no saved state in %s: starting empty", self.state_file)
        else:
            counts = persistence.restore_snapshot(state, *clients)
            log.info("restored %(items)d items, %(parameters)d parameters, %(objects)d objects", counts)
            self._last_snapshot = persistence.fingerprint(state)
        covered = int(state.get("journal", 0)) if state else 0  # a snapshot holds every file below it
        files = persistence.journal_files(self.state_dir)
        later = [files[n] for n in sorted(files) if n >= covered]
        if later:
            counts = persistence.replay_journal(later, *clients)
            log.info(
                "replayed %(records)d journaled writes: %(items)d items, %(parameters)d parameters, "
                "%(objects)d objects",
                counts,
            )
        # never append to a replayed file (its last record may be torn): a new one after them all
        self._journal = persistence.Journal(
            self.state_dir, max([covered - 1, *files]) + 1, records_limit=self.journal_records
        )
        self._journal.drop_before(covered)
        assert self._moto is not None
        self._moto.journal_to(self._journal)

    def _migrate(self) -> None:
        """Move what the saved state holds under keys this version no longer reads
        (``storage/migrations.py``, what ``knowledge-admin migrate`` runs on a deployed stack)."""
        from knowledge_service.storage.migrations import MigrationTables, migrate

        moved = migrate(self.resource("dynamodb"), MigrationTables.named_by(self.env.__getitem__))
        if any(moved.values()):
            log.info("migrated: %s", ", ".join(f"{step} {n}" for step, n in moved.items() if n))

    def _seed(self, template: Template, endpoint: str, credential: str) -> Admin:
        from knowledge_service.storage.config_store import ConfigStore
        from knowledge_service.storage.credential import CredentialStore
        from knowledge_service.storage.principals import PrincipalStore
        from knowledge_service.storage.projects import ProjectStore

        dynamodb = self.resource("dynamodb")
        principals = PrincipalStore(dynamodb, template.physical_name("PrincipalsTable"))
        if self.aws == "real":
            return ensure_admin(principals, self.state_dir / f"admin-{template.stack_name}.token")
        upstream_file = self.state_dir / UPSTREAM_FILE
        previous = json.loads(upstream_file.read_text()).get("endpoint") if upstream_file.exists() else None
        self.seeded = seed_demo(
            ConfigStore(dynamodb, template.physical_name("ConfigTable"), template.physical_name("ProjectsTable")),
            CredentialStore(self.client("ssm"), self.env["FORAGER_CREDENTIAL_PARAMETER"]),
            ProjectStore(dynamodb, template.physical_name("ProjectsTable")),
            endpoint=endpoint,
            credential=credential,
            previous_endpoint=previous,
        )
        from knowledge_service.storage.agent_missions import AgentMissionStore

        if seed_demo_role(AgentMissionStore(dynamodb, template.physical_name("ConfigTable"))):
            self.seeded.append(f"role {DEMO_ROLE}")
        admin = ensure_admin(principals, self.state_dir / "admin.token")
        if admin.minted:
            self.seeded.append(f"principal {admin.name}")
        write_secret(upstream_file, json.dumps({"endpoint": endpoint}) + "\n")
        if self.seeded:
            log.info("seeded: %s", "; ".join(self.seeded))
        return admin

    def _persist_loop(self) -> None:
        """Snapshot when the journal passes its limits (``persistence.JOURNAL_RECORDS`` records or
        ``JOURNAL_BYTES`` bytes), so a start has a bounded journal to replay. Every write is on
        disk (journaled) before it is acknowledged; this thread only compacts, and sleeps until
        the journal is full (an idle stack does nothing at all)."""
        journal = self._journal
        assert journal is not None
        while True:
            journal.full.wait()
            if self._stopping.is_set():
                return
            try:
                if self.snapshot():
                    log.debug("snapshot written to %s", self.state_file)
            except Exception:
                log.exception("snapshot failed (will retry)")
                self._stopping.wait(1.0)

    # ------------------------------------------------------------------ stop
    def _final_snapshot(self) -> None:
        if self.snapshot():
            log.info("state saved to %s", self.state_file)

    def _stop_moto(self) -> None:
        assert self._moto is not None
        self._moto.journal_to(None)
        if self._journal is not None:
            self._journal.close()
        try:
            self._moto.reset()  # moto's memory is per process: leave none behind for the next stack
        finally:
            self._moto.stop()

    def _shutdown(self, *, final_snapshot: bool) -> None:
        self._stopping.set()
        if self._journal is not None:
            self._journal.full.set()  # wakes the snapshot thread to see the stop
        steps: list[tuple[str, Callable[[], None]]] = []
        if self._api is not None:
            steps.append(("API", self._api.stop))
        if self._scheduler is not None:
            steps.append(("schedules", self._scheduler.stop))
        if self._bus is not None:
            steps.append(("bus rules", self._bus.stop))
        if self._functions is not None:
            steps.append(("execution environments", self._functions.stop))
        if self._persister is not None:
            persister = self._persister
            steps.append(("snapshot thread", lambda: persister.join(timeout=30)))
        if final_snapshot:
            steps.append(("final snapshot", self._final_snapshot))
        if self._moto is not None:
            steps.append(("AWS emulator", self._stop_moto))
        if self.engine is not None:
            steps.append(("local engine", self.engine.stop))
        steps.append(("environment", self._environment.restore))
        steps.append(("runtime", _reset_runtime))
        for name, step in steps:
            try:
                step()
            except Exception:
                log.exception("stopping the %s failed", name)
        self._api = self._scheduler = self._persister = self._bus = None
        self._moto = None


def start_stack(
    state_dir: Path | str | None = None,
    api_port: int = DEFAULT_API_PORT,
    moto_port: int = DEFAULT_MOTO_PORT,
    forager_port: int = DEFAULT_FORAGER_PORT,
    forager_control_port: int | None = None,
    schedule_seconds: float | None = None,
    persist: bool = True,
    *,
    host: str = "127.0.0.1",
    forager_endpoint: str | None = None,
    forager_token: str | None = None,
    aws: AwsMode = "local",
    stack_name: str | None = None,
    parameters: Mapping[str, str] | None = None,
    template_path: Path = TEMPLATE,
    concurrency: int = DEFAULT_CONCURRENCY,
    journal_records: int = persistence.JOURNAL_RECORDS,
    workspace: Path | None = None,
) -> Stack:
    """Start the stack; returns once everything listens and is seeded. Port 0 picks a free port.

    ``schedule_seconds`` makes every schedule tick at that interval; ``persist`` keeps the
    emulator's state in ``<state dir>/aws-state.json`` across restarts; ``forager_endpoint``
    (+ ``forager_token``) replaces the local engine with a real FORAGER; ``forager_control_port``
    runs the local engine as the test double, its control port there (None: no control port, as
    ``make run`` has unless ``DEVSTACK_ENGINE_CONTROL=1``); ``aws="real"`` with
    ``stack_name`` runs the functions against a deployed stack's tables instead of moto;
    ``parameters`` override the template's parameters; ``concurrency`` bounds the warm
    containers that run at once (1: one invocation at a time); ``journal_records`` is how many
    journaled writes make a snapshot. One stack per process at a time.
    """
    if aws not in ("local", "real"):
        raise StackStartError(f"aws must be 'local' or 'real', not {aws!r}")
    if journal_records < 1:
        raise StackStartError(f"journal_records must be at least 1, not {journal_records}")
    if concurrency < 1:
        raise StackStartError(f"concurrency must be at least 1, not {concurrency}")
    quiet = logging.getLogger("werkzeug")
    if quiet.level == logging.NOTSET:  # else werkzeug adds its own handler and prints every moto request
        quiet.setLevel(logging.WARNING)
    with _running.lock:
        if _running.stack is not None:
            raise StackStartError("A stack is already running in this process; stop() it first.")
        stack = Stack(
            Path(state_dir or DEFAULT_STATE_DIR).resolve(),
            host=host,
            persist=persist and aws == "local",
            aws=aws,
            concurrency=concurrency,
            journal_records=journal_records,
            workspace=workspace,
        )
        _running.stack = stack
    try:
        stack._boot(
            api_port=api_port,
            moto_port=moto_port,
            forager_port=forager_port,
            forager_control_port=forager_control_port,
            schedule_seconds=schedule_seconds,
            forager_endpoint=forager_endpoint,
            forager_token=forager_token,
            stack_name=stack_name,
            parameters=dict(parameters or {}),
            template_path=template_path,
        )
    except BaseException:
        stack._stopped = True
        stack._shutdown(final_snapshot=False)
        with _running.lock:
            _running.stack = None
        raise
    return stack


def options_from_env(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``start_stack``'s arguments from the environment switches (see devstack/README.md); a
    switch that cannot be read stops the start naming it."""
    env = os.environ if environ is None else environ
    aws = env.get("DEVSTACK_AWS", "local").strip().lower() or "local"
    if aws not in ("local", "real"):
        raise StackStartError(f"DEVSTACK_AWS={aws!r}: use 'real' (a deployed stack) or leave it unset.")
    from local_engine.ingestion.workers import default_workers

    try:
        default_workers(env)  # the local engine's own switch, refused here by its name before anything starts
    except ValueError as error:
        raise StackStartError(str(error)) from None
    control = _switch(env, "DEVSTACK_ENGINE_CONTROL", "1 opens the engine's control port (tests), 0 or unset not")
    concurrency = _whole(env, "DEVSTACK_CONCURRENCY", 1, 256, "a whole number from 1 (serial) to 256")
    journal = _whole(env, "DEVSTACK_JOURNAL_RECORDS", 1, None, "a whole number of writes, at least 1")
    return {
        "state_dir": Path(env["DEVSTACK_STATE_DIR"]) if env.get("DEVSTACK_STATE_DIR") else DEFAULT_STATE_DIR,
        "api_port": _port(env, "DEVSTACK_PORT", DEFAULT_API_PORT),
        "moto_port": _port(env, "DEVSTACK_MOTO_PORT", DEFAULT_MOTO_PORT),
        "forager_port": _port(env, "DEVSTACK_FORAGER_PORT", DEFAULT_FORAGER_PORT),
        "forager_control_port": (
            _port(env, "DEVSTACK_FORAGER_CONTROL_PORT", DEFAULT_FORAGER_CONTROL_PORT) if control else None
        ),
        "schedule_seconds": _seconds(env, "DEVSTACK_SCHEDULE_SECONDS"),
        "forager_endpoint": env.get("FORAGER_ENDPOINT") or None,
        "forager_token": env.get("FORAGER_TOKEN") or None,
        "aws": aws,
        "stack_name": env.get("DEVSTACK_STACK_NAME") or None,
        "concurrency": DEFAULT_CONCURRENCY if concurrency is None else concurrency,
        "journal_records": persistence.JOURNAL_RECORDS if journal is None else journal,
        "workspace": _workspace(env.get("DEVSTACK_WORKSPACE", "")),
    }


def _port(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) > 65535:
        raise StackStartError(f"{name}={raw!r} is not a port number.")
    return int(raw)


def _seconds(env: Mapping[str, str], name: str) -> float | None:
    raw = env.get(name, "").strip()
    try:
        seconds = float(raw) if raw else None
    except ValueError:
        raise StackStartError(f"{name}={raw!r} is not a number of seconds.") from None
    if seconds is not None and seconds <= 0:
        raise StackStartError(f"{name} must be positive.")
    return seconds


def _whole(env: Mapping[str, str], name: str, least: int, most: int | None, form: str) -> int | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < least or (most is not None and int(raw) > most):
        raise StackStartError(f"{name}={raw!r}: {form}.")
    return int(raw)


def _switch(env: Mapping[str, str], name: str, meaning: str) -> bool:
    raw = env.get(name, "").strip()
    if raw not in ("", "0", "1"):
        raise StackStartError(f"{name}={raw!r}: {meaning}.")
    return raw == "1"


def _workspace(raw: str) -> Path:
    """DEVSTACK_WORKSPACE, or the folder the stack is started from: an existing folder."""
    folder = Path(raw.strip() or os.getcwd()).expanduser().resolve()
    if not folder.is_dir():
        raise StackStartError(f"DEVSTACK_WORKSPACE={raw!r} is not a folder.")
    return folder


# ---------------------------------------------------------------------- helpers
def _reset_runtime() -> None:
    from knowledge_service.runtime import reset_runtime

    reset_runtime()


def _listening(what: str, ports: list[tuple[int, str]], host: str, start: Callable[[], T]) -> T:
    try:
        return start()
    except OSError as error:
        named = " / ".join(f"{p} ({variable})" for p, variable in ports)
        raise StackStartError(
            f"Cannot start {what} on {host}:{named}: {error.strerror or error}. "
            f"Free the port or choose another with the variable named."
        ) from error


def _free_port(host: str) -> int:
    """A port free on ``host`` now (port 0 asked for): the engine process binds it, and binds it again
    on every restart."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _kept_secret(path: Path) -> str:
    if path.exists():
        value = path.read_text(encoding="utf-8").strip()
        if value:
            return value
    value = secrets.token_urlsafe(32)
    write_secret(path, value + "\n")
    return value


def _remote_parameters(endpoint: str) -> dict[str, str]:
    """A real FORAGER off loopback must be allowed, as a deployment would allow it."""
    host = (urlsplit(endpoint).hostname or "").lower()
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if loopback or not host:
        return {}
    log.info(
        "FORAGER_ENDPOINT names %s: the local stack sets ForagerAllowRemote=true, ForagerAllowedHosts=%s", host, host
    )
    return {"ForagerAllowRemote": "true", "ForagerAllowedHosts": host}


def _shared_environment(template: Template) -> tuple[dict[str, str], list[str]]:
    """The variables every function agrees on, and those the template declares but leaves unset here.

    The rest (``POWERTOOLS_SERVICE_NAME``) each function's execution environments get from the
    template (``EnvironmentHost``).
    """
    environments = [template.function_environment(f) for f in template.functions()]
    shared = dict(environments[0]) if environments else {}
    for environment in environments[1:]:
        shared = {k: v for k, v in shared.items() if environment.get(k) == v}
    differing = {k for environment in environments for k in environment} - set(shared)
    unexpected = differing - {"POWERTOOLS_SERVICE_NAME"}
    if unexpected:
        log.warning("functions differ on %s: each function's environments see its own value", sorted(unexpected))
    declared = set(template.body.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {}))
    for resource in template.functions().values():
        declared.update((resource.get("Properties", {}).get("Environment", {}) or {}).get("Variables", {}))
    unset = sorted(declared - set(shared) - differing)  # e.g. ANTHILL_KNOWLEDGE_ENABLED: AWS::NoValue here
    return shared, unset


def _no_proxy_for_loopback() -> dict[str, str]:
    values: dict[str, str] = {}
    for key in ("NO_PROXY", "no_proxy"):
        current = [v.strip() for v in os.environ.get(key, "").split(",") if v.strip()]
        missing = [h for h in ("127.0.0.1", "localhost") if h not in current]
        if missing or key not in os.environ:
            values[key] = ",".join(current + missing)
    return values


def _banner(stack: Stack) -> str:
    lines = [
        f"devstack is up ({'moto on loopback' if stack.aws == 'local' else 'deployed AWS'}; "
        f"state in {stack.state_dir})",
        "",
    ]
    lines.append(f"  API            {stack.url}")
    lines.append(f"  console        {stack.url}/console/   (sign in with the admin token)")
    lines.append(f"  admin token    {stack.admin_token}   (principal {stack.admin_name})")
    if stack.engine is not None:
        control = stack.engine.control_url
        lines.append(
            f"  FORAGER        {stack.engine.url}   (local engine, managed"
            + (f"; control port {control}, DEVSTACK_ENGINE_CONTROL=1)" if control else ")")
        )
        lines.append(f"  workspace      {stack.workspace}   (DEVSTACK_WORKSPACE: import a folder inside it by path)")
    else:
        lines.append(f"  FORAGER        {stack.forager_url}   (FORAGER_ENDPOINT)")
    if stack.moto_url:
        lines.append(f"  AWS emulator   {stack.moto_url}   (moto, region {stack.env.get('AWS_REGION', '')})")
    else:
        assert stack.template is not None
        lines.append(f"  AWS            stack {stack.template.stack_name} in {stack.template.region}")
    if stack.template is not None:
        for schedule in stack.template.schedules():
            lines.append(
                f"  schedule       {schedule.function} {schedule.expression}   (now: curl -X POST "
                f"{stack.url}/_local/schedules/{schedule.function}/run)"
            )
    lines += [
        "",
        "Try it:",
        f'  curl -H "Authorization: Bearer {stack.admin_token}" {stack.url}/knowledge/status',
        "",
        "A second terminal (the admin command against this stack):",
    ]
    exports = " \\\n    ".join(f"{k}={shlex.quote(v)}" for k, v in stack.exports().items())
    lines.append(f"  export {exports}")
    lines.append(f"  (or: set -a; . {shlex.quote(str(stack.state_dir / ENV_FILE))}; set +a)")
    tools = ROOT / ".tools" / "bin"  # where make install puts uv when it was not on the PATH
    lines.append(f"  export PATH={shlex.quote(str(tools))}:$PATH   (uv, for the README's `uv run` lines)")
    lines += [
        "",
        "Ctrl-C stops it" + (f"; data is kept in {stack.state_file}" if stack.persist else "") + ".",
        "A change to the code takes effect at the next start (Ctrl-C, then make run again).",
    ]
    return "\n".join(lines)
