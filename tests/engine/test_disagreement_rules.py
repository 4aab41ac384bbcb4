"""The disagreement rules' documented choices, held on notes the tests write and read through the
engine's stages (issue 57: a mutation round found them unheld; local_engine/README.md,
"Disagreements"): the suggested winner (the newer document, then more evidence, then the later
read) and the sentence saying which decided; a copy's sides (the original's first five
statements); supersession by a name or a list; what is no value (a year, a reference, a hedge)
and a qualifier that makes two subjects; a claim of fewer than three words; the said-twice
exceptions; and the first 100 claims a subject compares."""

from __future__ import annotations

from pathlib import Path

from local_engine.ingestion import pipeline
from local_engine.store.database import Store
from tests.documents import read_to_validation

FALCON = "Project Falcon launches on {} after the steering review.\n"


def _read(folder: Path, files: dict[str, str]) -> Store:
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    return read_to_validation(folder)


def _conflicts(store: Store) -> list[tuple[str, str, str, str | None, list[tuple[str, str]]]]:
    """Each disagreement: its type, title, suggested resolution, the winner's words, and its sides'
    words and statuses in their order."""
    found = []
    for conflict_id, kind, title, why, winner in store.rows(
        "SELECT conflict_id, type, title, suggested_resolution, suggested_winner FROM conflicts ORDER BY title"
    ):
        sides = store.rows(
            "SELECT s.statement, s.status FROM conflict_sides c JOIN statements s USING (knowledge_id)"
            " WHERE c.conflict_id = ? ORDER BY c.position",
            conflict_id,
        )
        won = store.value("SELECT statement FROM statements WHERE knowledge_id = ?", winner) if winner else None
        found.append((kind, title, why, won, [(row[0], row[1]) for row in sides]))
    return found


def _read_again(store: Store, folder: Path) -> None:
    """Every file of the folder read again (a forced job), up to indexing."""
    work = pipeline.Work(job_id="job_again", ref="base", kind="paths", inputs=[str(folder)], force=True)
    for name, stage in pipeline.STAGE_WORK.items():
        if name == "indexing":
            break
        stage(store, work)


def _said(template: str, value: str) -> str:
    return template.format(value).strip()


def test_the_newer_document_wins_and_the_sentence_names_both_dates(tmp_path: Path) -> None:
    store = _read(
        tmp_path / "dated",
        {
            "a.md": "---\ndate: 2026-01-01\n---\n# A\n\n" + FALCON.format("2026-03-03"),
            "b.md": "---\ndate: 2026-02-01\n---\n# B\n\n" + FALCON.format("2026-04-10"),
        },
    )
    old, new = _said(FALCON, "2026-03-03"), _said(FALCON, "2026-04-10")
    assert _conflicts(store) == [
        (
            "contradiction",
            "Project Falcon launches steering review",
            "Keep the statement of dated/b.md (2026-02-01, against 2026-01-01 for dated/a.md): it is the newer"
            " document. Archive the other.",
            new,
            [(old, "Disputed"), (new, "Active")],
        )
    ]


def test_a_dated_document_wins_over_an_undated_one(tmp_path: Path) -> None:
    store = _read(
        tmp_path / "half",
        {
            "a.md": "---\ndate: 2026-02-01\n---\n# A\n\n" + FALCON.format("2026-03-03"),
            "b.md": FALCON.format("2026-04-10"),
        },
    )
    ((_, _, why, won, _),) = _conflicts(store)
    assert won == _said(FALCON, "2026-03-03")  # read first, but the only one dated
    assert why == "Keep the statement of half/a.md (2026-02-01): it is the newer document. Archive the other."


def test_undated_the_statement_more_documents_say_wins(tmp_path: Path) -> None:
    store = _read(
        tmp_path / "said",
        {
            "a.md": "# A\n\n" + FALCON.format("2026-03-03"),
            "b.md": "# B\n\n" + FALCON.format("2026-03-03"),
            "c.md": FALCON.format("2026-04-10"),
        },
    )
    ((kind, _, why, won, sides),) = _conflicts(store)
    assert (kind, won) == ("contradiction", _said(FALCON, "2026-03-03"))  # said by a.md and b.md: read before c.md
    assert why.startswith("Keep the statement of said/a.md: ") and why.endswith(" for said/c.md. Archive the other.")
    assert sides == [(_said(FALCON, "2026-03-03"), "Active"), (_said(FALCON, "2026-04-10"), "Disputed")]


