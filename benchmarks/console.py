"""The console's first load (issue 27): what a signed-in person's browser transfers to draw the
Connection section, and how long until its status card is visible, cold and warm, on loopback.

``python -m devstack`` in its own process (``benchmarks.load.local_stack``), Debian's headless
Chromium driven by Playwright. A fresh browser context is a cold cache; the same context loading
the page again is a warm one (the console's files answer ``Cache-Control: no-cache`` with an
ETag, so a warm load revalidates each file and is answered 304). The transfer is what Chromium's
network layer counts on the wire for each response (Chrome DevTools Protocol
``Network.loadingFinished.encodedDataLength``: headers and the compressed body), split into the
console's own files (``/console/...``) and the API calls it makes. The budget is the issue's:
at most 150 KiB compressed for the first load, every asset included.

The wiki's own load (issue 41) is measured after the first load, in the same page: the address
moves to a wiki page holding a fenced ``python`` and a ``bash`` block, and the clock stops when the
python block is coloured. What it transfers is what the Wiki section adds to the first load: its
modules, markdown-it, diff, Prism's core and the two grammars, and the pages API's answers (the
listing, the page, its backlinks). Warm, the same context opens the page's address in a new page
(the console and the wiki together, every file revalidated).

Every context blocks the console's service worker: once it controls the page, the files it
fetches are not counted by the page's network layer (a run with it counted 0 B for the wiki's
files and for ``screens/connection.js``), and as it asks the network first, the wire carries the
same bytes whether the page or the worker asks.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from playwright.sync_api import BrowserContext, Page, sync_playwright

from benchmarks.load import local_stack

ROUNDS = 5
BUDGET_BYTES = 150 * 1024
CHROMIUM = Path(os.environ.get("CONSOLE_CHROMIUM", "/usr/bin/chromium"))
STATUS_CARD = "Status: Working"
WIKI_PROJECT = "falcon"
WIKI_PAGE = "/fs/bench/wiki-load.md"
COLOURED = ".page-body pre code.highlighted .tok-keyword"
WIKI_CONTENT = """---
type: Runbook
title: Rotate the signing keys
status: published
tags: [ops, security]
---
# Rotate the signing keys

Keys are rotated every 90 days, or at once when one may have leaked. See [the runbook index](index.md).

## Before you start

- You hold the `security-admin` role.
- The new key pair is generated on an air-gapped machine.

## Rotate

```bash
export KEY_ID=$(openssl rand -hex 8)
aws kms create-alias --alias-name "alias/signing-$KEY_ID" --target-key-id "$NEW_KEY"
```

```python
from datetime import UTC, datetime, timedelta


def due(last_rotated: datetime, every: timedelta = timedelta(days=90)) -> bool:
    \"\"\"Whether the key is due for rotation.\"\"\"
    return datetime.now(UTC) - last_rotated >= every
```

