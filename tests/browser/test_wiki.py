"""The wiki (issue 29) in a real browser against the local stack: the tree and a page, Edit and
Save, two sessions on one page and the conflict view, a difference in History and Revert, Review
and the trust it changes, a link followed and its backlink, Delete, and a page of hostile markup
rendered inert in the browser. axe-core on every wiki screen. The principal is the project's
admin (the pages surface's rule). docs/console.md, The wiki."""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, Locator, expect

from tests.browser.conftest import Console, unique
from tests.e2e.conftest import http  # noqa: F401 (http: the hub fixture's client)
from tests.e2e.test_kb_command import Hub, exported, hub  # noqa: F401 (hub: the fixture)
from tests.e2e.test_mcp import mission, payload, role, run, session
from tests.localstack import LocalStack, bearer

pytestmark = pytest.mark.e2e


class Base:
    """The project's knowledge base through the pages API, as the admin's bearer token."""

    def __init__(self, stack: LocalStack, project: str, token: str) -> None:
        self.url = f"{stack.url}/api/v1/projects/{project}/kb"
        self.headers = bearer(token)

    def put(self, path: str, content: str, if_version: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"content": content}
        if if_version is not None:
            body["if_version"] = if_version
        answer = httpx.put(f"{self.url}/pages/{path}", headers=self.headers, json=body, timeout=30.0)
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()
        return result

    def get(self, path: str) -> httpx.Response:
        return httpx.get(f"{self.url}/pages/{path}", headers=self.headers, timeout=30.0)

    def content(self, path: str) -> str:
        answer = self.get(path)
        assert answer.status_code == 200, answer.text
        text: str = answer.json()["content"]
        return text


@pytest.fixture
def base(stack: LocalStack, operator: tuple[str, str, str]) -> Base:
    project, _, token = operator
    return Base(stack, project, token)


def page(title: str, body: str, *, type_: str = "Runbook", status: str = "draft", tags: str = "[ops, deploy]") -> str:
    return f"---\ntype: {type_}\ntitle: {title}\nstatus: {status}\ntags: {tags}\n---\n{body}"


def narrow(console: Console) -> bool:
    return (console.page.viewport_size or {"width": 1280})["width"] <= 640


def open_wiki(console: Console, operator: tuple[str, str, str]) -> None:
    project, _, token = operator
    console.sign_in(token)
    console.pick_project(project)
    console.section("Wiki")
    if narrow(console):  # on a phone the tree is a drawer behind Pages
        expect(console.page.get_by_role("button", name="Pages", exact=True)).to_be_visible()
    else:
        expect(console.page.get_by_role("navigation", name="Page tree")).to_be_visible()


def open_tree(console: Console) -> None:
    """On a phone, open the tree's drawer (at desktop widths the tree is always there)."""
    toggle = console.page.get_by_role("button", name="Pages", exact=True)
    if narrow(console) and toggle.get_attribute("aria-expanded") == "false":
        toggle.click()
    expect(console.page.get_by_role("navigation", name="Page tree")).to_be_visible()


def tree_link(console: Console, path: str) -> Locator:
    """A page's link in the tree (named by the page's title; found by the address it opens)."""
    tree = console.page.get_by_role("navigation", name="Page tree")
    return tree.locator(f'a[href*="page={quote("/fs/" + path, safe="")}"]')


def open_page(console: Console, path: str) -> None:
    """A page by its tree link."""
    open_tree(console)
    tree_link(console, path).click()
    expect(console.page.get_by_role("region", name="Page body")).to_be_visible()


