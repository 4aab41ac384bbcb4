"""The page search compactor's lease and pointer swap, held to their conditions (issue 39's
mutation survivors): a lease expires, a release never deletes a lease another holder took, and a
stale swap loses — returning False, and its uploaded snapshot dropped."""

from __future__ import annotations

import itertools
from typing import Any

from knowledge_service.domain.pages import page_search
from knowledge_service.domain.pages.page_search import PageSearch
from knowledge_service.domain.pages.service import Pages
from knowledge_service.runtime import Runtime
from knowledge_service.storage.search_store import Snapshot

_projects = itertools.count()


def project() -> str:
    return f"compactor{next(_projects)}"


def test_a_lease_is_refused_while_held_and_taken_once_it_expired(aws: Runtime) -> None:
    name = project()
    assert aws.search.lease(name, "first", 60, now=1_000)
    assert not aws.search.lease(name, "second", 60, now=1_059)
    assert aws.search.lease(name, "second", 60, now=1_061)  # the first holder died: its lease ran out


def test_a_release_by_another_holder_leaves_the_lease_where_it_is(aws: Runtime) -> None:
    name = project()
    assert aws.search.lease(name, "holder", 60, now=1_000)
    aws.search.release(name, "someone-else")
    assert not aws.search.lease(name, "third", 60, now=1_010)
    aws.search.release(name, "holder")
    assert aws.search.lease(name, "third", 60, now=1_010)


def test_a_stale_swap_returns_false_and_moves_nothing(aws: Runtime) -> None:
    name = project()
    first, second = Snapshot("search/a", "1", 1), Snapshot("search/b", "2", 2)
    assert aws.search.swap(name, None, first)
    assert not aws.search.swap(name, None, second)  # the pointer exists: "from nothing" is stale
    assert not aws.search.swap(name, Snapshot("search/other", "1", 1), second)  # not the pointer it names
    assert aws.search.pointer(name) == first
    assert aws.search.swap(name, first, second)


def test_a_compactor_that_lost_the_swap_drops_the_snapshot_it_uploaded(aws: Runtime) -> None:
    # Given pages to fold, and a second compactor that swaps between this one's read and its swap
    name = project()
    page_search._OPEN.clear()
    Pages(aws.pages, name).put("/fs/a.md", "---\ntype: Concept\ntitle: a\n---\nalpha\n", None)
    finder = PageSearch(aws.search, name)
    uploaded: list[str] = []
    upload = aws.search.upload

    def upload_then_lose_the_race(*args: Any) -> str:
        key = upload(*args)
        uploaded.append(key)
        assert aws.search.swap(name, None, Snapshot("search/winner", "9", 0))  # the other compactor won
        return key

    finder.store.upload = upload_then_lose_the_race  # type: ignore[method-assign]
    # When it compacts
    done = finder.compact(force=True)
    # Then it says so, the winner's pointer stands, and the loser's object is gone
    assert done == {"compacted": False, "reason": "another compactor swapped first"}
    assert aws.search.pointer(name) == Snapshot("search/winner", "9", 0)
    assert aws.search.local_copy(uploaded[0]) is None
