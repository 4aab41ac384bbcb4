"""The capacity model: what the documented traffic mix costs each partition, and where it breaks.

``make capacity`` (``python -m benchmarks.capacity``) starts the local stack, replays every
kind of request of :data:`MIX` a few times across three projects, one request at a time, and
reads what each touched from the stack itself (``GET /_local/metrics``'s ``footprint``,
``devstack.footprint``: the table, partition key and capacity units of every DynamoDB call,
the prefix of every S3 call). Background work a request starts (a bus rule's function) is
waited for and counted with it. Then, for the deployed system, it scales the footprint by the
mix to the rate at which each limit is reached:

- each DynamoDB partition against its ceiling (3,000 read units, 1,000 write units a second);
  a partition keyed by a project carries the busiest project's share of the traffic, one keyed
  by a principal the busiest principal's, one keyed by neither (an installation-wide item) all
  of it, and one keyed by what each request makes anew (an id, a hash) spreads and caps nothing;
- each S3 prefix against 5,500 reads and 3,500 writes a second;
- the API's throttle on each method (``template.yaml``'s ``MethodSettings``);
- Lambda's concurrency: the mix's invocations times an assumed duration per invocation
  (:data:`BASE_MS` plus :data:`DYNAMODB_MS` per DynamoDB request and :data:`FORAGER_MS` per
  FORAGER call), against the account's 1,000.

The counts are deterministic (the same requests in the same order against a fresh stack), so
the report is too: ``--write`` puts it into docs/architecture.md between its capacity markers,
and a test holds the document to what the code does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from devstack.metering import difference, footprint_difference
from devstack.template import ROOT, Template
from knowledge_service.environment import SETTINGS_CACHE_SECONDS

TODAY_RPS = 1.0
"""Today's load the multiples are taken of: a team's installation, one request a second."""
TARGET_RPS = 10_000.0
"""The rate the model must carry with no partition above half its ceiling."""
MULTIPLES = (100, 10_000)
BUSIEST_PROJECT = 0.02
"""The busiest project's share of all traffic (at 10,000 requests/s: 200 a second)."""
BUSIEST_PRINCIPAL = 0.01
"""The busiest principal's (or agent mission's) share of all traffic."""
BUSIEST_PAGE = 0.002
"""The busiest page's share of all traffic (a tenth of the busiest project's)."""
READ_CEILING = 3_000.0
WRITE_CEILING = 1_000.0
S3_GET_CEILING = 5_500.0
S3_PUT_CEILING = 3_500.0
LAMBDA_CONCURRENCY = 1_000
"""The account's concurrent executions in a region, by default (a quota that can be raised)."""
API_ACCOUNT_RPS = 10_000
"""API Gateway's requests a second across an account's REST APIs in a region, by default (a quota)."""
BASE_MS = 20.0
DYNAMODB_MS = 6.0
FORAGER_MS = 60.0
REPEATS = 3
QUIET_SECONDS = 0.6
"""How long no invocation may start before a request's work is taken as done."""
BACKGROUND_SECONDS = 3.0
"""The same, after a request that puts work on the bus (delivered within the bus's 1 s poll)."""
SETTINGS = "ConfigTable pk=settings read-strong"
"""The settings item: kept per container for SETTINGS_CACHE_SECONDS deployed, read on every request
by the local stack (its functions are processes of their own), so the model counts it per container."""
DOCUMENT = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- capacity:begin (make capacity --write; do not edit by hand) -->"
END = "<!-- capacity:end -->"

PAGE = "---\ntype: Concept\ntitle: Capacity\n---\n# Capacity\n\nA page the model writes. [home](index.md)\n"


@dataclass(frozen=True)
class Traffic:
    """One kind of request in the mix: its share of all requests, and how to make one."""

    name: str
    share: float
    method: str
    route: str  # the API method it lands on: "<METHOD> <resource path>"
    make: Callable[[Replay, str, int], httpx.Request]
    background: bool = False  # it starts work on the bus, waited for and counted with it


def _get(path: str, **params: str) -> Callable[[Replay, str, int], httpx.Request]:
    def make(replay: Replay, project: str, n: int) -> httpx.Request:
        filled = {k: v.format(project=project, n=n) for k, v in params.items()}
        return replay.client.build_request("GET", path.format(project=project, n=n), params=filled)

    return make


