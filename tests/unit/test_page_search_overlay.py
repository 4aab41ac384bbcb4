"""The law of the search overlay: whatever sequence of writes, deletes and compactions (settled
or not) a base went through, a query over snapshot + overlay answers exactly what a fresh index
of the final pages answers — the same hits in the same order, the same snippets and total.

Writes go through the one write path (``Pages``) into moto's tables built from template.yaml.
"""

from __future__ import annotations

import itertools
import time

from hypothesis import HealthCheck, given, settings, strategies as st

from knowledge_service.domain.pages import page_search
from knowledge_service.domain.pages.describe import describe
from knowledge_service.domain.pages.page_search import PageSearch
from knowledge_service.domain.pages.search import Index, parse_query, search_row
from knowledge_service.domain.pages.service import Pages
from knowledge_service.runtime import Runtime
from knowledge_service.storage.page_store import version_of

PATHS = ["/fs/a.md", "/fs/b.md", "/fs/d/c.md", "/fs/d/e.md"]
WORDS = ["alpha", "beta", "gamma", "delta", "caddy"]
_projects = itertools.count()

write = st.tuples(st.just("put"), st.sampled_from(PATHS), st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
delete = st.tuples(st.just("delete"), st.sampled_from(PATHS), st.just([]))
compact = st.tuples(st.sampled_from(["compact", "compact-settled"]), st.just(""), st.just([]))


def content(words: list[str]) -> str:
    return f"---\ntype: Concept\ntitle: {words[0]}\ntags: [{words[-1]}]\n---\n{' '.join(words)}\n"


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(st.one_of(write, delete, compact), max_size=14))
def test_snapshot_plus_overlay_answers_what_a_fresh_index_of_the_final_pages_answers(
    aws: Runtime, steps: list[tuple[str, str, list[str]]]
) -> None:
    project = f"law{next(_projects)}"  # a project of its own per example: the moto tables are shared
    page_search._OPEN.clear()
    pages = Pages(aws.pages, project)
    finder = PageSearch(aws.search, project)
    final: dict[str, str] = {}
    for op, path, words in steps:
        if op == "put":
            pages.put(path, content(words), None)
            final[path] = content(words)
        elif op == "delete" and path in final:
            pages.delete(path, None)
            del final[path]
        elif op.startswith("compact"):
            finder.compact(force=True, now=time.time() + (120 if op == "compact-settled" else 0))
    fresh = Index.memory()
    fresh.commit((p, search_row(p, text, describe(p, text), version_of(text.encode()))) for p, text in final.items())
    for word in [*WORDS, "d", "fs", "concept"]:
        query = parse_query(word, limit=50)
        got = finder.search(query)
        want = fresh.search(query)
        assert (got["hits"], got["total"]) == (want.hits, want.total), word
    for tag in WORDS:
        query = parse_query("concept", tag=tag, limit=50)
        assert finder.search(query)["hits"] == fresh.search(query).hits
