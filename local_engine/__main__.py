"""``python -m local_engine``: run the engine in the foreground.

Logs one line per request to stderr (never the token) and stops on SIGINT / SIGTERM. With
``--control-port`` it runs the test double instead (``local_engine/double/``): the same engine
with a control port for tests.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from local_engine.ingestion.workers import WORKERS_ENV, default_workers
from local_engine.search import vectors
from local_engine.serving.server import Engine

TOKEN_ENV = "LOCAL_ENGINE_TOKEN"  # noqa: S105 - a variable name, not a secret


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m local_engine",
        description="The local FORAGER engine on loopback.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind")
    parser.add_argument("--port", type=int, default=8790, help="API port (0: any free)")
    parser.add_argument(
        "--control-port",
        type=int,
        default=None,
        help="serve the test double's control port here (0: any free); for tests only, off by default",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get(TOKEN_ENV),
        help=f"the bearer credential the API requires (default: ${TOKEN_ENV})",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --host",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="the engine's data folder: its SQLite database and uploaded files (default: a temporary folder)",
    )
    parser.add_argument(
        "--state-file",
        type=Path,
        default=None,
        help="where the knowledge bases' names and the Idempotency-Keys are kept (default: DATA/state.json)",
    )
    parser.add_argument(
        "--exit-with",
        type=int,
        default=None,
        metavar="PID",
        help="stop when the process PID ends (the local stack that supervises it, even after a kill -9)",
    )
    parser.add_argument(
        "--input-root",
        action="append",
        type=Path,
        default=[],
        help="a folder jobs may import from by path (repeat it; FORAGER_ALLOWED_INPUT_ROOTS); none: any path",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help=f"processes that compute the stages' pure work beside the engine (default: ${WORKERS_ENV}, else one"
        " per core up to two; 0: in the engine's own process)",
    )
    parser.add_argument("--quiet", action="store_true", help="do not log requests")
    return parser


def _roots_from_env() -> list[Path]:
    raw = os.environ.get("FORAGER_ALLOWED_INPUT_ROOTS", "")
    return [Path(root.strip()) for root in raw.split(",") if root.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.token:
        _parser().error(f"--token (or ${TOKEN_ENV}) is required")
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(asctime)s %(message)s",
    )
    log = logging.getLogger("local_engine")
    try:
        engine = _engine(args).start()
    except (OSError, ValueError) as exc:
        log.error("local engine: cannot start: %s", exc)  # noqa: TRY400 - one line, no traceback
        return 1

    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    if args.exit_with is not None:
        threading.Thread(target=_exit_with, args=(args.exit_with, stop), name="exit-with", daemon=True).start()
    control = getattr(engine, "control_url", None)
    log.warning(
        "local engine: api %s%s (instance %s)",
        engine.url,
        f" control {control}" if control else "",
        engine.state.instance_id,
    )
    try:
        while not stop.wait(0.5):
            pass
    finally:
        engine.stop()
    log.warning("local engine: stopped")
    return 0


def _exit_with(pid: int, stop: threading.Event) -> None:
    """Set ``stop`` once the process ``pid`` is gone (this process is then another's child)."""
    while not stop.wait(0.25):
        if os.getppid() != pid:
            logging.getLogger("local_engine").warning("local engine: its supervisor (%s) is gone; stopping", pid)
            stop.set()


def _engine(args: argparse.Namespace) -> Engine:
    options = {
        "allow_remote": args.allow_remote,
        "data_dir": args.data,
        "state_file": args.state_file or (args.data / "state.json" if args.data else None),
        "input_roots": args.input_root or _roots_from_env(),
        "workers": default_workers() if args.workers is None else args.workers,
        "vectors": vectors.enabled(),  # LOCAL_ENGINE_VECTORS, read here once
    }
    if args.control_port is None:
        return Engine(args.host, args.port, args.token, **options)
    from local_engine.double import Double  # the test double, only when its port is asked for

    return Double(args.host, args.port, args.control_port, args.token, **options)


if __name__ == "__main__":
    raise SystemExit(main())
