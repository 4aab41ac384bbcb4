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
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, Page, sync_playwright

from benchmarks.load import local_stack

ROUNDS = 5
BUDGET_BYTES = 150 * 1024
CHROMIUM = Path(os.environ.get("CONSOLE_CHROMIUM", "/usr/bin/chromium"))
STATUS_CARD = "Status: Working"


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


def measure(rounds: int = ROUNDS) -> dict[str, Any]:
    cold: list[float] = []
    warm: list[float] = []
    transfers: list[Transfer] = []
    warm_transfers: list[Transfer] = []
    with local_stack() as stack, sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            for _ in range(rounds):
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                sign_in(context, stack.url, stack.admin_token)
                seconds, transfer = first_load(context, stack.url)
                cold.append(seconds)
                transfers.append(transfer)
                seconds, transfer = first_load(context, stack.url)
                warm.append(seconds)
                warm_transfers.append(transfer)
                context.close()
        finally:
            browser.close()
    first = transfers[-1]
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
    print(f"load average {row['load_average']}")