def _json(method: str, path: str, body: Callable[[str, int], Any], query: dict[str, str] | None = None) -> Any:
    def make(replay: Replay, project: str, n: int) -> httpx.Request:
        params = {k: v.format(project=project, n=n) for k, v in (query or {}).items()}
        return replay.client.build_request(
            method, path.format(project=project, n=n), json=body(project, n), params=params
        )

    return make


def _mcp(tool: str, arguments: dict[str, Any]) -> Callable[[Replay, str, int], httpx.Request]:
    def make(replay: Replay, project: str, n: int) -> httpx.Request:
        call = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        headers = {
            "Authorization": f"Bearer {replay.missions[project]}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        }
        return replay.client.build_request("POST", "/mcp", json=call, headers=headers)

    return make


MIX: tuple[Traffic, ...] = (
    Traffic("search", 0.20, "GET", "GET /knowledge/search", _get("/knowledge/search", project="{project}", q="launch")),
    Traffic(
        "retrieve",
        0.08,
        "POST",
        "POST /knowledge/retrieve",
        _json("POST", "/knowledge/retrieve", lambda p, n: {"project": p, "query": "launch window"}),
    ),
    Traffic("status", 0.01, "GET", "GET /knowledge/status", _get("/knowledge/status")),
    Traffic(
        "page read",
        0.20,
        "GET",
        "GET /api/v1/projects/{id}/kb/pages/{path+}",
        _get("/api/v1/projects/{project}/kb/pages/capacity/page-{n}.md"),
    ),
    Traffic(
        "page write",
        0.05,
        "PUT",
        "PUT /api/v1/projects/{id}/kb/pages/{path+}",
        _json("PUT", "/api/v1/projects/{project}/kb/pages/capacity/page-{n}.md", lambda p, n: {"content": PAGE}),
        background=True,
    ),
    Traffic(
        "page search",
        0.05,
        "GET",
        "GET /api/v1/projects/{id}/kb/search",
        _get("/api/v1/projects/{project}/kb/search", q="capacity"),
    ),
    Traffic(
        "kb sync (listing)",
        0.03,
        "GET",
        "GET /api/v1/projects/{id}/kb/pages",
        _get("/api/v1/projects/{project}/kb/pages", meta="1"),
    ),
    Traffic(
        "verb: knowledge.list",
        0.08,
        "POST",
        "POST /v/knowledge.list",
        _json("POST", "/v/knowledge.list", lambda p, n: {}, {"workspace": "{project}"}),
    ),
    Traffic(
        "verb: capture.create",
        0.02,
        "POST",
        "POST /v/capture.create",
        _json(
            "POST",
            "/v/capture.create",
            lambda p, n: {"body": f"The colony moved the queen's chamber north ({n}).", "title": "survey"},
            {"workspace": "{project}"},
        ),
    ),
    Traffic("mcp: knowledge_search", 0.10, "POST", "POST /mcp", _mcp("knowledge_search", {"q": "launch"})),
    Traffic(
        "mcp: brain_put",
        0.04,
        "POST",
        "POST /mcp",
        _mcp("brain_put", {"path": "/notes/capacity.md", "content": "a scratch note"}),
    ),
    Traffic("jobs", 0.04, "GET", "GET /knowledge/jobs", _get("/knowledge/jobs", project="{project}")),
    Traffic("feed", 0.04, "GET", "GET /knowledge/feed", _get("/knowledge/feed", project="{project}")),
    Traffic("entities", 0.04, "GET", "GET /knowledge/entities", _get("/knowledge/entities", project="{project}")),
    Traffic("who am I", 0.02, "GET", "GET /knowledge/me", _get("/knowledge/me")),
)
"""The documented traffic mix (shares sum to 1)."""


@dataclass
class Replay:
    client: httpx.Client
    projects: tuple[str, ...]
    missions: dict[str, str]
    tokens: dict[str, str]  # token hash -> what it is (principal, mission)


@dataclass
class Footprint:
    """What one request of a kind costs, averaged over its repeats."""

    units: dict[str, float] = field(default_factory=dict)  # normalized partition -> units a request
    scans: set[str] = field(default_factory=set)
    dynamodb_requests: float = 0.0
    forager_calls: float = 0.0
    invocations: dict[str, float] = field(default_factory=dict)
    statuses: list[int] = field(default_factory=list)


# ------------------------------------------------------------------------------ the replay
def replay(stack: Any) -> dict[str, Footprint]:
    """Every kind of :data:`MIX` made :data:`REPEATS` times on the local stack, its footprint each."""
    template = Template()
    tables = _tables(template)
    with httpx.Client(
        base_url=stack.url, headers={"Authorization": f"Bearer {stack.admin_token}"}, timeout=60
    ) as client:
        setup = _setup(stack, client)
        result: dict[str, Footprint] = {}
        snapshot = _settled(client, BACKGROUND_SECONDS)
        for traffic in MIX:
            result[traffic.name], snapshot = _measure(setup, traffic, tables, snapshot)
    return result


def _setup(stack: Any, client: httpx.Client) -> Replay:
    projects = ("falcon", "capacity-a", "capacity-b")
    for project in projects[1:]:
        stack.admin("project", "create", project, "--organization", "colony")
        stack.admin("principal", "grant", "local-admin", "--role", f"{project}=admin")  # binding is its admin's act
        bound = client.post("/knowledge/project-map", json={"project": project, "knowledge_base": "falcon"})
        bound.raise_for_status()
    stack.admin(
        "role", "set", "capacity", "--tool", "knowledge_search", "--tool", "brain_put", "--project-role", "admin"
    )
    missions = {
        p: stack.admin("mission", "start", p, "--role", "capacity", "--autonomy", "L2").strip() for p in projects
    }
    tokens = {hashlib.sha256(stack.admin_token.encode()).hexdigest(): "<principal>"}
    tokens |= {hashlib.sha256(m.encode()).hexdigest(): "<principal>" for m in missions.values()}
    replay = Replay(client, projects, missions, tokens)
    for project in projects:  # the pages the reads read
        for n in range(REPEATS):
            request = _json(
                "PUT", "/api/v1/projects/{project}/kb/pages/capacity/page-{n}.md", lambda p, n: {"content": PAGE}
            )(replay, project, n)
            client.send(request).raise_for_status()
    return replay


def _metrics(client: httpx.Client) -> dict[str, Any]:
    answer = client.get("/_local/metrics")
    answer.raise_for_status()
    return dict(answer.json())


def _settled(client: httpx.Client, quiet: float) -> dict[str, Any]:
    """The stack's metrics once no invocation has started for ``quiet`` seconds (the bus's work done)."""
    seen = _metrics(client)
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < quiet:
        time.sleep(0.2)
        now = _metrics(client)
        if now.get("invocations") != seen.get("invocations"):
            quiet_since = time.monotonic()
        seen = now
    return seen


def _measure(
    setup: Replay, traffic: Traffic, tables: dict[str, Table], before: dict[str, Any]
) -> tuple[Footprint, dict[str, Any]]:
    """``traffic``'s footprint, from the settled metrics ``before`` it; and the settled metrics after."""
    found = Footprint()
    for n in range(REPEATS):
        project = setup.projects[n % len(setup.projects)]
        answer = setup.client.send(traffic.make(setup, project, n))
        refused = answer.status_code >= 400 or (traffic.route == "POST /mcp" and "error" in str(_tool_result(answer)))
        if refused:  # the model weighs work done, not a refusal
            raise RuntimeError(f"{traffic.name} on {project}: {answer.status_code} {answer.text[:300]}")
        found.statuses.append(answer.status_code)
    after = _settled(setup.client, BACKGROUND_SECONDS if traffic.background else QUIET_SECONDS)
    counts = difference(before, after)
    for name, count in counts.items():
        if name.startswith("invocations:"):
            found.invocations[name.removeprefix("invocations:")] = count / REPEATS
        elif name.startswith("dynamodb:"):
            found.dynamodb_requests += count / REPEATS
        elif name.startswith("forager:"):
            found.forager_calls += count / REPEATS
    units: dict[str, float] = defaultdict(float)
    for key, value in footprint_difference(before, after).items():
        partition = _partition(key, tables, setup)
        if partition is None:
            continue
        if partition.endswith("|scan"):
            found.scans.add(partition)
        units[partition] += value / REPEATS
    found.units = {k: round(v, 3) for k, v in sorted(units.items())}
    return found, after


def _tool_result(answer: httpx.Response) -> object:
    """A tool call's JSON-RPC error, or its result when the tool itself refused (``isError``)."""
    document = answer.json()
    result = document.get("result") or {}
    return document.get("error") or (result.get("structuredContent") if result.get("isError") else None) or ""


# ------------------------------------------------------------------------------ partitions
@dataclass(frozen=True)
class Table:
    logical_id: str
    hash_keys: dict[str, str]  # index name ("" for the table) -> its partition key attribute


def _tables(template: Template) -> dict[str, Table]:
    found = {}
    for logical_id, resource in template.of_type("AWS::DynamoDB::Table").items():
        props = resource["Properties"]
        keys = {"": _hash(props["KeySchema"])}
        for index in props.get("GlobalSecondaryIndexes", []) + props.get("LocalSecondaryIndexes", []):
            keys[index["IndexName"]] = _hash(index["KeySchema"])
        found[template.physical_name(logical_id)] = Table(logical_id, keys)
    for logical_id in template.of_type("AWS::S3::Bucket"):
        found[template.physical_name(logical_id)] = Table(logical_id, {})
    return found


def _hash(schema: list[dict[str, str]]) -> str:
    return next(k["AttributeName"] for k in schema if k["KeyType"] == "HASH")


_HEX = re.compile(r"[0-9a-f]{16,}")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SHARD = re.compile(r"#\d$")
_PAGE = re.compile(r"/(?:fs/)?capacity/page-\d+\.md")
_UNIQUE = re.compile(r"(?:ws|cap|kn|job|row|evt)[-_][0-9A-Za-z]{6,}")


def normalized(value: str, setup: Replay) -> str:
    """A partition key's value with what varies put as a placeholder: ``<project>``,
    ``<principal>`` (a token's or a mission's hash), ``<page>``, ``<id>`` (what a request makes anew)."""
    for hashed, placeholder in setup.tokens.items():
        value = value.replace(hashed, placeholder)
    value = _PAGE.sub("<page>", value)
    for project in sorted(setup.projects, key=len, reverse=True):
        value = value.replace(project, "<project>")
    value = _SHARD.sub("#<shard>", value)  # a key spread over shards: all of them as one (conservative)
    value = _UUID.sub("<id>", value)
    value = _HEX.sub("<id>", value)
    return _UNIQUE.sub("<id>", value)


def _partition(key: str, tables: dict[str, Table], setup: Replay) -> str | None:
    """``<Table>[.<index>] <key>=<value> <kind>`` for one footprint entry (None: not weighed)."""
    service, where, index, attributes, kind = key.split("|")
    table = tables.get(where)
    if table is None:
        return None
    if service == "s3":
        return f"s3 {table.logical_id} {normalized(index, setup) or '/'} {kind}"
    name = table.logical_id + (f".{index}" if index else "")
    if kind == "scan":
        return f"{name} * scan"
    attribute = table.hash_keys.get(index)
    value = json.loads(attributes).get(attribute) if attribute else None
    if value is None:
        return None
    return f"{name} {attribute}={normalized(str(value), setup)} {kind}"


def entity_share(partition: str) -> float:
    """How much of a kind's traffic lands on one such partition (see the module's note)."""
    if "<id>" in partition:
        return 0.0
    if "<page>" in partition:
        return BUSIEST_PAGE
    if "<project>" in partition:
        return BUSIEST_PROJECT
    if "<principal>" in partition:
        return BUSIEST_PRINCIPAL
    return 1.0


# ------------------------------------------------------------------------------ the model
@dataclass
class Limit:
    what: str
    per_request: float  # units (or requests) a mix request puts on it, after the entity share
    ceiling: float

    @property
    def breaks_at(self) -> float:
        return math.inf if self.per_request <= 0 else self.ceiling / self.per_request


def limits(footprints: dict[str, Footprint], template: Template) -> list[Limit]:
    """Every limit the mix meets, with what one request of the mix puts on it."""
    load: dict[str, float] = defaultdict(float)
    for traffic in MIX:
        for partition, units in footprints[traffic.name].units.items():
            if partition.endswith(" scan") or partition == SETTINGS:
                continue
            load[partition] += traffic.share * units * entity_share(partition)
    concurrency = sum(traffic.share * duration_seconds(footprints[traffic.name]) for traffic in MIX)
    if any(SETTINGS in footprints[traffic.name].units for traffic in MIX):  # a read a container, every 5 s
        load[f"{SETTINGS} (a container's, every {SETTINGS_CACHE_SECONDS:g} s)"] = concurrency / SETTINGS_CACHE_SECONDS
    found = []
    for partition, per_request in load.items():
        if partition.startswith("s3 "):
            ceiling = S3_GET_CEILING if partition.endswith(" get") else S3_PUT_CEILING
        else:
            ceiling = WRITE_CEILING if partition.endswith(" write") else READ_CEILING
        found.append(Limit(partition, per_request, ceiling))
    for route, share in _route_shares().items():
        rate, _ = throttle(template, route)
        found.append(Limit(f"API throttle {route}", share, rate))
    found.append(Limit("Lambda concurrency (account quota)", concurrency, LAMBDA_CONCURRENCY))
    found.append(Limit("API Gateway requests (account quota)", 1.0, API_ACCOUNT_RPS))
    return sorted(found, key=lambda limit: limit.breaks_at)


def _route_shares() -> dict[str, float]:
    shares: dict[str, float] = defaultdict(float)
    for traffic in MIX:
        shares[traffic.route] += traffic.share
    return dict(shares)


def duration_seconds(footprint: Footprint) -> float:
    return (BASE_MS + DYNAMODB_MS * footprint.dynamodb_requests + FORAGER_MS * footprint.forager_calls) / 1000


def throttle(template: Template, route: str) -> tuple[float, float]:
    """(rate, burst) the template's stage sets for ``route`` (its own setting, else the stage's)."""
    method, path = route.split(" ", 1)
    api = template.resources["KnowledgeApi"]["Properties"]
    chosen = (0.0, 0.0)
    for setting in api.get("MethodSettings", []):
        raw = str(setting.get("ResourcePath", "/*"))
        resource = raw if raw in ("/*", "/") else raw[1:].replace("~1", "/")
        if setting.get("HttpMethod", "*") in ("*", method) and resource in ("/*", path):
            rate = (float(setting.get("ThrottlingRateLimit", 0)), float(setting.get("ThrottlingBurstLimit", 0)))
            if resource == path or chosen == (0.0, 0.0):
                chosen = rate
    return chosen


def needed_throttles() -> dict[str, int]:
    """The rate each route of the mix needs at :data:`TARGET_RPS`, with half again for bursts,
    rounded up to a hundred: what template.yaml's ``MethodSettings`` set."""
    return {route: int(math.ceil(share * TARGET_RPS * 1.5 / 100) * 100) for route, share in _route_shares().items()}


# ------------------------------------------------------------------------------ the report
def report(footprints: dict[str, Footprint], template: Template) -> str:
    found = limits(footprints, template)
    stores = [limit for limit in found if not limit.what.startswith(("API ", "Lambda "))]
    others = [limit for limit in found if limit.what.startswith(("API ", "Lambda "))]
    lines = [
        f"The mix, replayed on the local stack ({REPEATS} requests of each kind across three projects, one at a "
        f"time, with the background work each starts), then scaled: the busiest project carries "
        f"{BUSIEST_PROJECT:.0%} of all requests, the busiest principal {BUSIEST_PRINCIPAL:.0%}, the busiest page "
        f"{BUSIEST_PAGE:.1%}; an invocation is taken to last {BASE_MS:g} ms, plus {DYNAMODB_MS:g} ms a DynamoDB "
        f"request and {FORAGER_MS:g} ms a FORAGER call.",
        "",
        "| request | share | DynamoDB requests | FORAGER calls | invocations |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for traffic in MIX:
        f = footprints[traffic.name]
        functions = ", ".join(f"{name} {count:g}" for name, count in sorted(f.invocations.items()))
        lines.append(
            f"| {traffic.name} (`{traffic.route}`) | {traffic.share:.0%} | {f.dynamodb_requests:g} "
            f"| {f.forager_calls:g} | {functions} |"
        )
    lines += [
        "",
        "The busiest partitions (DynamoDB, and S3 prefixes): what one request of the mix puts on each, and the "
        "mix's rate when it reaches its ceiling.",
        "",
        "| partition | units a request | ceiling /s | reached at (requests/s) | at 10,000/s |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    lines += [_row(limit) for limit in stores[:12]]
    lines += [
        "",
        "The other limits (the API's throttle per method is template.yaml's `MethodSettings`, set from this model):",
        "",
        "| limit | a request of the mix | ceiling /s | reached at (requests/s) | at 10,000/s |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    lines += [_row(limit) for limit in others]
    lines.append("")
    first = stores[0] if stores else None
    if first is not None:
        lines.append(
            f"The first partition to reach its ceiling: `{first.what}`, at {_rate(first.breaks_at)} requests/s."
        )
    for multiple in MULTIPLES:
        lines.append(_at(TODAY_RPS * multiple, multiple, stores, others))
    scans = sorted({scan for f in footprints.values() for scan in f.scans})
    if scans:
        lines.append(
            "Scans on the request path (their cost grows with the table, not the traffic): "
            + ", ".join(f"`{s}`" for s in scans)
            + "."
        )
    return "\n".join(lines) + "\n"


def _at(rate: float, multiple: int, stores: list[Limit], others: list[Limit]) -> str:
    """What the mix meets at ``rate``: partitions over half their ceiling, throttles reached, quotas to raise."""
    over_half = [f"`{limit.what}`" for limit in stores if limit.per_request * rate > limit.ceiling / 2]
    reached = [f"`{limit.what}`" for limit in others if limit.per_request * rate >= limit.ceiling]
    quotas = [
        f"`{limit.what}` ({limit.per_request * rate / limit.ceiling:.0%})"
        for limit in others
        if "quota" in limit.what and limit.per_request * rate > limit.ceiling / 2
    ]
    said = f"At {multiple:,}x today ({rate:,.0f} requests/s): "
    said += (
        f"over half their ceiling: {', '.join(over_half)}; " if over_half else "no partition over half its ceiling; "
    )
    said += f"reached: {', '.join(reached)}; " if reached else "no throttle or quota reached; "
    said += f"quotas to raise first: {', '.join(quotas)}." if quotas else "no quota over half."
    return said


def partitions_over_half(footprints: dict[str, Footprint], template: Template, rate: float = TARGET_RPS) -> list[Limit]:
    """The DynamoDB partitions and S3 prefixes above half their ceiling at ``rate``."""
    return [
        limit
        for limit in limits(footprints, template)
        if not limit.what.startswith(("API ", "Lambda ")) and limit.per_request * rate > limit.ceiling / 2
    ]


def _row(limit: Limit) -> str:
    at_target = limit.per_request * TARGET_RPS / limit.ceiling
    return (
        f"| `{limit.what}` | {limit.per_request:.3g} | {limit.ceiling:,.0f} | {_rate(limit.breaks_at)} "
        f"| {at_target:.0%} |"
    )


def _rate(value: float) -> str:
    return "never" if math.isinf(value) else f"{value:,.0f}"


def write_section(text: str, document: Path = DOCUMENT) -> None:
    """Put ``text`` between the capacity markers of ``document``."""
    current = document.read_text()
    start, end = current.index(BEGIN) + len(BEGIN), current.index(END)
    document.write_text(current[:start] + "\n" + text + current[end:])


def section(document: Path = DOCUMENT) -> str:
    current = document.read_text()
    return current[current.index(BEGIN) + len(BEGIN) : current.index(END)].lstrip("\n")


@contextmanager
def local_stack() -> Iterator[Any]:
    from tests.localstack import launch_stack

    with tempfile.TemporaryDirectory(prefix="capacity-") as state, launch_stack(Path(state)) as stack:
        yield stack


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.capacity", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the report into docs/architecture.md")
    arguments = parser.parse_args(argv)
    with local_stack() as stack:
        footprints = replay(stack)
    text = report(footprints, Template())
    print(text)
    if arguments.write:
        write_section(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