def test_the_tree_a_page_edit_and_save_a_link_and_its_backlink(
    console: Console, operator: tuple[str, str, str], base: Base
) -> None:
    base.put("svc/deploy.md", page("Deploy the hub", "# Deploy\n\nRun **make deploy**.\n"))
    base.put(
        "svc/start.md",
        page(
            "Start here",
            "Read [the deploy runbook](deploy.md) and [a page](gone.md), or [the web](https://example.org/).\n",
        ),
    )
    open_wiki(console, operator)
    p = console.page

    expect(p.get_by_role("heading", name="Directory view")).to_be_visible()
    p.get_by_role("navigation", name="Page tree").get_by_role("treeitem", name="svc/").click()
    expect(p.get_by_role("table").get_by_role("link", name="Start here")).to_be_visible()
    console.assert_accessible("wiki-directory")

    open_page(console, "svc/start.md")
    expect(p.get_by_role("heading", name="Start here", level=3)).to_be_visible()
    facts = p.locator("dl.frontmatter")
    expect(facts).to_contain_text("Runbook")
    expect(facts).to_contain_text("draft")
    expect(facts.get_by_role("listitem")).to_have_text(["ops", "deploy"])
    expect(facts).to_contain_text("Unverified")
    rendered = p.get_by_role("region", name="Page body")
    expect(rendered).not_to_contain_text("type: Runbook")  # the frontmatter is drawn as facts, not body text
    quiet = rendered.locator(".unresolved-link", has_text="a page")  # quietly: no link, the why on hover
    expect(quiet).to_have_attribute("title", "No page at /fs/svc/gone.md")
    expect(quiet).to_contain_text("(no page at /fs/svc/gone.md)")
    expect(rendered.get_by_role("link", name="a page")).to_have_count(0)
    expect(rendered.get_by_role("link", name="the web")).to_have_attribute("href", "https://example.org/")
    expect(p.get_by_role("region", name="Backlinks")).to_contain_text("No page links here.")
    console.assert_accessible("wiki-page")

    rendered.get_by_role("link", name="the deploy runbook").click()
    expect(p.get_by_role("heading", name="Deploy the hub", level=3)).to_be_visible()
    backlinks = p.get_by_role("region", name="Backlinks")
    expect(backlinks.get_by_role("link", name="Start here")).to_be_visible()

    p.get_by_role("button", name="Edit").click()
    editor = p.get_by_label("Content")
    expect(editor).to_have_value(re.compile("Run \\*\\*make deploy\\*\\*"))
    editor.fill(page("Deploy the hub", "# Deploy\n\nRun **make deploy-prod** now.\n"))
    preview = p.get_by_role("region", name="Preview")  # beside the text, by the same renderer
    expect(preview.locator("strong")).to_have_text("make deploy-prod")
    console.assert_accessible("wiki-edit")
    editor.press("Control+s")  # saves, as in an editor
    expect(p.get_by_role("region", name="Page body")).to_contain_text("Run make deploy-prod now.")
    assert "make deploy-prod" in base.content("svc/deploy.md")


def test_two_sessions_edit_one_page_and_the_second_resolves_the_conflict(
    console: Console, browser: Browser, stack: LocalStack, axe_source: str, operator: tuple[str, str, str], base: Base
) -> None:
    base.put("notes/shared.md", page("Shared", "first line\nsecond line\n"))
    other_context = browser.new_context(base_url=stack.url, viewport={"width": 1280, "height": 800})
    try:
        other = Console(page=other_context.new_page(), stack=stack, axe=axe_source, errors=[])
        other.page.on("pageerror", lambda error: other.errors.append(str(error)))
        for person in (console, other):
            open_wiki(person, operator)
            open_page(person, "notes/shared.md")
            person.page.get_by_role("button", name="Edit").click()

        console.page.get_by_label("Content").fill(page("Shared", "first line\nsecond line, theirs\n"))
        console.page.get_by_role("button", name="Save").click()
        expect(console.page.get_by_role("region", name="Page body")).to_contain_text("second line, theirs")

        mine = page("Shared", "first line\nsecond line, mine\nthird line\n")
        other.page.get_by_label("Content").fill(mine)
        other.page.get_by_role("button", name="Save").click()
        conflict = other.page.get_by_role("region", name="Conflict: someone else saved first")
        expect(conflict).to_be_visible()
        expect(conflict.get_by_label("Their version", exact=True)).to_contain_text("second line, theirs")
        expect(conflict.get_by_label("Your version", exact=True)).to_contain_text("second line, mine")
        difference = conflict.get_by_label("Difference from their version to yours")
        expect(difference.locator("del")).to_contain_text("- second line, theirs")
        expect(difference.locator("ins").first).to_contain_text("+ second line, mine")  # one element a line
        assert "mine" not in base.content("notes/shared.md")  # nothing written before the choice
        conflict.get_by_role("button", name="Keep mine").scroll_into_view_if_needed()
        other.assert_accessible("wiki-conflict")

        conflict.get_by_role("button", name="Keep mine").click()
        expect(other.page.get_by_role("region", name="Page body")).to_contain_text("third line")
        assert base.content("notes/shared.md") == mine
        assert other.errors == []
    finally:
        other_context.close()


