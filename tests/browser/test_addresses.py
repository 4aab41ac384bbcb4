"""Issue 41 in a real browser: the address is the state (a wiki page in the second of a person's
projects survives reload, a new session and Back/Forward; an unseen project is the API's own
"not found"; search words come back with Back), focus after each act, and the skip link.
docs/console.md, Addresses."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ALL_PERMISSIONS, Console, unique
from tests.browser.test_wiki import Base, page
from tests.e2e.test_feed import REF
from tests.localstack import TLS, LocalStack, bearer

pytestmark = pytest.mark.e2e


@pytest.fixture
def two_projects(stack: LocalStack) -> tuple[str, str, str]:
    """A person who administers two projects; (first, second, token). The console's default pick
    is the first, so a view of the second holds only through its address."""
    first, second = unique("addr-a"), unique("addr-b")
    for project in (first, second):
        stack.admin("project", "create", project, "--organization", "colony")
    token = stack.principal(
        unique("person"),
        *[f"--permission={p}" for p in ALL_PERMISSIONS],
        f"--role={first}=admin",
        f"--role={second}=admin",
    )
    return first, second, token


def sign_in_here(console: Console, token: str) -> None:
    """Sign in on whatever address the page is at (the address is kept through sign-in)."""
    p = console.page
    expect(p.get_by_role("heading", name="Sign in")).to_be_visible()
    p.get_by_label("Token").fill(token)
    p.get_by_role("button", name="Sign in").click()
    expect(p.get_by_role("button", name="Sign out")).to_be_visible()


def test_a_wiki_page_address_names_its_project_through_reload_a_new_session_and_back(
    console: Console, stack: LocalStack, two_projects: tuple[str, str, str]
) -> None:
    first, second, token = two_projects
    base = Base(stack, second, token)
    base.put("svc/one.md", page("Page one", "Read [two](two.md).\n"))
    base.put("svc/two.md", page("Page two", "The second page.\n"))
    console.sign_in(token)
    p = console.page
    expect(p.get_by_role("combobox", name="Project", exact=True)).to_have_value(first)
    console.pick_project(second)
    console.section("Wiki")
    p.get_by_role("navigation", name="Page tree").get_by_role("treeitem", name="Page one").click()
    expect(p.get_by_role("heading", name="Page one", level=3)).to_be_visible()
    address = p.url
    assert f"project={second}" in address and "page=%2Ffs%2Fsvc%2Fone.md" in address, address

    p.reload()
    expect(p.get_by_role("heading", name="Page one", level=3)).to_be_visible()
    expect(p.get_by_role("combobox", name="Project", exact=True)).to_have_value(second)

    p.get_by_role("region", name="Page body").get_by_role("link", name="two").click()
    expect(p.get_by_role("heading", name="Page two", level=3)).to_be_visible()
    p.go_back()
    expect(p.get_by_role("heading", name="Page one", level=3)).to_be_visible()
    p.go_forward()
    expect(p.get_by_role("heading", name="Page two", level=3)).to_be_visible()

    # a new session (another browser profile) opening the shared address lands on the same view
    other = p.context.browser.new_context(base_url=stack.url, viewport={"width": 1280, "height": 800})  # type: ignore[union-attr]
    try:
        fresh = Console(page=other.new_page(), stack=stack, axe=console.axe, errors=[])
        fresh.page.goto(address)
        sign_in_here(fresh, token)
        expect(fresh.page.get_by_role("heading", name="Page one", level=3)).to_be_visible()
        expect(fresh.page.get_by_role("combobox", name="Project", exact=True)).to_have_value(second)
    finally:
        other.close()


def test_a_project_the_person_cannot_see_is_the_apis_not_found(
    console: Console, stack: LocalStack, two_projects: tuple[str, str, str]
) -> None:
    _, _, token = two_projects
    hidden = unique("hidden")
    stack.admin("project", "create", hidden, "--organization", "colony")  # exists; the person holds no role
    api = httpx.get(
        f"{stack.url}/knowledge/events", params={"project": hidden}, headers=bearer(token), timeout=30.0, verify=TLS
    )
    assert api.status_code == 404, api.text
    console.open()
    console.page.goto(f"/console/#/wiki?project={hidden}&page=%2Ffs%2Fa.md")
    sign_in_here(console, token)
    p = console.page
    expect(p.get_by_role("heading", name="Not found", level=2)).to_be_visible()
    expect(p.get_by_role("alert")).to_have_text(api.json()["message"])
    expect(p.get_by_role("navigation", name="Page tree")).to_have_count(0)
    console.assert_accessible("not-found")


def test_search_words_live_in_the_address_and_back_restores_the_results(
    console: Console, stack: LocalStack, two_projects: tuple[str, str, str]
) -> None:
    first, _, token = two_projects
    word = unique("backword").replace("-", "x")
    Base(stack, first, token).put("find/me.md", page("Found by words", f"The word {word} is here.\n"))
    console.sign_in(token)
    console.section("Wiki")
    p = console.page
    p.get_by_role("link", name="Search pages").click()
    form = p.get_by_role("search", name="Search pages")
    form.get_by_label("Words").fill(word)
    form.get_by_role("button", name="Search pages").click()
    expect(p.get_by_role("status").filter(has_text="1 page matches.")).to_be_visible()
    assert f"q={word}" in p.url
    p.get_by_role("list", name="Pages that match").get_by_role("link", name="Found by words").click()
    expect(p.get_by_role("heading", name="Found by words", level=3)).to_be_visible()
    p.go_back()
    expect(p.get_by_role("status").filter(has_text="1 page matches.")).to_be_visible()
    expect(form.get_by_label("Words")).to_have_value(word)
    p.reload()
    expect(p.get_by_role("list", name="Pages that match").get_by_role("link", name="Found by words")).to_be_visible()


def test_focus_moves_to_the_new_content_and_the_skip_link_reaches_it(
    console: Console, stack: LocalStack, two_projects: tuple[str, str, str]
) -> None:
    first, _, token = two_projects
    Base(stack, first, token).put("f/one.md", page("Focus one", "Body.\n"))
    console.sign_in(token)
    p = console.page
    focused = "() => document.activeElement && (document.activeElement.textContent || '').trim()"
    expect(p.get_by_role("heading", name="Connection", level=2)).to_be_focused()  # after sign-in
    console.section("Wiki")
    expect(p.get_by_role("heading", name="Wiki", level=2)).to_be_focused()  # after navigation
    p.get_by_role("navigation", name="Page tree").get_by_role("treeitem", name="Focus one").click()
    expect(p.get_by_role("heading", name="Focus one", level=3)).to_be_focused()
    p.get_by_role("button", name="Edit").click()
    p.get_by_label("Content", exact=True).fill(page("Focus one", "Body, saved.\n"))
    p.get_by_role("button", name="Save").click()
    expect(p.get_by_role("region", name="Page body")).to_contain_text("Body, saved.")
    expect(p.get_by_role("heading", name="Focus one", level=3)).to_be_focused()  # after Save

    p.reload()
    expect(p.get_by_role("heading", name="Focus one", level=3)).to_be_visible()
    p.keyboard.press("Tab")
    skip = p.get_by_role("link", name="Skip to the main content")
    expect(skip).to_be_focused()
    url = p.url
    p.keyboard.press("Enter")
    assert p.url == url  # the skip link does not change the address
    assert p.evaluate(focused) in ("Wiki", "Focus one"), p.evaluate(focused)


def test_statement_search_and_the_open_item_live_in_the_address(console: Console, stack: LocalStack) -> None:
    console.sign_in(stack.admin_token)
    console.pick_project(REF)
    console.section("Search")
    p = console.page
    p.get_by_label("Words").fill("launch")
    p.get_by_role("button", name="Search", exact=True).click()
    matched = p.get_by_text(re.compile(r"^\d+ statements match\."))
    expect(matched).to_be_visible()
    assert "q=launch" in p.url and f"project={REF}" in p.url, p.url
    p.get_by_role("button", name=re.compile("^Open ki_")).first.click()
    item = p.get_by_role("region", name=re.compile("^Item: "))
    expect(item).to_be_visible()
    p.reload()
    expect(item).to_be_visible()
    expect(matched).to_be_visible()
    expect(p.get_by_label("Words")).to_have_value("launch")
    p.go_back()  # the item closes; the statements stay
    expect(item).to_have_count(0)
    expect(matched).to_be_visible()


HEADINGS = """() => {
  const body = parseFloat(getComputedStyle(document.querySelector('.page-body p')).fontSize);
  const sizes = [...document.querySelectorAll('.page-body :is(h4, h5, h6)')].map((h) => ({
    written: Number(h.className.replace('md-h', '')), tag: h.tagName,
    size: parseFloat(getComputedStyle(h).fontSize) }));
  return { body, sizes, title: parseFloat(getComputedStyle(document.getElementById('page-title')).fontSize) };
}"""


def test_headings_scale_from_the_pages_largest_with_no_skipped_level_and_a_table_of_contents(
    console: Console, stack: LocalStack, two_projects: tuple[str, str, str]
) -> None:
    first, _, token = two_projects
    base = Base(stack, first, token)
    base.put(
        "doc/scale.md",
        "# Scale\n\nBody text.\n\n### Jumped to three\n\nMore.\n\n## Second\n\nText.\n\n#### Deep\n\nEnd "
        + "words " * 400
        + "\n\nSee [the guide](/doc/guide) and [nothing](/doc/none).\n",
    )
    base.put("doc/guide.md", page("The guide", "Guide.\n"))
    console.sign_in(token)
    console.section("Wiki")
    p = console.page
    p.get_by_role("navigation", name="Page tree").get_by_role(
        "treeitem", name="Scale"
    ).click()  # titled by its first heading
    expect(p.get_by_role("heading", name="Scale", level=3)).to_be_visible()
    expect(p.get_by_role("region", name="Page body")).to_contain_text("Body text.")
    found = p.evaluate(HEADINGS)
    sizes = found["sizes"]
    assert [entry["written"] for entry in sizes] == [1, 3, 2, 4]
    assert [entry["tag"] for entry in sizes] == ["H4", "H5", "H5", "H6"]  # no level skipped
    assert all(entry["size"] >= found["body"] for entry in sizes), found
    assert sizes[0]["size"] == max(entry["size"] for entry in sizes) < found["title"], found
    assert sizes[2]["size"] > sizes[1]["size"] > sizes[3]["size"], found  # as written: ## > ### > ####
    rendered = p.get_by_role("region", name="Page body")
    expect(rendered.get_by_role("link", name="the guide")).to_be_visible()  # a site address finds guide.md
    expect(rendered.get_by_role("link", name="nothing")).to_have_count(0)
    result = p.evaluate(
        "async () => { " + console.axe + "\n; const r = await axe.run(document, {runOnly: ['heading-order']});"
        " return r.violations.length; }"
    )
    assert result == 0

    toc = p.get_by_role("navigation", name="On this page")
    toc.get_by_role("link", name="Deep").click()
    expect(p.get_by_role("heading", name="Deep")).to_be_focused()
    assert "at=h-deep" in p.url
    p.go_back()
    expect(p.get_by_role("heading", name="Scale", level=3)).to_be_visible()
    console.assert_accessible("wiki-headings")


def test_the_tree_collapses_remembers_and_filters_with_breadcrumbs_and_recent_changes(
    console: Console, stack: LocalStack, two_projects: tuple[str, str, str]
) -> None:
    first, _, token = two_projects
    base = Base(stack, first, token)
    for n in range(24):  # 48 entries: over the size a tree opens whole
        base.put(f"area-{n:02d}/note-{n:02d}.md", page(f"Note number {n:02d}", "Text.\n"))
    console.sign_in(token)
    console.section("Wiki")
    p = console.page
    tree = p.get_by_role("navigation", name="Page tree")
    area = tree.get_by_role("treeitem", name="area-03/")
    expect(area).to_be_visible()
    expect(tree.get_by_role("treeitem", name="Note number 03")).to_have_count(0)  # closed
    console.assert_accessible("wiki-tree-collapsed")
    # the ARIA tree: one Tab stop, arrows move, Right opens a directory and enters it
    expect(tree.locator("[role=treeitem][tabindex='0']")).to_have_count(1)
    tree.get_by_role("treeitem", name="area-00/").focus()
    for _ in range(3):
        p.keyboard.press("ArrowDown")
    expect(area).to_be_focused()
    p.keyboard.press("ArrowRight")
    expect(area).to_have_attribute("aria-expanded", "true")
    p.keyboard.press("ArrowRight")
    expect(tree.get_by_role("treeitem", name="Note number 03")).to_be_focused()
    expect(tree.locator("[role=treeitem][tabindex='0']")).to_have_count(1)
    console.assert_accessible("wiki-tree-expanded")
    p.keyboard.press("Enter")
    crumbs = p.get_by_role("navigation", name="Breadcrumbs")
    expect(crumbs.get_by_role("link")).to_have_text(["Pages", "area-03"])
    expect(crumbs.locator("[aria-current=page]")).to_have_text("Note number 03")
    p.reload()  # remembered in this browser
    expect(area).to_have_attribute("aria-expanded", "true")
    expect(tree.get_by_role("treeitem", name="area-05/")).to_have_attribute("aria-expanded", "false")

    tree.get_by_label("Filter pages").fill("number 17")
    expect(tree.get_by_role("link", name="Note number 17")).to_be_visible()  # the filter lists links
    expect(tree.get_by_role("status")).to_have_text("1 page")

    base.put(
        "area-09/note-09.md",
        page("Note number 09, rewritten", "New.\n"),
        if_version=base_version(base, "area-09/note-09.md"),
    )
    p.get_by_role("link", name="Recent changes").click()
    table = p.get_by_role("table", name="Recent changes, newest first")
    expect(table.get_by_role("row").nth(1)).to_contain_text("Note number 09, rewritten")
    console.assert_accessible("wiki-recent")


def base_version(base: Base, path: str) -> str:
    answer = base.get(path)
    assert answer.status_code == 200, answer.text
    version: str = answer.json()["version"]
    return version


def test_a_difference_is_folded_to_its_hunks_and_versions_are_named_by_time_and_summary(
    console: Console, stack: LocalStack, two_projects: tuple[str, str, str]
) -> None:
    first, _, token = two_projects
    base = Base(stack, first, token)
    lines = [f"Line {n} of the runbook." for n in range(1, 61)]
    made = base.put("long/runbook.md", page("Long runbook", "\n".join(lines) + "\n"))
    lines[29] = "Line 30 of the changed runbook."
    base.put("long/runbook.md", page("Long runbook", "\n".join(lines) + "\n"), if_version=made["version"])
    console.sign_in(token)
    console.section("Wiki")
    p = console.page
    p.get_by_role("navigation", name="Page tree").get_by_role("treeitem", name="Long runbook").click()
    p.get_by_role("button", name="History").click()
    history = p.get_by_role("region", name="History")
    expect(history.get_by_role("combobox", name="From version").locator("option").first).to_contain_text(" UTC · ")
    history.get_by_role("button", name="Show difference").click()
    difference = history.get_by_label(re.compile("^Difference from"))
    expect(difference.locator("ins mark")).to_have_text("changed ")
    expect(difference.locator(".fold").first).to_contain_text("unchanged lines")
    assert difference.locator(".ctx").count() == 6  # three lines of context each side, not sixty
    difference.evaluate("(figure) => figure.scrollIntoView({block: 'center'})")  # the picture shows it folded
    console.assert_accessible("wiki-diff-folded")
    history.get_by_role("button", name="Show every line").click()
    expect(difference.locator(".ctx")).to_have_count(59 + 6)  # the whole page: frontmatter too
    console.assert_accessible("wiki-diff-unfolded")


def test_one_click_is_enough_while_a_project_pick_settles_the_address(
    console: Console, stack: LocalStack, two_projects: tuple[str, str, str]
) -> None:
    """A section clicked before the console has drawn a project pick (the two in one turn of the
    page's loop, as a quick hand or a loaded machine makes them) opens in the picked project; a
    project picked before a section click is drawn keeps that section."""
    first, second, token = two_projects
    Base(stack, second, token).put("race/one.md", page("Raced", "Body.\n"))
    console.sign_in(token)
    p = console.page
    picker = p.get_by_role("combobox", name="Project", exact=True)
    tabs = p.get_by_role("navigation", name="Knowledge sections")
    at_once = """([first, then, project, firstIsPick]) => {
      const pick = () => { then.value = project; then.dispatchEvent(new Event("change", { bubbles: true })); };
      if (firstIsPick) { pick(); first.click(); } else { first.click(); pick(); }
    }"""

    p.evaluate(at_once, [tabs.get_by_role("link", name="Wiki").element_handle(), picker.element_handle(), second, True])
    expect(p.get_by_role("heading", name="Wiki", level=2)).to_be_visible()
    expect(picker).to_have_value(second)
    expect(p.get_by_role("navigation", name="Page tree").get_by_role("treeitem", name="Raced")).to_be_visible()
    assert f"project={second}" in p.url and "#/wiki" in p.url, p.url

    p.evaluate(
        at_once, [tabs.get_by_role("link", name="Event log").element_handle(), picker.element_handle(), first, False]
    )
    expect(p.get_by_role("heading", name="Event log", level=2)).to_be_visible()
    expect(picker).to_have_value(first)
    assert f"project={first}" in p.url and "#/events" in p.url, p.url
