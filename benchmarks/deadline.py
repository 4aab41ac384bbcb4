"""Time to answer, per route, while FORAGER trickles, stalls after its headers, or is slow
past the call's deadline (``python -m benchmarks.deadline``; minutes: up to 8 s a call).

``python -m benchmarks.deadline slow:7 /knowledge/feed`` plays one mode with another delay
on the routes whose path contains ``/knowledge/feed``: each call answers inside its own
deadline, so only the request's budget bounds a route that makes several.

In-process, as ``benchmarks/reads.py``: moto with the template's tables, the simulator on
loopback, each route's handler called with the request ``devstack.samples`` builds and a
Lambda context counting down from the function's own Timeout. The template's defaults hold:
8 s per FORAGER call, a request budget of the remaining time less 2 s, at most 25 s.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from benchmarks.emulator import BEARER, emulated
from devstack.events import rest_event
from devstack.lambdas import FakeLambdaContext, load_handler
from devstack.samples import request_for
from devstack.template import Template
from knowledge_service.edge.catalog import knowledge_routes

FAULTS: dict[str, float] = {"trickle": 1.0, "stall": 120.0, "slow": 60.0}
"""Each mode and its ``delay_seconds``: a byte a second; headers then two minutes of nothing;
a whole answer a minute late."""


def measure(modes: list[str], delays: dict[str, float] | None = None, only: str = "") -> list[dict[str, Any]]:
    delays = {**FAULTS, **(delays or {})}
    template = Template()
    functions = {(r.method, r.path): r for r in template.routes()}
    rows: list[dict[str, Any]] = []
    with emulated("StatusFunction") as (_, sim):
        assert sim is not None
        for route in [r for r in knowledge_routes() if only in r.path]:
            spec = functions[(route.method, route.path)]
            handler = load_handler(spec.handler_dir, spec.handler, f"lambda_{spec.function}")
            target, body = request_for(route)
            path, _, query = target.partition("?")
            params = dict(pair.split("=", 1) for pair in query.split("&"))
            row: dict[str, Any] = {"route": f"{route.method} {route.path}"}
            for mode in modes:
                sim.set_fault(mode, delay_seconds=delays[mode])
                event = rest_event(
                    route.method,
                    path,
                    resource=route.path,
                    query=params,
                    body=body,
                    headers={"Content-Type": "application/json", **BEARER},
                )
                context = FakeLambdaContext(spec.function, timeout_seconds=template.function_timeout(spec.function))
                started = time.monotonic()
                answer = handler(event, context)
                elapsed = time.monotonic() - started
                sim.clear_faults()
                code = json.loads(answer["body"]).get("code") or "ok"
                row[mode] = {"status": answer["statusCode"], "code": code, "seconds": round(elapsed, 2)}
                print(f"{row['route']:<44} {mode:<8} {answer['statusCode']} {code:<22} {elapsed:6.2f}s", flush=True)
            rows.append(row)
    return rows


def table(rows: list[dict[str, Any]], modes: list[str]) -> str:
    head = "| route | " + " | ".join(f"{m}: answer | {m}: s" for m in modes) + " |"
    rule = "| --- | " + " | ".join("--- | ---:" for _ in modes) + " |"
    lines = [head, rule]
    for row in rows:
        cells = [f"`{row[m]['status']} {row[m]['code']}` | {row[m]['seconds']:.2f}" for m in modes]
        lines.append(f"| `{row['route']}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if not a.startswith("/")]
    only = next((a for a in sys.argv[1:] if a.startswith("/")), "")
    chosen = [a.partition(":")[0] for a in arguments] or list(FAULTS)
    delays = {a.partition(":")[0]: float(a.partition(":")[2]) for a in arguments if ":" in a}
    print(table(measure(chosen, delays, only), chosen))