def test_history_shows_a_difference_and_reverts_and_review_changes_trust(
    console: Console, operator: tuple[str, str, str], base: Base
) -> None:
    first = base.put("ops/rotate.md", page("Rotate keys", "Rotate every 90 days.\n"))
    base.put("ops/rotate.md", page("Rotate keys", "Rotate every 30 days.\n"), if_version=first["version"])
    open_wiki(console, operator)
    p = console.page

    p.get_by_role("link", name="Needs review").click()
    expect(p.get_by_role("heading", name="Needs review")).to_be_visible()
    expect(p.get_by_role("table").get_by_role("link", name="Rotate keys")).to_be_visible()
    console.assert_accessible("wiki-needs-review")

    open_page(console, "ops/rotate.md")
    p.get_by_role("button", name="History").click()
    history = p.get_by_role("region", name="History")
    history.get_by_role("button", name="Show difference").click()
    difference = history.get_by_label(re.compile("^Difference from"))
    expect(difference.locator("del")).to_contain_text("- Rotate every 90 days.")
    expect(difference.locator("ins")).to_contain_text("+ Rotate every 30 days.")
    expect(difference.locator("del mark")).to_have_text("90")  # the changed word, inside the changed line
    expect(difference.locator("ins mark")).to_have_text("30")
    history.get_by_role("table").scroll_into_view_if_needed()  # the screenshot shows the difference
    console.assert_accessible("wiki-history")

    history.get_by_role("button", name=f"Revert to {first['version'].removeprefix('sha256:')[:10]}").click()
    expect(p.get_by_role("region", name="Page body")).to_contain_text("Rotate every 90 days.")
    assert "90 days" in base.content("ops/rotate.md")

    facts = p.locator("dl.frontmatter")
    expect(facts).to_contain_text("Unverified")
    p.get_by_role("button", name="Review").click()
    expect(facts).to_contain_text("Reviewed by a person")
    expect(facts).to_contain_text(re.compile(r"human at \d{4}-"))
    p.get_by_role("link", name="Needs review").click()
    expect(p.get_by_role("heading", name="Needs review")).to_be_visible()
    expect(p.get_by_role("table").get_by_role("link", name="Rotate keys")).to_have_count(0)


def test_delete_a_page_and_it_is_gone(console: Console, operator: tuple[str, str, str], base: Base) -> None:
    base.put("tmp/old.md", page("Old", "Soon gone.\n"))
    base.put("tmp/keep.md", page("Keep", "Stays.\n"))
    open_wiki(console, operator)
    p = console.page
    open_page(console, "tmp/old.md")
    p.get_by_role("button", name="Delete").click()
    ask = p.get_by_role("form", name="Delete this page")
    expect(ask.get_by_role("button", name="Keep it")).to_be_focused()  # asked in place; Enter keeps it
    expect(ask).to_contain_text("its kept versions stay in History")
    p.get_by_label("Forget its history too").check()
    expect(ask).to_contain_text("the page and its history are gone for good")
    console.assert_accessible("wiki-delete")
    p.get_by_role("button", name="Delete page").click()
    expect(p.get_by_role("status").filter(has_text="Deleted /fs/tmp/old.md.")).to_be_visible()
    expect(tree_link(console, "tmp/old.md")).to_have_count(0)
    assert base.get("tmp/old.md").status_code == 404
    versions = httpx.get(f"{base.url}/versions", headers=base.headers, params={"path": "tmp/old.md"}, timeout=30.0)
    assert all(not v["kept"] for v in versions.json()["versions"] if v["version"]), versions.text


