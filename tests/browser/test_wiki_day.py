"""Issue 59, the wiki a person keeps open all day, in a real browser against the local stack:
nothing typed is lost (asked in place, kept as a draft, offered back after a reload), the body on
the first screen with "On this page" beside it, every change named by its principal, statements
searched by words and paged, wide tables in their own box, a source as an address, the tab named
by the page, admonitions and footnotes, merge by hand with both texts, the last project
remembered, evidence in context with its line breaks and a link to its source, Escape, Save near
the text on a phone, Lint that sets aside what imported pages lack by design. axe-core and the
360 px check on each screen. docs/console.md, The wiki."""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ALL_PERMISSIONS, Console, unique
from tests.browser.test_wiki import Base, open_page, open_wiki, page, tree_link
from tests.e2e.test_feed import REF
from tests.localstack import LocalStack, bearer

pytestmark = pytest.mark.e2e

NARROW = {"width": 360, "height": 740}


@pytest.fixture
def pages(stack: LocalStack, operator: tuple[str, str, str]) -> Base:
    """The operator's project's knowledge base through the pages API, as its admin."""
    project, _, token = operator
    return Base(stack, project, token)


def editor(p: Page) -> Any:
    return p.get_by_label("Content")


def asked(p: Page) -> Any:
    return p.get_by_role("alertdialog", name="Your edit is not saved")


def drafts(p: Page) -> dict[str, str]:
    found: dict[str, str] = p.evaluate(
        "() => Object.fromEntries(Object.entries(localStorage)"
        ".filter(([key]) => key.startsWith('knowledge-console.draft.')))"
    )
    return found


# ---------------------------------------------------------------------------- 1. nothing lost