def test_else_the_later_read_wins_and_the_sentence_asks_to_check_both(tmp_path: Path) -> None:
    store = _read(tmp_path / "even", {"a.md": FALCON.format("2026-03-03"), "b.md": FALCON.format("2026-04-10")})
    ((_, _, why, won, sides),) = _conflicts(store)
    assert won == _said(FALCON, "2026-04-10")
    assert why == (
        "Keep the statement of even/b.md, read after even/a.md: neither is dated newer nor said more often,"
        " so check both before archiving one."
    )
    _read_again(store, tmp_path / "even")  # the files read again: the same open disagreement, the same sides
    assert _conflicts(store) == [("contradiction", "Project Falcon launches steering review", why, won, sides)]


def test_a_copys_sides_are_the_originals_first_five_statements(tmp_path: Path) -> None:
    said = [f"The harbour crane number {n} lifts timber at dawn." for n in range(7)]
    text = "# Cranes\n\n" + "\n\n".join(said) + "\n"
    store = _read(tmp_path / "copies", {"a.md": text, "b.md": text})
    ((kind, title, why, won, sides),) = _conflicts(store)
    assert (kind, title, why, won) == (
        "duplicate",
        "copies/b.md is a copy of copies/a.md",
        "Archive the copy: copies/a.md says every word of it.",
        None,
    )
    assert sides == [(s, "Active") for s in said[:5]]
    named = store.rows("SELECT s.name FROM conflict_sources c JOIN sources s USING (source_id) ORDER BY s.name")
    assert [row[0] for row in named] == ["copies/a.md", "copies/b.md"]


def test_a_document_supersedes_the_sources_its_front_matter_names_or_lists(tmp_path: Path) -> None:
    store = _read(
        tmp_path / "drafts",
        {
            "one.md": "# One\n\nThe first draft says the quay opens at six.\n",
            "two.md": "# Two\n\nThe second draft says the pier closes at nine.\n",
            "three.md": "# Three\n\nThe third draft says the tug leaves at noon.\n",
            "zfinal.md": "---\nsupersedes: [one.md, drafts/two.md]\n---\n# Final\n\nThe final text says it all.\n",
            "zlast.md": "---\nsupersedes: three.md\n---\n# Last\n\nThe last text says the rest.\n",
        },
    )
    read = "SELECT s.name, i.status FROM statements i JOIN sources s USING (source_id)"
    statuses = {row[0]: row[1] for row in store.rows(read)}
    assert statuses == {
        "drafts/one.md": "Superseded",
        "drafts/two.md": "Superseded",
        "drafts/three.md": "Superseded",
        "drafts/zfinal.md": "Active",
        "drafts/zlast.md": "Active",
    }
    superseding = {
        row[0]: row[1]
        for row in store.rows("SELECT s.name, o.name FROM sources s JOIN sources o ON o.source_id = s.superseded_by")
    }
    assert superseding == {
        "drafts/one.md": "drafts/zfinal.md",
        "drafts/two.md": "drafts/zfinal.md",
        "drafts/three.md": "drafts/zlast.md",
    }


def test_no_contradiction_without_a_value_of_the_same_subject_and_three_claim_words(tmp_path: Path) -> None:
    pairs = {
        "year": (
            "Project Falcon office was founded in 2019 by the council.",
            "Project Falcon office was founded in 2020 by the council.",
        ),
        "reference": (
            "Project Heron crane repair is tracked in issue #57 today.",
            "Project Heron crane repair is tracked in issue #58 today.",
        ),
        "kind": (  # a date and a number: values of two kinds
            "Project Osprey launches on 2026-03-03 after the review.",
            "Project Osprey launches after the review with 12 engineers.",
        ),
        "hedge": ("Project Kestrel probably employs 12 engineers.", "Project Kestrel probably employs 15 engineers."),
        "version": ("Heron 2.0 supports 3 databases in production.", "Heron 2.1 supports 4 databases in production."),
        "step": ("Setup step 2 takes 10 minutes on the server.", "Setup step 3 takes 20 minutes on the server."),
        "short": ("Heron 3.0 has 12 boats.", "Heron 3.0 has 15 boats."),  # two claim words: heron, boats
    }
    files = {f"{name}-{side}.md": f"# Notes\n\n{pair[side]}\n" for name, pair in pairs.items() for side in (0, 1)}
    assert _conflicts(_read(tmp_path / "none", files)) == []
    versioned = {
        "a.md": "Heron 2.0 supports 3 databases in production.\n",
        "b.md": "Heron 2.0 supports 4 databases in production.\n",
        "c.md": "Heron 3.0 has 12 wooden boats.\n",
        "d.md": "Heron 3.0 has 15 wooden boats.\n",
        "e.md": "Project Osprey version 2 needs 3 cranes on the quay.\n",
        "f.md": "Project Osprey version 2 needs 5 cranes on the quay.\n",
    }
    titles = [c[1] for c in _conflicts(_read(tmp_path / "some", versioned))]
    assert titles == [
        "Heron 2.0 supports databases production",
        "Heron 3.0 wooden boats",
        "Project Osprey version 2 needs cranes quay",  # its qualifier once
    ]