def test_new_page_lint_and_stats(console: Console, operator: tuple[str, str, str], base: Base) -> None:
    open_wiki(console, operator)
    p = console.page
    p.get_by_role("link", name="New page").click()
    p.get_by_label("Path").fill("fresh/new.md")
    p.get_by_label("Content").fill(page("Fresh", "Links to [nowhere](nowhere.md).\n"))
    console.assert_accessible("wiki-new-page")
    p.get_by_role("button", name="Create").click()
    expect(p.get_by_role("heading", name="Fresh", level=3)).to_be_visible()
    assert "nowhere" in base.content("fresh/new.md")

    # a second New page at the same path is refused (if_version "absent"), with the API's sentence
    p.get_by_role("link", name="New page").click()
    p.get_by_label("Path").fill("fresh/new.md")
    p.get_by_role("button", name="Create").click()
    refusal = p.get_by_role("alert")
    expect(refusal).to_contain_text("A page already exists at /fs/fresh/new.md: nothing was written.")
    refusal.get_by_role("link", name="Open that page").click()
    expect(p.get_by_role("heading", name="Fresh", level=3)).to_be_visible()

    p.get_by_role("link", name="Lint").click()
    expect(p.get_by_role("cell", name="broken link")).to_be_visible()
    console.assert_accessible("wiki-lint")
    p.get_by_role("link", name="Stats").click()
    expect(p.locator("dl.facts")).to_contain_text("Needs review")
    console.assert_accessible("wiki-stats")


HOSTILE = page(
    "Hostile",
    "# Hostile\n\n"
    "<script>window.__wikiXss = 'script'</script>\n\n"
    '<img src="nope" onerror="window.__wikiXss = \'onerror\'">\n\n'
    "<svg onload=\"window.__wikiXss = 'svg'\"><script>window.__wikiXss = 'svg-script'</script></svg>\n\n"
    "[run me](javascript:window.__wikiXss='javascript')\n\n"
    "[data me](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)\n\n"
    "[data image](data:image/png;base64,iVBORw0KGgo=) (markdown-it lets data:image through)\n\n"
    "<a href=\"javascript:window.__wikiXss='raw-a'\">raw anchor</a>\n\n"
    "![pic](javascript:window.__wikiXss='image')\n\n"
    "<javascript:window.__wikiXss='autolink'>\n\n"
    "Inline <b onmouseover=\"window.__wikiXss='inline'\">bold?</b> text.\n",
)


def test_a_hostile_page_renders_inert_in_the_browser(
    console: Console, operator: tuple[str, str, str], base: Base
) -> None:
    base.put("evil/hostile.md", HOSTILE)
    open_wiki(console, operator)
    p = console.page
    open_page(console, "evil/hostile.md")
    rendered = p.get_by_role("region", name="Page body")
    expect(rendered).to_contain_text("<script>window.__wikiXss = 'script'</script>")  # shown as text
    expect(rendered).to_contain_text("run me")
    found = p.evaluate(
        """() => {
          const body = document.querySelector('.page-body');
          const all = [...body.querySelectorAll('*')];
          return {
            elements: [...new Set(all.map((e) => e.tagName.toLowerCase()))],
            handlers: all.flatMap((e) => [...e.attributes].map((a) => a.name)).filter((n) => n.startsWith('on')),
            hrefs: [...body.querySelectorAll('a')].map((a) => a.getAttribute('href')),
          };
        }"""
    )
    assert not {"script", "img", "svg", "iframe", "object", "embed", "a"} & set(found["elements"]), found
    assert found["handlers"] == [], found
    # the one raw tag a page may use here, <b>, is drawn without any attribute its author wrote
    assert rendered.locator("b").evaluate_all("(all) => all.map((b) => b.attributes.length)") == [0]
    assert found["hrefs"] == [], found  # no scheme but http(s) is a link
    for name in ("run me", "data me", "data image"):
        rendered.get_by_text(name).click()
    rendered.get_by_text("bold?", exact=False).hover()
    p.wait_for_timeout(300)
    assert p.evaluate("() => window.__wikiXss") is None
    console.assert_accessible("wiki-hostile")


def test_a_person_who_is_not_the_projects_admin_reads_the_refusal_and_stays_signed_in(
    console: Console, stack: LocalStack, operator: tuple[str, str, str]
) -> None:
    """The pages surface answers 401 to all but the project's admin: the wiki shows that sentence
    and keeps the session (a 401 elsewhere ends it); /knowledge/me tells the two apart."""
    project, _, _ = operator
    viewer = stack.principal(
        unique("viewer"),
        "--permission=read_status",
        "--permission=read_knowledge",
        "--permission=manage_knowledge",
        f"--role={project}=viewer",
    )
    console.sign_in(viewer)
    console.pick_project(project)
    console.section("Wiki")
    expect(console.page.get_by_role("alert")).to_be_visible()
    expect(console.page.get_by_role("button", name="Sign out")).to_be_visible()
    expect(console.page.get_by_role("heading", name="Sign in")).to_have_count(0)
    console.assert_accessible("wiki-not-admin")


