"""A page write reads the version item of its bytes once (issue 30: the store read it again)."""

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


def test_a_write_reads_its_bytes_version_item_once_new_or_already_kept(
    admin: Client, pages: Pages, version_reads: list[str]
) -> None:
    assert admin.put("a.md", "# Same bytes\n").status == 200
    assert len(version_reads) == 1
    used = pages.runtime.pages.generation("falcon")[1]
    assert admin.put("b.md", "# Same bytes\n").status == 200  # kept already: stored once
    assert len(version_reads) == 2
    assert pages.runtime.pages.generation("falcon")[1] == used