def test_a_name_given_for_the_subject_is_its_value(tmp_path: Path) -> None:
    store = _read(
        tmp_path / "owners",
        {
            "a.md": "Project Falcon is led by Ingrid Olsen.\n",
            "b.md": "Project Falcon is led by Robert Smith.\n",
            "c.md": "Project Heron is led by Ingrid Olsen after Robert Smith.\n",
            "d.md": "Project Heron is led by Ingrid Olsen after Ann Carter.\n",  # the last name given
        },
    )
    assert [c[:2] for c in _conflicts(store)] == [
        ("contradiction", "Project Falcon led"),
        ("contradiction", "Project Heron led ingrid olsen"),
    ]


def test_said_twice_in_other_words_is_a_duplicate_unless_an_exception_holds(tmp_path: Path) -> None:
    files = {
        "a.md": "The night crew inspects every crane.\n",  # five content words
        "b.md": "Every crane the night crew inspects.\n",
        "c.md": "The harbour board publishes the tide tables for the coming winter.\n",
        "d.md": "The harbour board does not publish the tide tables for the coming winter.\n",  # denies it
        "e.md": "The pilots use the following signal flags for the northern channel:\n",  # introduces what follows
        "f.md": "For the northern channel the pilots use the following signal flags.\n",
        "i.md": "The pilots raise the following storm cones at the western gate.\n",
        "j.md": "At the western gate the pilots raise the following storm cones:\n",
        "g.md": "The tug pulls the barge out.\n",
        "h.md": "Out pulls the tug the barge.\n",  # four content words
    }
    store = _read(tmp_path / "twice", files)
    ((kind, title, why, won, sides),) = _conflicts(store)
    assert (kind, won) == ("duplicate", None)
    assert title.endswith(", said twice")
    assert why == "Archive the duplicate: twice/a.md says the same thing in other words."
    assert sides == [(files["a.md"].strip(), "Active"), (files["b.md"].strip(), "Active")]  # no side disputed
    series = {  # a changelog's or a news file's entry is its release's: read before, or after
        "CHANGELOG.md": files["a.md"],
        "guide.md": files["b.md"],
        "manual.md": files["i.md"].replace(" following", ""),
        "news.md": files["j.md"].replace(" following", "").replace(":", "."),
    }
    assert _conflicts(_read(tmp_path / "series", series)) == []


def test_a_subject_compares_its_first_100_claims_held(tmp_path: Path) -> None:
    """One file holds 101 claims on Project Falcon, and 100 on Project Heron; another contradicts
    the 101st of Falcon's (past the first 100: not compared) and the 100th of Heron's."""

    def word(n: int) -> str:
        return "zq" + chr(97 + n // 26) + chr(97 + n % 26)

    held = [f"Project Falcon {word(n)} ledger closes on 2026-01-05." for n in range(100)]
    held += ["Project Falcon final launch review happens on 2026-03-03."]
    held += [f"Project Heron {word(n)} ledger closes on 2026-01-05." for n in range(99)]
    held += ["Project Heron final launch review happens on 2026-03-03."]
    later = [
        "Project Falcon final launch review happens on 2026-04-04.",
        "Project Heron final launch review happens on 2026-04-04.",
    ]
    store = _read(
        tmp_path / "many",
        {"a.md": "# Held\n\n" + "\n\n".join(held) + "\n", "b.md": "# Later\n\n" + "\n\n".join(later) + "\n"},
    )
    assert [c[1] for c in _conflicts(store)] == ["Project Heron final launch review happens"]