def test_the_service_worker_keeps_the_shell_and_never_page_content(
    console: Console, operator: tuple[str, str, str], base: Base
) -> None:
    secret = unique("only-in-the-hub")
    base.put("sw/private.md", page("Private", f"The words {secret} live in the hub alone.\n"))
    open_wiki(console, operator)
    p = console.page
    p.evaluate("async () => { await navigator.serviceWorker.ready; }")
    p.reload()  # now the worker controls the page: every request it makes goes past the worker
    assert p.evaluate("() => Boolean(navigator.serviceWorker.controller)")
    console.pick_project(operator[0])
    expect(p.get_by_role("navigation", name="Page tree")).to_be_visible()
    open_page(console, "sw/private.md")
    expect(p.get_by_role("region", name="Page body")).to_contain_text(secret)
    expect(p.get_by_role("region", name="Backlinks")).to_contain_text("No page links here.")

    kept: list[dict[str, str]] = p.evaluate(
        """async () => {
          const out = [];
          for (const name of await caches.keys()) {
            const cache = await caches.open(name);
            for (const request of await cache.keys()) {
              out.push({ url: request.url, text: await (await cache.match(request)).text() });
            }
          }
          return out;
        }"""
    )
    paths = [urlsplit(entry["url"]).path for entry in kept]
    assert {"/console/app.js", "/console/api.js", "/console/screens/wiki.js"} <= set(paths), paths
    assert [path for path in paths if not path.startswith("/console/")] == []
    assert [entry["url"] for entry in kept if secret in entry["text"]] == []


def test_a_page_at_360_pixels_wide(console: Console, operator: tuple[str, str, str], base: Base) -> None:
    base.put(
        "narrow/long-name-of-a-directory/page.md",
        page(
            "Narrow",
            "A line "
            + "with many words " * 20
            + "\n\n```\n"
            + "x" * 200
            + "\n```\n"
            + "".join(f"\n## Part {n}\n\nText.\n" for n in range(12)),
        ),
    )
    console.page.set_viewport_size({"width": 360, "height": 780})
    open_wiki(console, operator)
    open_page(console, "narrow/long-name-of-a-directory/page.md")
    expect(console.page.get_by_role("region", name="Backlinks")).to_contain_text("No page links here.")
    assert console.page.evaluate("() => document.documentElement.scrollWidth") <= 360
    # 360 px first: the bar and the tabs are behind Menu, so the title and the body are on the first screen
    console.page.evaluate("() => window.scrollTo(0, 0)")
    expect(console.page.get_by_role("navigation", name="Knowledge sections")).to_be_hidden()
    title = console.page.get_by_role("heading", name="Narrow", level=3).bounding_box()
    body = console.page.get_by_role("region", name="Page body").bounding_box()
    assert title and body and title["y"] < 400 and body["y"] < 780, (title, body)
    # its twelve headings' table of contents starts folded, one tap away
    toc = console.page.get_by_role("navigation", name="On this page")
    expect(toc.get_by_role("link", name="Part 3")).to_be_hidden()
    toc.get_by_text("On this page").click()
    expect(toc.get_by_role("link", name="Part 3")).to_be_visible()
    console.assert_accessible("wiki-page-360")


