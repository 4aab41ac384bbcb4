"""People and organizations a reader can trust (issue 58): an entity needs evidence of what it is.

Each test writes its documents, reads them through the engine's stages on a store of its own and
asks the entities the base holds: a capitalised phrase alone is no one; the shapes documents use
for people (an address, an author field, a credit) and organizations (a legal form) are.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_engine.ingestion import pipeline
from local_engine.knowledge import people
from local_engine.store.database import Store

PROSE = (
    "Pages render in every browser, Internet Explorer included, and a malformed form gives a 400 Bad "
    "Request page.\n\nThe team met in San Marino to discuss the query, which uses a GROUP BY clause on the "
    "orders table.\n\nExplore the ORM in the next chapter before you write a query of your own.\n"
)


@pytest.fixture
def store() -> Iterator[Store]:
    held = Store(None, threading.RLock())
    yield held
    held.close()


def read(store: Store, folder: Path, files: dict[str, str]) -> dict[str, str]:
    """The folder's files read by every stage; the base's entities, name -> type (merged ones aside)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    work = pipeline.Work(job_id="job_people", ref="base", kind="paths", inputs=[str(folder)], force=True)
    for stage in pipeline.STAGE_WORK.values():
        stage(store, work)
    return {
        str(r["name"]): str(r["type"]) for r in store.rows("SELECT name, type FROM entities WHERE merged_into IS NULL")
    }


def test_capitalised_phrases_in_prose_are_no_one(store: Store, tmp_path: Path) -> None:
    entities = read(store, tmp_path / "docs", {"guide.md": "# Guide\n\n" + PROSE})
    for phrase in ("Internet Explorer", "Bad Request", "San Marino", "GROUP BY", "Explore the ORM", "ORM"):
        assert phrase not in entities, entities
    assert entities == {}


def test_a_name_with_an_address_an_author_field_and_a_credit_are_people(store: Store, tmp_path: Path) -> None:
    entities = read(
        store,
        tmp_path / "project",
        {
            "README.md": "# Heron\n\nBuild questions go to Dana Whitfield <dana@heron.example> on weekdays.\n",
            "PKG-INFO": "Metadata-Version: 2.1\nName: heron\nAuthor: Tomasz Brodecki\nLicense: MIT\n",
            "CHANGES.md": "# Changes\n\n- The parser accepts tabs again, thanks to Priya Raman for the report.\n",
            "design.md": "---\ntitle: Design\nauthor: Keiko Yamamoto\n---\n# Design\n\nThe reader parses lazily.\n",
        },
    )
    named = ("Dana Whitfield", "Tomasz Brodecki", "Priya Raman", "Keiko Yamamoto")
    assert {name: entities.get(name) for name in named} == dict.fromkeys(named, "person")


def test_an_organization_needs_its_form_and_keeps_its_whole_name(store: Store, tmp_path: Path) -> None:
    entities = read(
        store,
        tmp_path / "notes",
        {
            "funding.md": "# Funding\n\nThe Python Software Foundation's grant pays for the sprint. "
            "The GROUP BY clause groups the rows, and Acme Analytics hosts the mirror.\n"
        },
    )
    assert entities == {"Python Software Foundation": "organization"}  # "Acme Analytics": no form, no role


def test_a_name_said_again_in_the_document_is_a_mention_of_the_person(store: Store, tmp_path: Path) -> None:
    read(
        store,
        tmp_path / "team",
        {"team.md": "# Team\n\nThe release is signed by Ines Carvalho.\n\nIf in doubt, Ines Carvalho sets the date.\n"},
    )
    mentions = store.value(
        "SELECT COUNT(*) FROM mentions m JOIN entities e USING (entity_id) WHERE e.name = ?", "Ines Carvalho"
    )
    assert mentions == 2


def test_a_people_file_lists_people_and_not_what_they_wrote(store: Store, tmp_path: Path) -> None:
    entities = read(
        store,
        tmp_path / "pkg",
        {
            "AUTHORS": "Heron is written by many hands.\n\n"
            "* Sam Okafor -- Markdown Reader rewrite\n"
            "* Lea Hoffmann, Fish Software, Inc. -- Test Suite\n"
            "* Omar Haddad & Yuki Tanaka -- Windows Installer\n"
        },
    )
    assert {n: t for n, t in entities.items() if t == "person"} == dict.fromkeys(
        ["Sam Okafor", "Lea Hoffmann", "Omar Haddad", "Yuki Tanaka"], "person"
    )
    assert entities.get("Fish Software") == "organization"  # the employer after the comma, by its legal form
    assert "Markdown Reader" not in entities and "Windows Installer" not in entities


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Internet Explorer caches the page.", ""),
        ("The report: Internet Explorer fails on it.", ""),
        ("Marta Kowalski, the release manager, chairs the meeting.", "person"),
        ("The harbour master is Ingrid Olsen.", "person"),
        ("Ada Lovelace approved the schedule.", "person"),
        ("Bob Carter opens the depot on Mondays.", "person"),  # a given name of the short-form table
        ("Updated build system (patch #186 by Adam Turner).", "person"),
        ("Dutch mappings by Martijn Pieters.", "person"),
        ("Transact SQL: Add Pre-sorted Group keyword.", ""),
    ],
)
def test_each_shape_types_the_name_it_stands_beside(sentence: str, expected: str) -> None:
    found = people.find(sentence, [("k", None, 0, len(sentence))])
    kinds = {f.type for f in found if f.type}
    assert kinds == ({expected} if expected else set()), [(f.name, f.type) for f in found]
