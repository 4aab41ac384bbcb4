"""Where ``knowledge-admin`` points: the environment ``--local`` (the running local stack's
state) or ``--stack NAME`` (a deployed stack, through CloudFormation) fills, and the names the
command's stores read from it. Both the principals' commands (``cli.py``) and the missions'
(``missions.py``) read it here."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from knowledge_service.errors import BadRequest
from knowledge_service.storage import aws
from knowledge_service.storage.stack import stack_tables

DEFAULT_STATE_DIR = ".devstack"
STATE_DIR_VARIABLE = "DEVSTACK_STATE_DIR"
"""What ``make run`` reads for its state folder: ``--local`` finds the stack the same way."""


def state_dir(named: str | None) -> Path:
    """The local stack's state folder: ``--state-dir``, else ``DEVSTACK_STATE_DIR`` (as ``make run``
    was started), else ``.devstack``."""
    return Path(named or os.environ.get(STATE_DIR_VARIABLE) or DEFAULT_STATE_DIR)


def point_at(args: argparse.Namespace) -> None:
    """Fill the environment from ``--local`` or ``--stack``; without either, it is used as it is."""
    if args.local:
        env_file = state_dir(args.state_dir) / "env"
        if not env_file.exists():
            raise BadRequest(
                "--local",
                f"{env_file} does not exist; is `make run` running? A stack started with "
                f"{STATE_DIR_VARIABLE}=DIR is found with the same {STATE_DIR_VARIABLE}, or --state-dir DIR.",
            )
        for line in env_file.read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep and key and not key.startswith("#"):
                os.environ[key.strip()] = value.strip()
    elif args.stack:
        os.environ.update(stack_tables(aws.client("cloudformation"), args.stack))
    aws.reset_clients()


def required(variable: str) -> str:
    value = os.environ.get(variable)
    if not value:
        raise BadRequest(variable, "is not set; use --local, --stack NAME, or set it.")
    return value
