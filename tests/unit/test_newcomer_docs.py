"""What a newcomer reads first holds: the glossary names the words the README and docs use, the
README links it and the contributing checklists, and no document or comment sends a reader to a
document outside the repository."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.changed import ROOT

GLOSSARY = ROOT / "docs" / "glossary.md"
TERMS = (
    "ANTHILL",
    "colony",
    "FORAGER",
    "hub",
    "agent-hub",
    "project",
    "knowledge base",
    "`project_ref`",
    "standing",
    "door",
    "verbs",
    "session brain",
    "principal",
    "mission",
    "change feed",
    "dead letter",
)
OUTSIDE = re.compile(r"\bW[0-9]-[0-9]+|§|kept outside this repository|\bE-19\b|\bF(?:53|65)\b")
"""How the documents once cited the platform's design documents, which no reader of the repository
can open: a section sign is allowed only after an RFC's number (a public standard)."""


def _entries() -> set[str]:
    """Every term the glossary defines: the bold words that open an entry, split at commas."""
    found: set[str] = set()
    for line in GLOSSARY.read_text().splitlines():
        opened = re.match(r"- \*\*(.+?)\*\*", line)
        if opened:
            found.update(part.strip() for part in opened.group(1).split(","))
    return found


@pytest.mark.parametrize("term", TERMS)
def test_the_glossary_defines_each_word_a_newcomer_meets(term: str) -> None:
    assert term in _entries(), f"docs/glossary.md has no entry for {term}"


def test_the_readme_links_the_glossary_and_the_contributing_checklists() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "(docs/glossary.md)" in readme and "(docs/contributing.md)" in readme
    checklists = re.findall(r"^## (.+)$", (ROOT / "docs" / "contributing.md").read_text(), re.MULTILINE)
    assert checklists == ["A route", "A setting", "A table", "A console screen", "A metric"]


def test_no_document_or_comment_cites_a_document_outside_the_repository() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "*.md", "*.py", "*.js", "*.yaml", "*.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    cited = []
    for name in tracked:
        path = ROOT / name
        if "vendor/" in name or name == "tests/unit/test_newcomer_docs.py" or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            found = [m.group() for m in OUTSIDE.finditer(re.sub(r"RFC \d+ §", "RFC", line))]
            if found:
                cited.append(f"{name}:{number}: {line.strip()}")
    assert cited == [], "say what the document says instead:\n" + "\n".join(cited)
