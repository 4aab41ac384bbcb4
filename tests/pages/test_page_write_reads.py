"""A page write reads no version item ahead of its transaction (issue 30: the store read it
twice, then once): the transaction puts the version item on condition that none exists, and
bytes another write kept already are written again without it, counted once."""

from __future__ import annotations

import pytest

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