def test_search_pages_finds_a_page_written_through_the_api_and_not_once_deleted(
    console: Console, operator: tuple[str, str, str], base: Base
) -> None:
    word = unique("findme").replace("-", "x")
    written = base.put("found/it.md", page("Findable", f"The word {word} is here.\n", type_="Guide"))
    open_wiki(console, operator)
    p = console.page
    p.get_by_role("link", name="Search pages").click()
    form = p.get_by_role("search", name="Search pages")
    form.get_by_label("Words").fill(word)
    form.get_by_role("button", name="Search pages").click()
    expect(p.get_by_role("status").filter(has_text="1 page matches.")).to_be_visible()
    hits = p.get_by_role("list", name="Pages that match")
    expect(hits.locator("mark")).to_have_text(word)
    console.assert_accessible("wiki-search")

    form.get_by_label("Type").fill("Runbook")  # a filter that leaves nothing
    form.get_by_role("button", name="Search pages").click()
    expect(p.get_by_role("status").filter(has_text="0 pages match.")).to_be_visible()
    form.get_by_label("Type").fill("guide")  # exact, case-insensitive
    form.get_by_role("button", name="Search pages").click()
    expect(p.get_by_role("status").filter(has_text="1 page matches.")).to_be_visible()
    hits.get_by_role("link", name="Findable").click()
    expect(p.get_by_role("heading", name="Findable", level=3)).to_be_visible()

    gone = httpx.delete(
        f"{base.url}/pages/found/it.md", headers=base.headers, params={"if_version": written["version"]}, timeout=30.0
    )
    assert gone.status_code == 200, gone.text
    p.get_by_role("link", name="Search pages").click()
    expect(p).not_to_have_url(re.compile(r"[?&]q="))
    form.get_by_label("Words").fill(word)
    form.get_by_role("button", name="Search pages").click()
    expect(p.get_by_role("status").filter(has_text="0 pages match.")).to_be_visible()


def hits_of(console: Console) -> Locator:
    return console.page.get_by_role("list", name="Pages that match")


def search_in_the_wiki(console: Console, words: str) -> None:
    p = console.page
    p.get_by_role("link", name="Search pages").click()
    expect(p).not_to_have_url(re.compile(r"[?&]q="))  # the fresh form of the new address, not the last one
    form = p.get_by_role("search", name="Search pages")
    form.get_by_label("Words").fill(words)
    form.get_by_role("button", name="Search pages").click()


