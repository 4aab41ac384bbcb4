"""The browser tier: the console driven in Debian's headless Chromium by Playwright, against the
same local stack the end-to-end files on the worker use (the root conftest's ``stack``).

One browser a worker process, a fresh context (cookies, storage, cache) a test. No browser is a
failure, never a skip: ``make browser`` installs one. axe-core runs on every screen a test
visits (``assert_accessible``), and the screen laid out 360 px wide must not scroll sideways.
With ``CONSOLE_SCREENSHOTS=<dir>`` (``make screenshots``) the screens a test names are saved
there, light and dark (1280x800; a 360 px wide page whole) and, for a wide screen, laid out
again 360 px wide (its first three screens); with ``CONSOLE_THROTTLE=<n>`` every page runs its
scripts n times slower (CDP CPU throttling), which widens the windows a race needs without
loading the machine. docs/console.md.
"""

from __future__ import annotations

import io
import itertools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect, sync_playwright

from tests import secrets
from tests.browser import vendoring
from tests.e2e.conftest import move_clock  # noqa: F401 (the e2e tier's clock; its stack is the root conftest's)
from tests.localstack import TLS, LocalStack

CHROMIUM = Path(os.environ.get("CONSOLE_CHROMIUM", "/usr/bin/chromium"))
AXE = vendoring.ROOT / "tests/browser/vendor/axe.min.js"
SCREENSHOTS = os.environ.get("CONSOLE_SCREENSHOTS", "")
SESSION_COOKIE = "__Host-knowledge-session"
NARROW = {"width": 360, "height": 780}
ALL_PERMISSIONS = ("read_status", "read_knowledge", "manage_knowledge", "manage_settings")

_names = itertools.count()

# The local stack answers each call from a function's own process on a shared two-core machine:
# an assertion waits as long as an action does (Playwright's own default is 5 s for expect).
expect.set_options(timeout=15_000)


def unique(prefix: str) -> str:
    return f"{prefix}-{os.getpid()}-{next(_names)}"


# One browser a file, not a session: Playwright's sync API runs an asyncio loop in the test
# thread while it lives, so a later file on the same worker that runs asyncio itself (the MCP
# SDK's tests, asyncio.run) would find "asyncio already running". A file runs whole on one
# worker (--dist loadfile), so the driver stops before the worker's next file starts.
@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    if not CHROMIUM.is_file():
        pytest.fail(f"no browser at {CHROMIUM}: `make browser` installs Debian's chromium (the tier never skips)")
    launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
    yield launched
    launched.close()


@pytest.fixture(scope="session")
def axe_source() -> str:
    problems = [problem for problem in vendoring.mismatches(vendoring.read_lock()) if "axe.min.js" in problem]
    if problems:
        pytest.fail(f"axe-core is not there as pinned: {problems[0]}; `make browser` fetches it")
    return AXE.read_text()


@pytest.fixture
def context(browser: Browser, stack: LocalStack) -> Iterator[BrowserContext]:
    fresh = browser.new_context(base_url=stack.url, viewport={"width": 1280, "height": 800})
    fresh.set_default_timeout(15_000)
    # a page load can meet the console's function cold (and its assets) on two busy cores: it timed
    # out at 15 s under load 8.7, where every read on a loaded page still met its 15 s
    fresh.set_default_navigation_timeout(30_000)
    yield fresh
    fresh.close()


