"""The evaluation's sets and question files, without the network or the cache: which members of
an sdist are a set's files, and the question files in the repository hold their shape (at least
60 questions a set, a third of each kind)."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from benchmarks.eval import datasets, questions
from benchmarks.eval.datasets import DocSet
from benchmarks.eval.questions import KINDS

DEMO = DocSet(
    name="demo",
    package="demo",
    version="1.0",
    sha256="0" * 64,
    folder="docs",
    suffix=".rst",
    markup="reStructuredText",
    held_out=False,
)


def test_a_set_is_its_docs_folder_files_of_its_suffix_hidden_ones_left_out() -> None:
    names = [
        "demo-1.0/docs/index.rst",
        "demo-1.0/docs/patterns/app.rst",
        "demo-1.0/docs/conf.py",
        "demo-1.0/docs/.hidden/x.rst",
        "demo-1.0/docs/.notes.rst",
        "demo-1.0/README.rst",
        "demo-1.0/docsextra/x.rst",
        "other-1.0/docs/y.rst",
    ]
    assert datasets.members(DEMO, names) == {
        "demo-1.0/docs/index.rst": "index.rst",
        "demo-1.0/docs/patterns/app.rst": "patterns/app.rst",
    }


def test_an_sdist_already_in_the_cache_with_the_pinned_digest_is_unpacked_without_a_download(tmp_path: Path) -> None:
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        for name, text in [("demo-1.0/docs/a.rst", b"A\n=\n\nOne.\n"), ("demo-1.0/setup.py", b"")]:
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text))
    data = archive.getvalue()
    pinned = DocSet(**{**vars(DEMO), "sha256": hashlib.sha256(data).hexdigest()})
    (tmp_path / "sdists").mkdir()
    (tmp_path / "sdists" / pinned.sdist).write_bytes(data)
    root = datasets.ensure(pinned, tmp_path)
    assert root == tmp_path / "demo-1.0" / "docs"
    assert datasets.files_of(root, ".rst") == ["a.rst"]
    assert (root / "a.rst").read_text() == "A\n=\n\nOne.\n"
    (root / "a.rst").write_text("changed")  # a second call finds the set complete and leaves it
    assert datasets.ensure(pinned, tmp_path) == root
    assert (root / "a.rst").read_text() == "changed"


def test_the_sets_are_pinned_and_the_held_out_one_is_last() -> None:
    assert [s.held_out for s in datasets.SETS.values()] == [False, True]
    for docset in datasets.SETS.values():
        assert len(docset.sha256) == 64 and int(docset.sha256, 16) >= 0
        assert docset.version and docset.suffix in (".rst", ".md")


@pytest.mark.parametrize("name", list(datasets.SETS))
def test_each_set_has_at_least_sixty_questions_a_third_of_each_kind(name: str) -> None:
    found = questions.load(name)
    assert len(found) >= 60
    for kind in KINDS:
        assert sum(q.kind == kind for q in found) * 3 == len(found), kind
    assert all(q.files and all(f.endswith(datasets.SETS[name].suffix) for f in q.files) for q in found)