| step | who | when |
| --- | --- | --- |
| announce | on-call | a day before |
| rotate | security-admin | the window |
"""


@dataclass
class Transfer:
    """Bytes on the wire per response of one page load, by URL."""

    by_url: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)
    encodings: dict[str, str] = field(default_factory=dict)

    def assets(self) -> int:
        return sum(size for url, size in self.by_url.items() if "/console/" in url)

    def api(self) -> int:
        return sum(size for url, size in self.by_url.items() if "/console/" not in url)


def watch(context: BrowserContext, page: Page) -> Transfer:
    """Count every response the page receives from now on (CDP Network events)."""
    transfer = Transfer()
    urls: dict[str, str] = {}
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")

    def received(event: dict[str, Any]) -> None:
        response = event["response"]
        urls[event["requestId"]] = response["url"]
        transfer.statuses[response["url"]] = response["status"]
        headers = {name.lower(): value for name, value in response.get("headers", {}).items()}
        transfer.encodings[response["url"]] = headers.get("content-encoding", "")

    def finished(event: dict[str, Any]) -> None:
        url = urls.get(event["requestId"])
        if url is not None:
            transfer.by_url[url] = transfer.by_url.get(url, 0) + int(event["encodedDataLength"])

    cdp.on("Network.responseReceived", received)
    cdp.on("Network.loadingFinished", finished)
    return transfer


def sign_in(context: BrowserContext, base_url: str, token: str) -> None:
    """The session cookie in the context, as the Sign in button gets it."""
    answer = context.request.post(
        base_url + "/knowledge/session",
        headers={"Authorization": f"Bearer {token}", "X-Knowledge-Console": "1"},
        data={},
    )
    if answer.status != 200:
        raise RuntimeError(f"POST /knowledge/session answered {answer.status}: {answer.text()}")


def load_once(page: Page, url: str) -> float:
    """Seconds from navigation to the status card visible."""
    started = time.perf_counter()
    page.goto(url)
    page.get_by_role("heading", name=STATUS_CARD).wait_for(state="visible", timeout=30_000)
    return time.perf_counter() - started


def first_load(context: BrowserContext, base_url: str) -> tuple[float, Transfer]:
    page = context.new_page()
    transfer = watch(context, page)
    seconds = load_once(page, base_url + "/console/")
    page.wait_for_load_state("networkidle")
    page.close()
    return seconds, transfer


def wiki_address(base_url: str, project: str = WIKI_PROJECT) -> str:
    return f"{base_url}/console/#/wiki?project={project}&page={quote(WIKI_PAGE, safe='')}"


def write_wiki_page(base_url: str, token: str, project: str = WIKI_PROJECT) -> None:
    """The page the wiki's load opens, written through the pages API as the project's admin."""
    answer = httpx.put(
        f"{base_url}/api/v1/projects/{project}/kb/pages/{WIKI_PAGE.removeprefix('/fs/')}",
        headers={"Authorization": f"Bearer {token}"},
        json={"content": WIKI_CONTENT},
        timeout=30.0,
    )
    if answer.status_code != 200:
        raise RuntimeError(f"PUT the wiki's page answered {answer.status_code}: {answer.text}")


def wiki_load(context: BrowserContext, base_url: str) -> tuple[float, float, Transfer]:
    """The first load, then the wiki's own: (seconds to the status card, seconds from the move to
    the wiki page to its python block coloured, what the move transferred)."""
    page = context.new_page()
    first = load_once(page, base_url + "/console/")
    page.wait_for_load_state("networkidle")
    transfer = watch(context, page)
    started = time.perf_counter()
    page.goto(wiki_address(base_url))  # the same document: the address moves, as a click on a link does
    page.locator(COLOURED).first.wait_for(state="visible", timeout=30_000)
    seconds = time.perf_counter() - started
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(200)  # the last answers' loadingFinished events
    page.close()
    return first, seconds, transfer


def wiki_warm(context: BrowserContext, base_url: str) -> float:
    """Seconds from opening a wiki page's address in a new page (a warm cache) to its code coloured."""
    page = context.new_page()
    started = time.perf_counter()
    page.goto(wiki_address(base_url))
    page.locator(COLOURED).first.wait_for(state="visible", timeout=30_000)
    seconds = time.perf_counter() - started
    page.close()
    return seconds


def wiki_part(url: str) -> str:
    """What a file of the wiki's load is for, as the report groups them."""
    name = url.split("/console/", 1)[1] if "/console/" in url else ""
    if not name:
        return "pages API"
    if "markdown-it" in name:
        return "markdown-it"
    if "diff.module" in name:
        return "diff"
    if "prism" in name or "highlight" in name:
        return "highlighting"
    return "the wiki's modules"


