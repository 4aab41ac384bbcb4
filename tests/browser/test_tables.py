"""Issue 41, tables that read: no word of any table broken between two letters at 1280 px and at
360 px (a DOM-range check), and Lint's many findings sorted, filtered and paged.
docs/console.md, Tables."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Console
from tests.browser.test_wiki import Base, base, open_wiki, page  # noqa: F401 (base: the fixture)

pytestmark = pytest.mark.e2e

WIDE = {"width": 1280, "height": 800}
NARROW = {"width": 360, "height": 780}


def fill_base(pages: Base, count: int) -> None:
    """`count` pages that each link to two pages that do not exist (two lint findings a page), with
    the long words real pages have (Unverified, Troubleshooting, a long tag)."""
    for n in range(count):
        pages.put(
            f"handbook/section-{n:03d}/troubleshooting-the-deployment-{n:03d}.md",
            page(
                f"Troubleshooting the deployment pipeline {n:03d}",
                f"See [missing](nowhere-{n}.md) and [also missing](/elsewhere/{n}).\n",
                type_="Troubleshooting",
                tags="[infrastructure-operations, deployment]",
            ),
        )


def test_no_table_breaks_a_word_and_lint_sorts_filters_and_pages(
    console: Console,
    operator: tuple[str, str, str],
    base: Base,  # noqa: F811 (the fixture imported above)
) -> None:
    fill_base(base, 30)
    open_wiki(console, operator)
    p = console.page
    screens = {
        "Directory view": lambda: (
            p.get_by_role("navigation", name="Page tree").get_by_role("treeitem", name="handbook/").click()
        ),
        "Needs review": lambda: p.get_by_role("link", name="Needs review").click(),
        "Lint": lambda: p.get_by_role("link", name="Lint").click(),
    }
    for name, go in screens.items():
        go()
        expect(p.get_by_role("heading", name=name, level=3)).to_be_visible()
        expect(p.get_by_role("table")).to_be_visible()
        for size in (WIDE, NARROW):
            p.set_viewport_size(size)
            assert console.broken_words() == [], (name, size)
            assert p.evaluate("() => document.documentElement.scrollWidth") <= size["width"], (name, size)
        p.set_viewport_size(WIDE)

    # Lint: more findings than a page of 50 rows; paged, filtered to one page's findings, sorted
    total = int((p.get_by_role("status").filter(has_text=re.compile(r"^\d+ rows$")).inner_text()).split()[0])
    assert total > 60, total
    expect(p.get_by_text(f"Rows 1–50 of {total}")).to_be_visible()
    table = p.get_by_role("table")
    expect(table.get_by_role("row")).to_have_count(51)
    p.get_by_role("button", name="Next rows").click()
    expect(p.get_by_text(f"Rows 51–{min(100, total)} of {total}")).to_be_visible()
    p.get_by_label("Filter rows").fill("section-007")
    expect(p.get_by_role("status").filter(has_text=re.compile(rf"^[1-9] of {total} rows$"))).to_be_visible()
    for cell in table.get_by_role("cell").filter(has=p.get_by_role("link")).all():
        assert "section-007" in cell.inner_text()
    header = table.get_by_role("columnheader", name="Page")
    header.get_by_role("button").click()
    expect(header).to_have_attribute("aria-sort", "ascending")
    header.get_by_role("button").click()
    expect(header).to_have_attribute("aria-sort", "descending")
    console.assert_accessible("wiki-lint-many")