def test_an_edit_survives_a_click_elsewhere_back_and_a_reload(
    console: Console, operator: tuple[str, str, str], pages: Base
) -> None:
    pages.put("day/first.md", page("First", "The first page.\n"))
    pages.put("day/second.md", page("Second", "The second page.\n"))
    open_wiki(console, operator)
    p = console.page
    open_page(console, "day/first.md")
    p.get_by_role("button", name="Edit").click()
    mine = page("First", "The first page, with words typed and not yet saved.\n")
    editor(p).fill(mine)
    editor(p).press("End")  # a key pressed in the page: the browser lets it ask before unloading
    at_first = p.url

    # a click on another page in the tree is asked about in place; nothing moves, nothing is lost
    tree_link(console, "day/second.md").click()
    expect(asked(p)).to_be_visible()
    expect(asked(p).get_by_role("button", name="Keep editing")).to_be_focused()
    assert p.url == at_first
    expect(editor(p)).to_have_value(mine)
    console.assert_accessible("wiki-leave-asks")
    p.keyboard.press("Escape")  # Escape keeps editing
    expect(asked(p)).to_have_count(0)
    expect(editor(p)).to_have_value(mine)

    # Back is asked about too, and undone until the person chooses
    p.go_back()
    expect(asked(p)).to_be_visible()
    expect(p).to_have_url(at_first)
    asked(p).get_by_role("button", name="Keep editing").click()
    expect(editor(p)).to_have_value(mine)

    # leaving keeps the draft: the other page opens, and Back offers the draft on the first
    tree_link(console, "day/second.md").click()
    asked(p).get_by_role("button", name="Leave, keep the draft").click()
    expect(p.get_by_role("heading", name="Second", level=3)).to_be_visible()
    p.go_back()
    expect(p.get_by_role("heading", name="First", level=3)).to_be_visible()
    offer = p.get_by_role("region", name="Unsaved draft")
    expect(offer).to_be_visible()
    console.assert_accessible("wiki-draft-offered")

    # a reload while editing: the browser asks (beforeunload), the draft is offered after it
    offer.get_by_role("button", name="Restore the draft").click()
    expect(editor(p)).to_have_value(mine)
    editor(p).press("End")
    dialogs: list[str] = []
    p.once("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.accept()))
    p.reload()
    assert dialogs == ["beforeunload"], dialogs
    expect(p.get_by_role("region", name="Unsaved draft")).to_be_visible()
    p.get_by_role("region", name="Unsaved draft").get_by_role("button", name="Restore the draft").click()
    expect(editor(p)).to_have_value(mine)
    p.get_by_role("button", name="Save").click()
    expect(p.get_by_role("region", name="Page body")).to_contain_text("with words typed and not yet saved")
    assert pages.content("day/first.md") == mine
    assert drafts(p) == {}  # saved: no draft left behind
    expect(p.get_by_role("region", name="Unsaved draft")).to_have_count(0)


def test_escape_closes_the_editor_and_the_delete_prompt_and_save_stays_by_the_text_on_a_phone(
    console: Console, operator: tuple[str, str, str], pages: Base
) -> None:
    pages.put("day/escape.md", page("Escape", "Press it.\n"))
    console.page.set_viewport_size(NARROW)
    open_wiki(console, operator)
    p = console.page
    open_page(console, "day/escape.md")

    p.get_by_role("button", name="Edit").click()
    expect(editor(p)).to_be_focused()
    area, save = editor(p).bounding_box(), p.get_by_role("button", name="Save").bounding_box()
    assert area and save and 0 <= save["y"] - (area["y"] + area["height"]) < 80, (area, save)  # by the text
    console.assert_accessible("wiki-edit-phone")
    editor(p).press("Escape")  # nothing changed: closed at once
    expect(editor(p)).to_have_count(0)
    expect(p.get_by_role("region", name="Page body")).to_be_visible()

    p.get_by_role("button", name="Edit").click()
    editor(p).fill(page("Escape", "Changed.\n"))
    editor(p).press("Escape")  # changed: asked first, then discarded by choice
    expect(asked(p)).to_be_visible()
    asked(p).get_by_role("button", name="Discard the edit").click()
    expect(editor(p)).to_have_count(0)
    assert drafts(p) == {}

    p.get_by_role("button", name="Delete").click()
    ask = p.get_by_role("form", name="Delete this page")
    expect(ask.get_by_role("button", name="Keep it")).to_be_focused()
    p.keyboard.press("Escape")
    expect(ask).to_have_count(0)
    assert pages.get("day/escape.md").status_code == 200


# ---------------------------------------------------------------------------- 2 and 7. body first, title


def changelog() -> str:
    return page(
        "Changelog",
        "# Changelog\n\nThe first paragraph of a long changelog, which a reader came for.\n\n"
        + "".join(f"## Version 1.{n}\n\nWhat changed in 1.{n}.\n\n" for n in range(100, 0, -1)),
    )


def test_the_first_paragraph_of_a_page_with_100_headings_is_on_the_first_screen(
    console: Console, operator: tuple[str, str, str], pages: Base
) -> None:
    pages.put("day/changelog.md", changelog())
    pages.put("day/other.md", page("Other page", "Another.\n"))
    open_wiki(console, operator)
    p = console.page
    open_page(console, "day/changelog.md")
    first = p.get_by_role("region", name="Page body").get_by_text("The first paragraph of a long changelog")
    p.evaluate("() => window.scrollTo(0, 0)")
    box = first.bounding_box()
    assert box and box["y"] + box["height"] <= 800, box  # at 1280 x 800, without scrolling
    assert p.title() == "Changelog · Wiki · Knowledge console"  # the tab names the page

    # "On this page" is a column beside the body, open, its 101 entries scrolling in it
    toc = p.get_by_role("navigation", name="On this page")
    expect(toc.get_by_role("link", name="Version 1.57")).to_be_attached()
    body = p.get_by_role("region", name="Page body").bounding_box()
    side = toc.bounding_box()
    assert body and side and side["x"] >= body["x"] + body["width"], (body, side)
    # the tree stays in view while the page scrolls
    p.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
    tree = p.get_by_role("navigation", name="Page tree").bounding_box()
    assert tree and 0 <= tree["y"] < 800, tree
    p.evaluate("() => window.scrollTo(0, 0)")
    console.assert_accessible("wiki-long-page")

    other = tree_link(console, "day/other.md")
    other.click()
    expect(p).to_have_title("Other page · Wiki · Knowledge console")
    p.get_by_role("link", name="Recent changes").click()
    expect(p).to_have_title("Recent changes · Wiki · Knowledge console")

    # at 360 px: the contents folded, the body on the first screen, the tree a drawer
    p.set_viewport_size(NARROW)
    p.go_back()
    p.go_back()
    expect(p.get_by_role("heading", name="Changelog", level=3)).to_be_visible()
    p.evaluate("() => window.scrollTo(0, 0)")
    expect(p.get_by_role("navigation", name="On this page").get_by_role("link", name="Version 1.57")).to_be_hidden()
    box = first.bounding_box()
    assert box and box["y"] + box["height"] <= NARROW["height"], box
    expect(p.get_by_role("navigation", name="Page tree")).to_be_hidden()
    p.get_by_role("button", name="Pages", exact=True).click()
    expect(p.get_by_role("navigation", name="Page tree")).to_be_visible()
    console.assert_accessible("wiki-tree-drawer")
    p.keyboard.press("Escape")
    expect(p.get_by_role("navigation", name="Page tree")).to_be_hidden()
    expect(p.get_by_role("button", name="Pages", exact=True)).to_be_focused()


# ---------------------------------------------------------------------------- 3. names


@pytest.fixture
def writer(stack: LocalStack, operator: tuple[str, str, str]) -> tuple[str, Base]:
    """A second admin of the operator's project, by a name of its own: (name, its base)."""
    project = operator[0]
    name = unique("writer")
    token = stack.principal(name, *[f"--permission={p}" for p in ALL_PERMISSIONS], f"--role={project}=admin")
    return name, Base(stack, project, token)


def test_a_version_written_by_a_named_principal_shows_that_name(
    console: Console, operator: tuple[str, str, str], pages: Base, writer: tuple[str, Base]
) -> None:
    name, theirs = writer
    first = pages.put("day/named.md", page("Named", "One.\n"))
    theirs.put("day/named.md", page("Named", "Two.\n"), if_version=first["version"])
    open_wiki(console, operator)
    p = console.page
    open_page(console, "day/named.md")
    expect(p.locator("dl.frontmatter")).to_contain_text(f"{name} at")

    p.get_by_role("button", name="History").click()
    history = p.get_by_role("region", name="History")
    whos = history.get_by_role("table").locator('td[data-label="Who"]')
    expect(whos).to_have_text([name, operator[1]])  # newest first: theirs, then the operator's
    console.assert_accessible("wiki-history-named")

    p.get_by_role("link", name="Recent changes").click()
    row = p.get_by_role("row").filter(has=p.get_by_role("link", name="Named"))
    expect(row.get_by_role("cell").nth(2)).to_have_text(name)

    # a conflict names who saved first
    open_page(console, "day/named.md")
    p.get_by_role("button", name="Edit").click()
    current = httpx.get(f"{theirs.url}/pages/day/named.md", headers=theirs.headers, timeout=30.0).json()
    theirs.put("day/named.md", page("Named", "Three.\n"), if_version=current["version"])
    editor(p).fill(page("Named", "Mine.\n"))
    p.get_by_role("button", name="Save").click()
    conflict = p.get_by_role("region", name="Conflict: someone else saved first")
    expect(conflict.locator("strong").first).to_have_text(name)
    expect(conflict).to_contain_text(f"{name} saved this page")


# ---------------------------------------------------------------------------- 9. merge by hand


def test_merge_by_hand_shows_both_texts_and_saves_only_without_the_marks(
    console: Console, operator: tuple[str, str, str], pages: Base, writer: tuple[str, Base]
) -> None:
    name, theirs = writer
    written = pages.put("day/merge.md", page("Merge", "top line\nmiddle line\nbottom line\n"))
    open_wiki(console, operator)
    p = console.page
    open_page(console, "day/merge.md")
    p.get_by_role("button", name="Edit").click()
    theirs.put(
        "day/merge.md", page("Merge", "top line\nmiddle line, theirs\nbottom line\n"), if_version=written["version"]
    )
    editor(p).fill(page("Merge", "top line\nmiddle line, mine\nbottom line\n"))
    p.get_by_role("button", name="Save").click()
    p.get_by_role("region", name="Conflict: someone else saved first").get_by_role(
        "button", name="Merge by hand"
    ).click()

    merged = editor(p).input_value()
    assert f"<<<<<<< theirs ({name})\nmiddle line, theirs\n=======\nmiddle line, mine\n>>>>>>> yours\n" in merged, (
        merged
    )
    assert merged.startswith("---\n") and "top line\n" in merged and merged.endswith("bottom line\n")
    both = p.get_by_role("region", name="Both texts")  # beside it, the two texts as they were
    expect(both.get_by_label("Their version")).to_contain_text("middle line, theirs")
    expect(both.get_by_label("Your version")).to_contain_text("middle line, mine")
    expect(p.get_by_role("status").filter(has_text="Someone else saved first")).to_have_count(0)
    console.assert_accessible("wiki-merge")
    p.get_by_role("button", name="Save").click()  # the marks are still there: refused, nothing written
    expect(p.get_by_role("alert")).to_contain_text("still holds the merge marks")
    assert "mine" not in pages.content("day/merge.md")

    resolved = page("Merge", "top line\nmiddle line, theirs and mine\nbottom line\n")
    editor(p).fill(resolved)
    expect(p.get_by_role("region", name="Preview")).to_contain_text("middle line, theirs and mine")
    p.get_by_role("button", name="Save").click()
    expect(p.get_by_role("region", name="Page body")).to_contain_text("middle line, theirs and mine")
    assert pages.content("day/merge.md") == resolved


# ---------------------------------------------------------------------------- 5 and 8. markup


MARKUP = page(
    "Markup",
    "# Markup\n\n"
    "<!-- md:version 1.2 -->\n\n"
    "## Setting <!-- md:setting config.colors --> { #colors }\n\n"
    '!!! note "Read this first"\n'
    "    The note's **own** text.\n\n"
    "!!! warning\n"
    "    Careful here.\n\n"
    "A claim with a source[^1] and <small>fine print</small> and <kbd>Ctrl</kbd>.\n\n"
    "Jump to [the colours](#colors).\n\n"
    '<div class="result" markdown>\n\n'
    "Inside the result.\n\n"
    "</div>\n\n"
    "| Name | Home | Docs | Source | Issues | Licence |\n"
    "|---|---|---|---|---|---|\n"
    "| harbour | https://harbour.example.org/a/very/long/address/of/its/home/page | "
    "https://docs.harbour.example.org/reference/configuration/every-option-there-is | "
    "https://git.example.org/harbour-project/harbour-with-a-long-repository-name | "
    "https://git.example.org/harbour-project/harbour/issues?state=open&label=bug | Apache-2.0 |\n\n"
    "[^1]: The footnote's text.\n",
)


def test_admonitions_footnotes_and_the_markup_real_docs_use(
    console: Console, operator: tuple[str, str, str], pages: Base
) -> None:
    pages.put("day/markup.md", MARKUP)
    open_wiki(console, operator)
    p = console.page
    open_page(console, "day/markup.md")
    rendered = p.get_by_role("region", name="Page body")
    notes = rendered.get_by_role("note")
    expect(notes).to_have_count(2)
    expect(notes.first.locator(".admonition-title")).to_have_text("Read this first")
    expect(notes.first.locator("strong")).to_have_text("own")
    expect(notes.nth(1).locator(".admonition-title")).to_have_text("Warning")
    expect(rendered.locator("pre")).to_have_count(0)  # an admonition is no code block
    expect(rendered.locator("small")).to_have_text("fine print")
    expect(rendered.locator("kbd")).to_have_text("Ctrl")
    expect(rendered).to_contain_text("Inside the result.")
    for raw in ("<!--", "-->", "{ #colors }", "<div", "[^1]", "md:setting"):
        expect(rendered).not_to_contain_text(raw)
    toc = p.get_by_role("navigation", name="On this page")
    expect(toc.get_by_role("link")).to_have_text(["Markup", "Setting"])
    expect(rendered.get_by_role("heading", name="Setting")).to_have_attribute("id", "h-colors")
    rendered.get_by_role("link", name="the colours").click()
    expect(rendered.get_by_role("heading", name="Setting")).to_be_focused()

    # a footnote: its mark a link to the note, the note a link back
    rendered.get_by_role("link", name="Footnote 1", exact=True).click()
    note = rendered.locator("#fn-1")
    expect(note).to_be_focused()
    expect(note).to_contain_text("The footnote's text.")
    assert "at=fn-1" in p.url
    note.get_by_role("link", name="Back to the reference of footnote 1").click()
    expect(rendered.get_by_role("link", name="Footnote 1", exact=True)).to_be_focused()
    console.assert_accessible("wiki-markup", dark_too=True)

    # the six-column table of long addresses scrolls in its own box; the page keeps its width
    box = rendered.get_by_role("group", name="Table")
    box.scroll_into_view_if_needed()
    for size in ({"width": 1280, "height": 800}, NARROW):
        p.set_viewport_size(size)
        assert p.evaluate("() => document.documentElement.scrollWidth") <= size["width"], size
        widths = box.evaluate("(b) => [b.scrollWidth, b.clientWidth]")
        assert widths[0] > widths[1], (size, widths)  # it scrolls, inside its box
        expect(box.get_by_role("columnheader", name="Licence")).to_be_attached()  # still a table
    console.assert_accessible("wiki-wide-table")


# ---------------------------------------------------------------------------- 12 and 13


def test_search_pages_fits_a_phone_and_lint_sets_aside_what_imported_pages_lack_by_design(
    console: Console, operator: tuple[str, str, str], pages: Base
) -> None:
    word = unique("wrapme").replace("-", "x")
    pages.put("index.md", "---\nokf_version: 1\n---\n# Index\n\nSee [the one page](day/linked.md).\n")
    pages.put("day/linked.md", page("Linked", "Linked from the index.\n"))
    for n in range(3):  # imported notes: no front matter, no entry in the index
        pages.put(f"imported/note-{n}.md", f"# Note {n}\n\nThe {word} {'y' * 80} word and [a link](missing-{n}.md).\n")
    console.page.set_viewport_size(NARROW)
    open_wiki(console, operator)
    p = console.page
    p.get_by_role("link", name="Search pages").click()
    form = p.get_by_role("search", name="Search pages")
    form.get_by_label("Words").fill(word)
    form.get_by_role("button", name="Search pages").click()
    expect(p.get_by_role("status").filter(has_text="3 pages match.")).to_be_visible()
    assert p.evaluate("() => document.documentElement.scrollWidth") <= NARROW["width"]
    console.assert_accessible("wiki-search-phone")

    p.get_by_role("link", name="Lint").click()
    findings = p.get_by_role("table")
    expect(findings.get_by_role("cell", name="broken link")).to_have_count(3)
    expect(findings.get_by_role("cell", name="missing frontmatter")).to_have_count(0)
    expect(p.get_by_text(re.compile(r"^Set aside: 6 findings say only"))).to_be_visible()
    kinds = p.get_by_role("list", name="Findings by kind")
    expect(kinds).to_contain_text("missing frontmatter: 3")
    console.assert_accessible("wiki-lint-imported")
    p.get_by_role("button", name="Show them too").click()
    expect(findings.get_by_role("cell", name="missing frontmatter")).to_have_count(3)
    expect(findings.get_by_role("cell", name="missing index entry")).to_have_count(3)


# ---------------------------------------------------------------------------- 10. the last project


def test_signing_in_again_reopens_the_last_project_this_browser_showed(console: Console, stack: LocalStack) -> None:
    first, second = unique("aaa-last"), unique("zzz-last")
    for project in (first, second):
        stack.admin("project", "create", project, "--organization", "colony")
    token = stack.principal(
        unique("person"),
        *[f"--permission={p}" for p in ALL_PERMISSIONS],
        f"--role={first}=admin",
        f"--role={second}=admin",
    )
    p = console.page
    console.sign_in(token)
    picker = p.get_by_role("combobox", name="Project", exact=True)
    expect(picker).to_have_value(first)  # nothing remembered yet: the first, alphabetically
    console.pick_project(second)
    expect(p).to_have_url(re.compile(rf"project={second}"))
    p.get_by_role("button", name="Sign out").click()
    expect(p.get_by_role("heading", name="Sign in")).to_be_visible()
    p.goto("/console/")  # an address naming no project
    console.sign_in(token)
    expect(p.get_by_role("combobox", name="Project", exact=True)).to_have_value(second)
    expect(p).to_have_url(re.compile(rf"project={second}"))


# ---------------------------------------------------------------------------- statements, sources, evidence

WORDS = ("ferryman", "quayside")


@pytest.fixture(scope="module")
def harbour(stack: LocalStack) -> str:
    """Notes of this module's own in falcon's base, read by the engine: 36 statements each holding
    both words, never side by side (a phrase search finds none), each its own paragraph."""
    folder = f"harbour-{uuid.uuid4().hex[:8]}"
    root = stack.workspace / folder
    root.mkdir(parents=True)
    places = ["north", "south", "east", "west", "old", "new"]
    for n in range(3):
        lines = [f"# Harbour notes {n}\n"]
        for m in range(12):
            where = places[(n * 12 + m) % len(places)]
            lines.append(
                f"The {where} ferryman number {n}{m:02d} checks every lantern"
                f" before the {where} quayside opens at dawn.\n"
            )
        (root / f"notes-{n}.md").write_text("\n".join(lines))
    with httpx.Client(base_url=stack.url, headers=bearer(stack.admin_token), timeout=30) as http:
        job = http.post("/knowledge/jobs", params={"project": REF}, json={"paths": [folder]}).json()["data"]
        deadline = time.monotonic() + 120
        while not http.get(f"/knowledge/jobs/{job['job_id']}", params={"project": REF}).json()["data"]["terminal"]:
            assert time.monotonic() < deadline, "the import did not finish"
            time.sleep(0.3)
    return folder


def on_falcon(console: Console, section: str) -> None:
    console.sign_in(console.stack.admin_token)
    console.pick_project(REF)
    expect(console.page.get_by_text(f"Reads knowledge base {REF}")).to_be_visible()
    console.section(section)


def shown_ids(p: Page) -> list[str]:
    labels = p.get_by_role("region", name="Statements").get_by_role("button", name=re.compile("^Open ki_"))
    return [str(label.get_attribute("aria-label")).removeprefix("Open ") for label in labels.all()]


def test_a_two_word_statement_search_finds_what_the_api_finds_and_pages_to_the_last(
    console: Console, stack: LocalStack, harbour: str
) -> None:
    words = " ".join(WORDS)
    found = httpx.get(
        stack.url + "/knowledge/search",
        headers=bearer(stack.admin_token),
        params={"project": REF, "q": words, "limit": 50},
        timeout=30.0,
    ).json()["data"]["hits"]
    assert len(found) > 25, len(found)  # more than one page of them
    on_falcon(console, "Search")
    p = console.page
    p.get_by_label("Words").fill(words)
    p.get_by_role("button", name="Search", exact=True).click()
    expect(p.get_by_role("status").filter(has_text=f"{len(found)} statements match.")).to_be_visible()
    seen: list[str] = []
    pager = p.get_by_role("navigation", name="Pages of statements")
    while True:
        expect(pager).to_contain_text(f"Statements {len(seen) + 1}–")
        seen += shown_ids(p)
        following = pager.get_by_role("button", name="Next statements")
        if following.is_disabled():
            break
        following.click()
    assert seen == [hit["knowledge_id"] for hit in found]  # the API's ranking, every one reachable
    assert "page=2" in p.url
    p.reload()  # the page of results is in the address
    expect(pager).to_contain_text(f"Statements 26–{len(found)} of {len(found)}")
    console.assert_accessible("search-words-paged")


def test_a_source_is_an_address_and_evidence_in_context_keeps_its_lines_and_links_its_source(
    console: Console, stack: LocalStack, harbour: str
) -> None:
    on_falcon(console, "Search")
    p = console.page
    p.get_by_label("Words").fill(" ".join(WORDS))
    p.get_by_role("button", name="Search", exact=True).click()
    p.get_by_role("button", name=re.compile("^Open ki_")).first.click()
    item = p.get_by_role("region", name=re.compile("^Item: "))
    item.get_by_text("In context").first.click()
    context = item.locator(".in-context").first
    expect(context.locator("mark")).to_contain_text("ferryman")
    assert "\n" in context.inner_text()  # the source's line breaks, drawn as breaks
    console.assert_accessible("search-evidence-lines")

    source = item.get_by_role("link", name=re.compile(rf"^{harbour}[/]notes-[0-9][.]md$")).first
    name = source.inner_text()
    source.click()
    expect(p.get_by_role("heading", name="Sources", level=2)).to_be_visible()
    opened = p.get_by_role("region", name=name)
    expect(opened).to_be_visible()
    assert re.search(r"[?&]source=src_", p.url), p.url
    top = opened.bounding_box()
    assert top and 0 <= top["y"] < 200, top  # at the top of the screen, not below every row
    p.reload()
    expect(p.get_by_role("region", name=name)).to_be_visible()  # the address reopens it
    console.assert_accessible("sources-source-address")
    p.go_back()
    expect(p.get_by_role("heading", name=re.compile("^Item: "))).to_be_visible()
    p.go_forward()
    expect(p.get_by_role("region", name=name)).to_be_visible()
    p.get_by_role("button", name="Close the source").click()
    expect(p.get_by_role("region", name=name)).to_have_count(0)
    p.go_back()  # Back opens it again; closing it was a move
    expect(p.get_by_role("region", name=name)).to_be_visible()
    p.go_forward()
    expect(p.get_by_role("region", name=name)).to_have_count(0)

    # the list: sorted by a column, filtered when long, opened from its row
    table = p.get_by_role("region", name="Registered sources").get_by_role("table")
    header = table.get_by_role("columnheader", name="Name")
    header.get_by_role("button").click()
    expect(header).to_have_attribute("aria-sort", "ascending")
    if p.get_by_label("Filter rows").count():
        p.get_by_label("Filter rows").fill(harbour)
        expect(table.get_by_role("row")).to_have_count(4)  # a header and the three notes
    table.get_by_role("button", name=f"Open {name}").click()
    expect(p.get_by_role("region", name=name)).to_be_visible()