def measure(rounds: int = ROUNDS) -> dict[str, Any]:
    cold: list[float] = []
    warm: list[float] = []
    transfers: list[Transfer] = []
    warm_transfers: list[Transfer] = []
    wiki_cold: list[float] = []
    wiki_warm_s: list[float] = []
    wiki_transfers: list[Transfer] = []
    with local_stack() as stack, sync_playwright() as driver:
        write_wiki_page(stack.url, stack.admin_token)
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            for _ in range(rounds):
                context = browser.new_context(viewport={"width": 1280, "height": 800}, service_workers="block")
                sign_in(context, stack.url, stack.admin_token)
                seconds, transfer = first_load(context, stack.url)
                cold.append(seconds)
                transfers.append(transfer)
                seconds, transfer = first_load(context, stack.url)
                warm.append(seconds)
                warm_transfers.append(transfer)
                context.close()
                context = browser.new_context(viewport={"width": 1280, "height": 800}, service_workers="block")
                sign_in(context, stack.url, stack.admin_token)
                _, seconds, transfer = wiki_load(context, stack.url)
                wiki_cold.append(seconds)
                wiki_transfers.append(transfer)
                wiki_warm_s.append(wiki_warm(context, stack.url))
                context.close()
        finally:
            browser.close()
    first = transfers[-1]
    wiki = wiki_transfers[-1]
    wiki_parts: dict[str, int] = {}
    for url, size in wiki.by_url.items():
        wiki_parts[wiki_part(url)] = wiki_parts.get(wiki_part(url), 0) + size
    return {
        "rounds": rounds,
        "assets_bytes": first.assets(),
        "api_bytes": first.api(),
        "total_bytes": first.assets() + first.api(),
        "budget_bytes": BUDGET_BYTES,
        "within_budget": first.assets() + first.api() <= BUDGET_BYTES,
        "files": {
            url.split("/console/", 1)[1] or "index.html": size
            for url, size in first.by_url.items()
            if "/console/" in url
        },
        "encodings": {
            url.split("/console/", 1)[1] or "index.html": enc
            for url, enc in first.encodings.items()
            if "/console/" in url
        },
        "warm_assets_bytes": warm_transfers[-1].assets(),
        "cold_ms_median": round(statistics.median(cold) * 1000, 1),
        "cold_ms_min": round(min(cold) * 1000, 1),
        "warm_ms_median": round(statistics.median(warm) * 1000, 1),
        "warm_ms_min": round(min(warm) * 1000, 1),
        "wiki": {
            "assets_bytes": wiki.assets(),
            "api_bytes": wiki.api(),
            "total_bytes": wiki.assets() + wiki.api(),
            "with_first_load_bytes": first.assets() + first.api() + wiki.assets() + wiki.api(),
            "within_budget": first.assets() + first.api() + wiki.assets() + wiki.api() <= BUDGET_BYTES,
            "parts": wiki_parts,
            "files": {url.split("/console/", 1)[1]: size for url, size in wiki.by_url.items() if "/console/" in url},
            "cold_ms_median": round(statistics.median(wiki_cold) * 1000, 1),
            "cold_ms_min": round(min(wiki_cold) * 1000, 1),
            "warm_ms_median": round(statistics.median(wiki_warm_s) * 1000, 1),
            "warm_ms_min": round(min(wiki_warm_s) * 1000, 1),
        },
        "load_average": [round(value, 2) for value in os.getloadavg()],
    }


def report(row: dict[str, Any]) -> None:
    print(f"\nThe console's first load ({row['rounds']} rounds; bytes on the wire, compressed; ms to the status card)")
    print(f"{'':<10}{'assets B':>10}{'API B':>8}{'total B':>9}{'budget B':>10}{'median ms':>11}{'min ms':>8}")
    print(
        f"{'cold':<10}{row['assets_bytes']:>10}{row['api_bytes']:>8}{row['total_bytes']:>9}{row['budget_bytes']:>10}"
        f"{row['cold_ms_median']:>11}{row['cold_ms_min']:>8}"
    )
    print(
        f"{'warm':<10}{row['warm_assets_bytes']:>10}{'':>8}{'':>9}{'':>10}{row['warm_ms_median']:>11}{row['warm_ms_min']:>8}"
    )
    for name, size in sorted(row["files"].items(), key=lambda item: -item[1]):
        print(f"  {name:<40}{size:>8} B  {row['encodings'].get(name) or 'identity'}")
    wiki = row["wiki"]
    print(
        f"\nThe wiki's own load, after the first load (a page with a python and a bash block; ms to the python"
        f" block coloured): {wiki['assets_bytes']} B of files + {wiki['api_bytes']} B of API = {wiki['total_bytes']} B;"
        f" with the first load {wiki['with_first_load_bytes']} B of {row['budget_bytes']} B"
        f" ({'within' if wiki['within_budget'] else 'OVER'} the budget)"
    )
    print(
        f"  cold {wiki['cold_ms_median']} ms median ({wiki['cold_ms_min']} min); warm, console and wiki together"
        f" {wiki['warm_ms_median']} ms median ({wiki['warm_ms_min']} min)"
    )
    for part, size in sorted(wiki["parts"].items(), key=lambda item: -item[1]):
        print(f"  {part:<40}{size:>8} B")
    for name, size in sorted(wiki["files"].items(), key=lambda item: -item[1]):
        print(f"    {name:<38}{size:>8} B")
    print(f"load average {row['load_average']}")