@dataclass
class Console:
    """One person at the console: their page, the stack, and axe."""

    page: Page
    stack: LocalStack
    axe: str
    errors: list[str]

    def open(self) -> None:
        self.page.goto("/console/")

    def sign_in(self, token: str) -> None:
        self.open()
        expect(self.page.get_by_role("heading", name="Sign in")).to_be_visible()
        self.page.get_by_label("Token").fill(token)
        self.page.get_by_role("button", name="Sign in").click()
        expect(self.page.get_by_role("button", name="Sign out")).to_be_visible()
        expect(self.page.get_by_label("Token")).to_have_count(0)
        # The bar grows once it has read the bindings (the bind picker and its form appear above the
        # section tabs), and a click made as it grows lands on the bar, not on the tab it aimed at:
        # the helper returns once the bar has read them, as a person clicks what they see drawn.
        # (A pick does not read them again: a click made while a pick is drawn is still tested.)
        bar = self.page.get_by_role("region", name="Project and knowledge base", include_hidden=True)
        expect(bar).to_have_count(1)
        expect(bar).not_to_contain_text("Reading the bindings…")
        # The session id is a secret from here on: the local stack's log is scanned for it when
        # the stack stops (tests/secrets.py), and it is never in the page's address.
        session_id = self.session_cookie()
        secrets.register(session_id)
        assert session_id not in self.page.url

    def open_menu(self) -> None:
        """At 360 px the bar and the tabs are behind **Menu**: open it when it is there and closed."""
        menu = self.page.get_by_role("button", name="Menu")
        if menu.is_visible() and menu.get_attribute("aria-expanded") == "false":
            menu.click()

    def section(self, title: str) -> None:
        """One click on the section's tab, as a person makes it (the console follows a click made
        while a project pick is still being drawn: test_addresses.py, one click is enough)."""
        self.open_menu()
        self.page.get_by_role("navigation", name="Knowledge sections").get_by_role("link", name=title).click()
        expect(self.page.get_by_role("heading", name=title, level=2)).to_be_visible()

    def pick_project(self, project: str) -> None:
        self.open_menu()
        self.page.get_by_role("combobox", name="Project", exact=True).select_option(project)

    def session_cookie(self) -> str:
        cookies = {cookie["name"]: cookie["value"] for cookie in self.page.context.cookies()}
        assert SESSION_COOKIE in cookies, f"no session cookie, only {sorted(cookies)}"
        return cookies[SESSION_COOKIE]

    def call_with_cookie(self, cookie: str, path: str = "/knowledge/me") -> httpx.Response:
        return httpx.get(self.stack.url + path, cookies={SESSION_COOKIE: cookie}, timeout=30.0, verify=TLS)

    def assert_accessible(self, screen: str, *, dark_too: bool = False) -> None:
        """axe-core on the page as it stands: no violation of any impact, best practices
        (``heading-order``, ``region``, ``landmark-unique``) included (issue 41); ``dark_too`` scans
        it again in the dark scheme (colours a screen adds of its own). Then the same screen laid
        out 360 px wide must not be wider than 360 px (the viewport put back after). Saved as
        screenshots named ``screen`` when they are asked for. Scanned once every read on the screen
        has answered (no "Reading …" placeholder left), so axe and the picture see the settled page."""
        expect(self.page.get_by_role("status").filter(has_text=re.compile(r"^Reading .*…$"))).to_have_count(0)
        if not self.page.evaluate("() => Boolean(window.axe)"):
            # through the driver, not a <script> tag: the page's CSP refuses inline script, as it should
            self.page.evaluate(f"() => {{ {self.axe}\n }}")
        for scheme in ("light", "dark") if dark_too else ("light",):
            self.page.emulate_media(color_scheme=scheme)
            result: dict[str, Any] = self.page.evaluate(
                "async () => { const r = await axe.run(document, {resultTypes: ['violations']});"
                " return {violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,"
                " nodes: v.nodes.map(n => n.target.join(' '))}))}; }"
            )
            assert result["violations"] == [], f"axe on {screen} ({scheme}): {result['violations']}"
        self.page.emulate_media(color_scheme="light")
        self.screenshot(screen)
        self.at_360_pixels(screen)

    def at_360_pixels(self, screen: str) -> None:
        """The screen laid out 360 px wide is no wider (``<screen>-360px.png``, its first three
        screens, when screenshots are asked for); a page already narrow is left as it is."""
        size = self.page.viewport_size or {"width": 1280, "height": 800}
        if size["width"] <= NARROW["width"]:
            return
        self.page.set_viewport_size(NARROW)
        try:
            self.page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
            wide = self.page.evaluate("() => document.documentElement.scrollWidth")
            past: list[str] = self.page.evaluate(PAST_THE_EDGE, NARROW["width"]) if wide > NARROW["width"] else []
            assert wide <= NARROW["width"], f"{screen} is {wide} px wide at 360 px: {past}"
            if SCREENSHOTS:
                height = min(self.page.evaluate("() => document.documentElement.scrollHeight"), 3 * NARROW["height"])
                clip = {"x": 0, "y": 0, "width": NARROW["width"], "height": height}
                shot = self.page.screenshot(full_page=True, clip=clip, animations="disabled", caret="hide")
                small_png(shot, vendoring.ROOT / SCREENSHOTS / f"{screen}-360px.png")
        finally:
            self.page.set_viewport_size(size)

    def broken_words(self) -> list[str]:
        """Words of every table on the page that a line break cuts between two letters or digits
        (found with DOM ranges, a character at a time, where a word's range spans two lines)."""
        found: list[str] = self.page.evaluate(BROKEN_WORDS)
        return found

    def screenshot(self, screen: str) -> None:
        """``<screen>-light.png`` and ``-dark.png`` as the page stands (a 360 px page whole)."""
        if not SCREENSHOTS:
            return
        folder = vendoring.ROOT / SCREENSHOTS
        folder.mkdir(parents=True, exist_ok=True)
        narrow = (self.page.viewport_size or {"width": 1280})["width"] < 600
        for scheme in ("light", "dark"):
            self.page.emulate_media(color_scheme=scheme)
            shot = self.page.screenshot(full_page=narrow, animations="disabled", caret="hide")
            small_png(shot, folder / f"{screen}-{scheme}.png")
        self.page.emulate_media(color_scheme="light")


