"""``python -m devstack``: the whole system on loopback until SIGINT/SIGTERM.

``python -m devstack invoke <Function> <event.json>`` instead runs one function on an
event against the running stack (``devstack/invoke.py``, ``make invoke``).

Reads the environment switches (devstack/README.md), starts the stack, prints where
everything is and the admin token, and waits. On a signal it snapshots and stops.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from types import FrameType

from devstack.stack import StackStartError, options_from_env, start_stack


def configure_logging() -> None:
    """The stack's own lines on stderr, through a handler of their own.

    Powertools' ``Logger()`` puts a filter on every handler the root logger has when a
    function module loads, dropping any record whose logger name contains the
    function's service name ("schedule" is in "devstack.schedules"). The stack's loggers
    therefore do not go through the root logger's handlers.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    for name in ("devstack", "local_engine"):
        own = logging.getLogger(name)
        own.setLevel(logging.INFO)
        own.addHandler(handler)
        own.propagate = False
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(levelname)-7s %(name)s: %(message)s"
    )
    # moto's server (werkzeug) would log every AWS call, and add its own handler to do so
    logging.getLogger("werkzeug").setLevel(logging.WARNING)


def main() -> int:
    if sys.argv[1:2] == ["invoke"]:
        from devstack.invoke import main as invoke

        logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
        return invoke(sys.argv[2:])
    configure_logging()
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        stack = start_stack(**options_from_env())
    except StackStartError as error:
        print(f"devstack: {error}", file=sys.stderr)
        return 1
    print(stack.banner(), flush=True)
    try:
        while not stop.wait(1.0):
            pass
    finally:
        logging.getLogger("devstack").info("stopping")
        stack.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
