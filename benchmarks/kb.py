"""The ``kb`` command against the local stack: export and import of a 2,000-page base.

The stack is ``python -m devstack`` in its own process (as the e2e tier starts it); a
fresh project and the human admin's token. Measured, each with its seconds and the HTTP
requests the command made: the first import of a 2,000-page folder (every page a
``create``), the export of that base, an import after 20 pages were edited in the folder,
and an import that changes nothing.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kb import sync
from kb.hub import Config, Hub
from tests.e2e.conftest import launch_stack

PAGES = 2000
DIRECTORIES = 40


def _page(n: int) -> str:
    return (
        f"---\ntype: Concept\ntitle: Page {n}\n---\n# Page {n}\n\n"
        f"[next](p{(n + DIRECTORIES) % PAGES:05d}.md) [home](/fs/index.md)\n" + "x" * 1000 + "\n"
    )


def _seed(folder: Path) -> None:
    links = " ".join(f"[d{d:02d}](d{d:02d}/index.md)" for d in range(DIRECTORIES))
    (folder / "index.md").write_text(f"---\nokf_version: 1\ntitle: Home\n---\n# Home\n{links} [log](log.md)\n")
    (folder / "log.md").write_text("---\ntype: Reference\n---\n# Log\n")
    for d in range(DIRECTORIES):
        (folder / f"d{d:02d}").mkdir()
    for n in range(PAGES - 2):
        (folder / f"d{n % DIRECTORIES:02d}" / f"p{n:05d}.md").write_text(_page(n))


def _timed(name: str, config: Config, run: Callable[[Hub], int]) -> dict[str, Any]:
    with Hub(config) as hub:
        sink = io.StringIO()
        started = time.perf_counter()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(io.StringIO()):
            code = run(hub)
        seconds = time.perf_counter() - started
        assert code == 0, sink.getvalue()[-2000:]
        return {
            "step": name,
            "pages": PAGES,
            "seconds": round(seconds, 2),
            "http_requests": hub.requests,
            "summary": sink.getvalue().splitlines()[-1] if name.startswith("import") else "",
        }


def measure() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "stack").mkdir()
        with launch_stack(root / "stack") as stack:
            stack.admin("project", "create", "kbbench", "--organization", "colony")
            stack.admin("principal", "grant", "local-admin", "--role=kbbench=admin")
            config = Config(stack.url, stack.admin_token, "kbbench")
            seed, out = root / "seed", root / "out"
            seed.mkdir()
            _seed(seed)
            rows = [_timed("import: 2,000 creates", config, lambda hub: sync.import_(hub, seed, False, False))]
            rows.append(_timed("export: 2,000 pages", config, lambda hub: sync.export(hub, out, False)))
            for n in range(20):
                page = out / f"d{n % DIRECTORIES:02d}" / f"p{n:05d}.md"
                page.write_text(page.read_text() + "edited\n")
            rows.append(_timed("import: 20 updates", config, lambda hub: sync.import_(hub, out, False, False)))
            rows.append(_timed("import: nothing changed", config, lambda hub: sync.import_(hub, out, False, False)))
    return rows


if __name__ == "__main__":
    for row in measure():
        print(row)
