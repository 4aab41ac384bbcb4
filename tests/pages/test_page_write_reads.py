"""A page write reads no version item ahead of its transaction (issue 30: the store read it
twice, then once): the transaction puts the version item on condition that none exists, and
bytes another write kept already are written again without it, counted once."""

from __future__ import annotations

import pytest

from knowledge_service.domain.pages.service import Pages as PageService
from knowledge_service.storage.page_store import PageStore
from tests.pages.conftest import Client, Pages


@pytest.fixture
def version_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    real = PageStore.is_kept

    def counted(self: PageStore, project: str, version: str) -> bool:
        reads.append(version)
        return real(self, project, version)

    monkeypatch.setattr(PageStore, "is_kept", counted)
    return reads


def test_a_write_reads_no_version_item_and_counts_bytes_already_kept_once(
    admin: Client, pages: Pages, version_reads: list[str]
) -> None:
    assert admin.put("a.md", "# Same bytes\n").status == 200
    used = pages.runtime.pages.generation("falcon")[1]
    assert used == len(b"# Same bytes\n")
    assert admin.put("b.md", "# Same bytes\n").status == 200  # kept already: stored once
    assert version_reads == []
    assert pages.runtime.pages.generation("falcon")[1] == used
    assert pages.runtime.pages.kept_versions("falcon") == {
        pages.runtime.pages.head("falcon", "/fs/a.md").version: used  # type: ignore[union-attr, dict-item]
    }
    assert admin.get("/api/v1/projects/falcon/kb/pages/b.md").body["content"] == "# Same bytes\n"


@pytest.mark.parametrize("guarded", [False, True])
def test_a_delete_that_meets_a_write_reads_again_unless_it_named_the_version(
    admin: Client, pages: Pages, monkeypatch: pytest.MonkeyPatch, guarded: bool
) -> None:
    assert admin.put("gone.md", "# First\n").status == 200
    first = pages.runtime.pages.head("falcon", "/fs/gone.md")
    assert first is not None
    real = PageStore.write
    landed: list[bool] = []

    def write_lands_first(self: PageStore, write: object) -> object:
        if not landed:  # another request's write lands between the delete's read and its own
            landed.append(True)
            PageService(pages.runtime.pages, "falcon").put("/fs/gone.md", "# Second\n", None)
        return real(self, write)  # type: ignore[arg-type]

    monkeypatch.setattr(PageStore, "write", write_lands_first)
    target = "/api/v1/projects/falcon/kb/pages/gone.md" + (f"?if_version={first.version}" if guarded else "")
    answer = admin.call("DELETE", target)
    if guarded:  # the caller named the version it read: the page changed since, 409
        assert answer.status == 409
        assert pages.runtime.pages.head("falcon", "/fs/gone.md").exists  # type: ignore[union-attr]
    else:  # unguarded: read again and delete what is there now (the last writer wins)
        assert answer.status == 200, answer.body
        assert not pages.runtime.pages.head("falcon", "/fs/gone.md").exists  # type: ignore[union-attr]
