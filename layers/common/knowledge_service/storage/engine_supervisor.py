"""What the supervisor of a managed engine says it is doing: a JSON file it writes.

Only the local stack supervises an engine (``devstack/supervisor.py``); it names the file in
``DEVSTACK_ENGINE_FILE``. A deployed serverless host has no supervisor and no such file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MAX_BYTES = 16 * 1024


def read_supervisor_state(path: str) -> dict[str, Any] | None:
    """The supervisor's last word, or None when the file is missing, too large or not a JSON object."""
    try:
        with Path(path).open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError:
        return None
    if len(raw) > MAX_BYTES:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
