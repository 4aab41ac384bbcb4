"""``python -m local_engine``: run the simulator in the foreground.

Logs one line per request to stderr (never the token) and stops on SIGINT / SIGTERM.
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
from local_engine.serving.server import start_engine

TOKEN_ENV = "LOCAL_ENGINE_TOKEN"  # noqa: S105 - a variable name, not a secret


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m local_engine",
        description="A stateful FORAGER simulator (test double) on loopback.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind")
    parser.add_argument("--port", type=int, default=8790, help="API port (0: any free)")
    parser.add_argument("--control-port", type=int, default=8791, help="control port (0: any free)")
    parser.add_argument(
        "--token",
        default=os.environ.get(TOKEN_ENV),
        help=f"the bearer credential the API requires (default: ${TOKEN_ENV})",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --host (the control port has no authentication)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="the engine's data folder: its SQLite database and uploaded files (default: a temporary folder)",
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
        sim = start_engine(
            args.host,
            args.port,
            args.control_port,
            args.token,
            allow_remote=args.allow_remote,
            data_dir=args.data,
            state_file=args.data / "state.json" if args.data else None,
            input_roots=args.input_root or _roots_from_env(),
            workers=default_workers() if args.workers is None else args.workers,
        )
    except (OSError, ValueError) as exc:
        log.error("forager simulator: cannot start: %s", exc)  # noqa: TRY400 - one line, no traceback
        return 1

    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    log.warning(
        "forager simulator: api %s control %s (instance %s)",
        sim.url,
        sim.control_url,
        sim.state.instance_id,
    )
    try:
        while not stop.wait(0.5):
            pass
    finally:
        sim.stop()
    log.warning("forager simulator: stopped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
