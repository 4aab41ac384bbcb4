"""``python -m devstack invoke <Function> <event.json>``: ``sam local invoke -e`` without Docker.

Runs one of the template's functions on an event, in this process, against the running
local stack (``make run``): the environment its functions see comes from the stack's
``<state dir>/env`` (the emulator's endpoint, the dummy credentials, every table), the
function's own variables (``POWERTOOLS_SERVICE_NAME``) from the template, Lambda's
``AWS_LAMBDA_*`` around the call. FORAGER is whatever that stack bound (the simulator,
by default). The answer is printed as JSON on stdout (what the function prints, its logs and
metrics, on stderr); a failure as Lambda reports one,
``{"errorType": ..., "errorMessage": ...}``, with exit status 1.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any
from unittest import mock

from devstack.events import SAMPLE_TOKEN
from devstack.lambdas import FakeLambdaContext, load_handler
from devstack.stack import DEFAULT_STATE_DIR, ENV_FILE
from devstack.template import Template

USAGE = "usage: python -m devstack invoke <FunctionLogicalId> <event.json>   (make invoke FN=... EVENT=...)"


class InvokeError(Exception):
    """The invocation could not be set up (no running stack, no such function, a bad event)."""


def stack_environment(state_dir: Path) -> dict[str, str]:
    """The variables the running stack gave its functions (``<state dir>/env``)."""
    path = state_dir / ENV_FILE
    if not path.exists():
        raise InvokeError(f"{path} does not exist: start the local stack first (make run).")
    lines = path.read_text(encoding="utf-8").splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))


def invoke(function: str, event: Any, state_dir: Path, template: Template | None = None) -> tuple[bool, Any]:
    """``(True, answer)`` or ``(False, {"errorType", "errorMessage"})``, as Lambda reports them."""
    template = template or Template()
    functions = template.functions()
    if function not in functions:
        raise InvokeError(f"The template declares no function {function!r}; it has {', '.join(sorted(functions))}.")
    props = functions[function]["Properties"]
    shared = stack_environment(state_dir)
    own = {k: v for k, v in template.function_environment(function).items() if k not in shared}
    name = template.physical_name(function)
    lambda_env = {
        "AWS_LAMBDA_FUNCTION_NAME": name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(template.function_memory(function)),
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
    }
    # What the function prints (its logs, its metrics' EMF lines) goes to stderr, as with
    # ``sam local invoke``: stdout carries the answer alone.
    with mock.patch.dict(os.environ, {**shared, **own, **lambda_env}), contextlib.redirect_stdout(sys.stderr):
        from knowledge_service.runtime import reset_runtime

        reset_runtime()
        try:
            handler = load_handler(template.path.parent / props["CodeUri"], props["Handler"], f"lambda_{function}")
            context = FakeLambdaContext(
                function_name=name,
                memory_limit_in_mb=template.function_memory(function),
                timeout_seconds=template.function_timeout(function),
                region=template.region,
                account_id=template.account_id,
            )
            try:
                answer = handler(_as_the_stacks_admin(json.loads(json.dumps(event)), state_dir), context)
            except Exception as error:
                return False, {"errorType": type(error).__name__, "errorMessage": str(error)}
            return True, json.loads(json.dumps(answer))
        finally:
            reset_runtime()


def _as_the_stacks_admin(event: Any, state_dir: Path) -> Any:
    """The event with the sample events' placeholder token replaced by the stack's admin token."""
    kept = state_dir / "admin.token"
    if not isinstance(event, dict) or not kept.exists():
        return event
    placeholder, admin = f"Bearer {SAMPLE_TOKEN}", f"Bearer {kept.read_text(encoding='utf-8').strip()}"
    for name in ("headers", "multiValueHeaders"):
        for key, value in (event.get(name) or {}).items():
            if key.lower() == "authorization":
                event[name][key] = (
                    [admin if v == placeholder else v for v in value]
                    if isinstance(value, list)
                    else (admin if value == placeholder else value)
                )
    return event


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(USAGE, file=sys.stderr)
        return 2
    function, event_path = argv
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        print(f"devstack invoke: cannot read the event {event_path}: {error}", file=sys.stderr)
        return 2
    state_dir = Path(os.environ.get("DEVSTACK_STATE_DIR") or DEFAULT_STATE_DIR)
    try:
        ok, answer = invoke(function, event, state_dir)
    except InvokeError as error:
        print(f"devstack invoke: {error}", file=sys.stderr)
        return 2
    print(json.dumps(answer, indent=2))
    return 0 if ok else 1