# The text and the innermost elements that reach past the page's right edge (a screen too wide at
# 360 px): text overflowing its box does not widen the box, so text is measured with ranges.
PAST_THE_EDGE = r"""(width) => {
  const out = [];
  const range = document.createRange();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node && out.length < 3; node = walker.nextNode()) {
    if (!node.textContent.trim()) continue;
    range.selectNodeContents(node);
    const right = range.getBoundingClientRect().right;
    const what = `${node.parentElement.tagName.toLowerCase()} ${Math.round(right)} px`;
    if (right > width + 1) out.push(`${what}: ${node.textContent.trim().slice(0, 50)}`);
  }
  for (const e of document.querySelectorAll("body *")) {
    if (out.length >= 3) break;
    const right = e.getBoundingClientRect().right;
    if (right > width + 1 && e.getClientRects().length && !e.children.length && !e.textContent.trim()) {
      out.push(`${e.tagName.toLowerCase()} ${Math.round(right)} px`);
    }
  }
  return out;
}"""

BROKEN_WORDS = r"""() => {
  const out = [];
  const range = document.createRange();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => node.parentElement.closest("table") && !node.parentElement.closest(".visually-hidden")
      && node.textContent.trim() ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT,
  });
  const top = (node, at) => {
    range.setStart(node, at);
    range.setEnd(node, at + 1);
    const rect = [...range.getClientRects()].find((r) => r.width > 0);
    return rect ? rect.top : null;
  };
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const match of node.textContent.matchAll(/\S+/g)) {
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      if ([...range.getClientRects()].filter((r) => r.width > 0).length < 2) continue;
      let before = top(node, match.index);
      for (let i = 1; i < match[0].length; i += 1) {
        const here = top(node, match.index + i);
        if (here !== null && before !== null && Math.abs(here - before) > 2) {
          if (/[\p{L}\p{N}]/u.test(match[0][i - 1]) && /[\p{L}\p{N}]/u.test(match[0][i])) out.push(match[0]);
          break;
        }
        if (here !== null) before = here;
      }
    }
  }
  return out;
}"""


def small_png(shot: bytes, path: Path) -> None:
    """The screenshot in 64 colours, without dithering: a flat UI loses nothing a reader sees, and
    the committed file is a quarter of the size."""
    image = Image.open(io.BytesIO(shot)).convert("RGB")
    flat = image.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    flat.save(path, "PNG", optimize=True)


@pytest.fixture
def console(context: BrowserContext, stack: LocalStack, axe_source: str) -> Iterator[Console]:
    """The console's page; a script error on it (an uncaught exception, a CSP refusal) fails the test."""
    page = context.new_page()
    if os.environ.get("CONSOLE_THROTTLE"):  # the page's scripts N times slower, as on a loaded machine
        context.new_cdp_session(page).send(
            "Emulation.setCPUThrottlingRate", {"rate": int(os.environ["CONSOLE_THROTTLE"])}
        )
    person = Console(page=page, stack=stack, axe=axe_source, errors=[])
    page.on("pageerror", lambda error: person.errors.append(str(error)))
    page.on(
        "console",
        lambda message: person.errors.append(message.text) if "Content Security Policy" in message.text else None,
    )
    yield person
    assert person.errors == []


@pytest.fixture
def operator(stack: LocalStack) -> tuple[str, str, str]:
    """A project of its own (unbound) and a person who administers it with every permission:
    (project, principal name, token)."""
    project = unique("cons")
    name = unique("person")
    stack.admin("project", "create", project, "--organization", "colony")
    token = stack.principal(name, *[f"--permission={p}" for p in ALL_PERMISSIONS], f"--role={project}=admin")
    return project, name, token
