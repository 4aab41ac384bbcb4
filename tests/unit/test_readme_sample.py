"""The README's sample of what ``make run`` prints is what the local stack's banner prints
(``devstack.stack.Stack.banner``) on the default ports, line for line; only the second
terminal's environment, after its first variable, is elided as ``…``."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from devstack.stack import (
    DEFAULT_API_PORT,
    DEFAULT_FORAGER_PORT,
    DEFAULT_MOTO_PORT,
    STATE_FILE,
    Stack,
)
from devstack.template import ROOT, Template

ELIDED = "    …"
STATE_DIR = Path("/home/you/knowledge-service/.devstack")  # where the README's reader cloned it


def readme_sample() -> list[str]:
    found = re.search(r"```\n(devstack is up.*?)```", (ROOT / "README.md").read_text(), flags=re.DOTALL)
    assert found is not None, "the README shows what make run prints"
    return found.group(1).splitlines()


README_WORKSPACE = Path("/home/you/knowledge-service")
"""The workspace the README's sample shows: the folder make run was started from."""


def default_banner() -> list[str]:
    moto = f"http://127.0.0.1:{DEFAULT_MOTO_PORT}"
    stack = SimpleNamespace(
        aws="local",
        state_dir=STATE_DIR,
        state_file=STATE_DIR / STATE_FILE,
        persist=True,
        url=f"http://127.0.0.1:{DEFAULT_API_PORT}",
        admin_token="ks_…",
        admin_name="local-admin",
        engine=SimpleNamespace(url=f"http://127.0.0.1:{DEFAULT_FORAGER_PORT}", control_url=None),
        workspace=README_WORKSPACE,
        moto_url=moto,
        env={"AWS_REGION": "us-east-1"},
        template=Template(),
        exports=lambda: {"AWS_ENDPOINT_URL": moto, "AWS_ACCESS_KEY_ID": "testing", "AWS_REGION": "us-east-1"},
    )
    # the checkout's own folder is the README's (the uv line names where make install put uv)
    return Stack.banner(stack).replace(str(ROOT), str(README_WORKSPACE)).splitlines()  # type: ignore[arg-type]


def test_the_readmes_make_run_sample_is_what_the_stack_prints() -> None:
    # Given the banner on the default ports, its environment's continuation lines elided
    printed: list[str] = []
    for line in default_banner():
        shown = ELIDED if line.startswith("    ") else line
        if not (shown == ELIDED and printed and printed[-1] == ELIDED):
            printed.append(shown)
    # Then the README shows exactly those lines
    assert readme_sample() == printed
