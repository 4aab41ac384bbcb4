"""A page's first ``#`` heading, the title of a page whose frontmatter gives none."""

from __future__ import annotations

from hypothesis import given, strategies as st

from knowledge_service.domain.pages.describe import HEADING_MAX, first_heading


def test_the_first_level_one_heading_outside_code_and_frontmatter() -> None:
    page = "---\ntitle: x\n---\n~~~\n# in a fence\n~~~\n## Second level\n#   Deploy `hub`  #\n# Later\n"
    assert first_heading(page) == "Deploy hub"
    assert first_heading("#no space is no heading\ntext") is None
    assert first_heading("") is None


@given(st.text(max_size=300))
def test_a_heading_is_one_line_of_bounded_text_or_none(text: str) -> None:
    found = first_heading(text)
    assert found is None or (0 < len(found) <= HEADING_MAX and "\n" not in found and found == found.strip())