def test_pages_written_by_kb_import_and_by_an_agent_are_found_by_search_pages_within_5_s(
    console: Console,
    hub: Hub,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    """The issue's walk: a page `kb import` writes and one an agent's brain_put (store project)
    writes are found by Search pages, one query each, within 5 s of the write's answer."""
    console.sign_in(hub.stack.admin_token)
    console.pick_project(hub.project)
    console.section("Wiki")
    expect(console.page.get_by_role("navigation", name="Page tree")).to_be_visible()

    folder = exported(hub, tmp_path)
    (folder / "harbour.md").write_text("---\ntype: Concept\ntitle: Harbour\n---\nThe pilot boat waits at the mole.\n")
    imported = hub.kb("import", "--dir", str(folder))
    assert imported.code == 0, imported.err
    answered = time.monotonic()
    search_in_the_wiki(console, "pilot boat")
    expect(hits_of(console).get_by_role("link", name="Harbour")).to_be_visible(timeout=5_000)
    assert time.monotonic() - answered < 5.0

    credential = mission(hub.stack, role(hub.stack, ["brain_put"]), project=hub.project)

    async def agent() -> None:
        async with session(hub.stack, credential) as client:
            put = await client.call_tool(
                "brain_put",
                {
                    "path": "/ops/lamp.md",
                    "content": "# Lamp\n\nThe lighthouse lamp turns at dusk.\n",
                    "store": "project",
                },
            )
            assert not put.isError and payload(put)["ok"], payload(put)

    with ThreadPoolExecutor(max_workers=1) as thread:  # its own event loop, beside Playwright's
        thread.submit(run, agent).result()
    answered = time.monotonic()
    search_in_the_wiki(console, "lighthouse")
    expect(hits_of(console).get_by_role("link", name=re.compile(r"Lamp|lamp\.md"))).to_be_visible(timeout=5_000)
    assert time.monotonic() - answered < 5.0


CODE = page(
    "Code",
    "# Code\n\n"
    "```python\n"
    "# a comment: <img src=x onerror=\"window.__wikiXss = 'comment'\">\n"
    "def greet(name):\n"
    "    return f\"<script>window.__wikiXss = 'string'</script> {name}\"\n"
    "```\n\n"
    "```../../api.js\n"
    "not a language: drawn as its text\n"
    "```\n",
    tags="[code]",
)


def test_a_fenced_python_block_is_coloured_and_stays_inert(
    console: Console, operator: tuple[str, str, str], base: Base
) -> None:
    base.put("dev/code.md", CODE)
    fetched: list[str] = []
    console.page.on("request", lambda request: fetched.append(urlsplit(request.url).path))
    open_wiki(console, operator)
    p = console.page
    open_page(console, "dev/code.md")
    rendered = p.get_by_role("region", name="Page body")
    coloured = rendered.locator("pre code.highlighted")
    expect(coloured).to_have_count(1)  # the python block; the other names no language Prism knows
    expect(coloured.locator(".tok-keyword").first).to_have_text("def")
    expect(coloured.locator(".tok-function")).to_have_text("greet")
    expect(coloured.locator(".tok-comment")).to_contain_text("onerror=")
    expect(coloured.locator(".tok-string-interpolation")).to_contain_text("<script>")
    # the code is the page's text, character for character, and nothing in it became an element
    found = p.evaluate(
        """() => {
          const code = document.querySelector('.page-body pre code.highlighted');
          const all = [...code.querySelectorAll('*')];
          return {
            text: code.textContent,
            tags: [...new Set(all.map((e) => e.tagName.toLowerCase()))],
            attributes: [...new Set(all.flatMap((e) => [...e.attributes].map((a) => a.name)))],
          };
        }"""
    )
    assert found["text"] == CODE.split("```python\n")[1].split("```")[0], found["text"]
    assert found["tags"] == ["span"] and found["attributes"] == ["class"], found
    p.wait_for_timeout(300)
    assert p.evaluate("() => window.__wikiXss") is None
    expect(rendered.locator("pre").nth(1)).to_have_text("not a language: drawn as its text\n")
    # Prism's core came with the wiki and the one grammar the page names, nothing a page's words made
    grammars = sorted(path for path in fetched if "/vendor/prism-" in path)
    assert grammars == ["/console/vendor/prism-core.min.js", "/console/vendor/prism-python.min.js"], grammars
    coloured.evaluate("(code) => code.scrollIntoView({block: 'center'})")  # the picture shows the block
    console.assert_accessible("wiki-code", dark_too=True)  # the colours hold their contrast in both schemes

    p.get_by_role("button", name="Edit").click()  # the preview beside the text is coloured the same way
    preview = p.get_by_role("region", name="Preview")
    expect(preview.locator("pre code.highlighted .tok-keyword").first).to_have_text("def")
    p.get_by_label("Content").evaluate("(text) => text.scrollIntoView({block: 'start'})")
    console.assert_accessible("wiki-preview")


def test_a_link_to_a_heading_opens_it_on_its_page_and_one_to_no_heading_is_quiet(
    console: Console, operator: tuple[str, str, str], base: Base
) -> None:
    """Fragments as GitHub and most wikis write them (`#deploy-the-hub`, `guide.md#Deploy-the-hub`)
    name a heading: the link is that heading's address (`at=h-…`); one naming no heading of the
    page is drawn quietly, as a link to no page is."""
    base.put(
        "anchors/guide.md",
        page(
            "Guide",
            "# Guide\n\nJump to [the deploy step](#deploy-the-hub) or [a step](#no-such-step).\n\n"
            + "Filler line.\n\n" * 40
            + "## Deploy the hub\n\nRun it.\n",
        ),
    )
    base.put("anchors/other.md", page("Other", "See [the guide's deploy step](guide.md#Deploy-the-hub).\n"))
    open_wiki(console, operator)
    p = console.page
    open_page(console, "anchors/other.md")
    p.get_by_role("region", name="Page body").get_by_role("link", name="the guide's deploy step").click()
    expect(p.get_by_role("heading", name="Deploy the hub")).to_be_focused()  # on the other page, at it
    assert "at=h-deploy-the-hub" in p.url and "guide.md" in p.url, p.url

    rendered = p.get_by_role("region", name="Page body")
    expect(rendered.get_by_role("link", name="the deploy step")).to_have_attribute(
        "href", re.compile(r"at=h-deploy-the-hub")
    )
    quiet = rendered.locator(".unresolved-link", has_text="a step")
    expect(quiet).to_have_attribute("title", "No heading no-such-step on this page")
    expect(rendered.get_by_role("link", name="a step")).to_have_count(0)
    p.evaluate("() => window.scrollTo(0, 0)")
    rendered.get_by_role("link", name="the deploy step").click()
    expect(p.get_by_role("heading", name="Deploy the hub")).to_be_focused()
    console.assert_accessible("wiki-anchors")
