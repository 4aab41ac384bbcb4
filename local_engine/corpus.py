"""The demo corpus's sources, per project (knowledge base).

Shared ground for the read routes (``GET /api/projects/{ref}/sources``, ``GET /api/sources/{id}``)
and the change feed (a source added or changed through the control port makes the engine
publish a revision). Other records of the corpus (statements, entities, conflicts, …) are
added beside these.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any


def content_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def source_id_for(project_ref: str, name: str) -> str:
    return "src_" + hashlib.sha256(f"{project_ref}/{name}".encode()).hexdigest()[:16]


@dataclass
class Source:
    """One registered source, as FORAGER lists it."""

    source_id: str
    project_ref: str
    name: str
    text: str
    type: str = "markdown"
    processing_status: str = "completed"
    document_date: str | None = None
    duplicate_of: str | None = None
    superseded_by: str | None = None
    created_at: str = "2026-09-01T09:00:00Z"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        return content_hash(self.text)

    @property
    def logical_content_hash(self) -> str:
        """The hash of what the source says, whitespace folded: a re-save is not a change."""
        return content_hash(" ".join(self.text.split()))

    def to_json(self) -> dict[str, Any]:
        return {
            "source_id": self.source_id,
            "project_ref": self.project_ref,
            "name": self.name,
            "type": self.type,
            "size_bytes": len(self.text.encode("utf-8")),
            "content_hash": self.content_hash,
            "logical_content_hash": self.logical_content_hash,
            "processing_status": self.processing_status,
            "document_date": self.document_date,
            "duplicate_of": self.duplicate_of,
            "superseded_by": self.superseded_by,
            "created_at": self.created_at,
        }


def make_source(project_ref: str, name: str, text: str, **fields: Any) -> Source:
    return Source(source_id=source_id_for(project_ref, name), project_ref=project_ref, name=name, text=text, **fields)


DEMO_SOURCES: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "falcon": [
        (
            "launch-plan.md",
            "# Launch plan\nThe launch date for Project Falcon is March 3, 2026. Bob Smith owns the launch checklist.",
            {"document_date": "2025-11-02"},
        ),
        (
            "steering-memo.md",
            "# Steering memo\nProject Falcon launch date: April 10, 2026, after the supplier "
            "delay. Signed by Robert Smith.",
            {"document_date": "2026-01-15"},
        ),
        (
            "onboarding.md",
            "# Onboarding\nNew team members meet R. Smith (rsmith@acmerobotics.example) in week one.",
            {"document_date": "2025-09-20"},
        ),
        (
            "supplier-notes.txt",
            "Supplier Acme Robotics confirmed parts for Project Falcon in February.",
            {"type": "text", "document_date": "2026-01-05"},
        ),
    ],
    "harbour": [
        (
            "handbook.md",
            "# Harbour handbook\nThe harbour opens at 06:00. Mooring requests go to the harbour master.",
            {"document_date": "2025-06-01"},
        ),
        ("safety.md", "# Safety\nLife jackets are required on the pontoons.", {"document_date": "2025-06-01"}),
    ],
}


def demo_sources() -> dict[str, dict[str, Source]]:
    """Per project ref, its sources by id."""
    return {
        ref: {s.source_id: s for s in (make_source(ref, name, text, **extra) for name, text, extra in items)}
        for ref, items in DEMO_SOURCES.items()
    }


# ---------------------------------------------------------------------------------------
# The knowledge records the read routes serve: statements, evidence, entities, possible
# duplicates and disagreements. Declared as tables; every id is derived from its project
# and key, so the corpus is the same on every start. Whatever is read from a source's text
# (chunks, excerpts, mentions) is computed from the live sources, so a source changed
# through the control port shows in the reads at once (an excerpt no longer found is
# ``missing_excerpt``).

CHUNK_PAGE = 200
"""FORAGER's source page shows the first 200 chunks ..."""
CHUNK_TEXT_MAX = 400
"""... each cut to its first 400 characters."""


def record_id(prefix: str, project_ref: str, key: str) -> str:
    return f"{prefix}_" + hashlib.sha256(f"{prefix}/{project_ref}/{key}".encode()).hexdigest()[:16]


def wire_word(enum_name: str) -> str:
    """``DirectFact`` -> ``direct_fact``: the filter word for an enum name."""
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(enum_name))


@dataclass(frozen=True)
class ItemSpec:
    key: str
    title: str
    statement: str
    subject: str
    entities: tuple[str, ...]
    evidence: tuple[tuple[str, str], ...]  # (source name, excerpt)
    type: str = "fact"
    support: str = "DirectFact"
    status: str = "Active"
    confidence: float = 0.9
    effective_date: str | None = None
    review: tuple[str, str | None, str | None, str | None] = ("unreviewed", None, None, None)
    confidentiality: str = "Tenant"
    extraction_method: str = "deterministic"
    created_at: str = "2026-09-01T09:05:00Z"


@dataclass(frozen=True)
class EntitySpec:
    key: str
    name: str
    type: str
    terms: tuple[str, ...]  # how it is named in the sources
    confidence: float
    aliases: tuple[tuple[str, str, float], ...] = ()  # (alias, kind, confidence)
    attributes: dict[str, Any] = field(default_factory=dict)
    merged_into: str | None = None  # key of the entity it was merged into
    merge_reason: str | None = None
    created_at: str = "2026-09-01T09:05:00Z"


@dataclass(frozen=True)
class RelationSpec:
    from_key: str
    type: str
    to_label: str
    statement: str
    support: str = "DirectFact"
    confidence: float = 0.8


@dataclass(frozen=True)
class DuplicateSpec:
    key: str
    entity_a: str
    entity_b: str
    confidence: float
    reason: str
    status: str = "pending"
    decided_by: str | None = None
    decided_at: str | None = None
    notes: str | None = None
    created_at: str = "2026-09-01T09:10:00Z"


@dataclass(frozen=True)
class ConflictSpec:
    key: str
    title: str
    type: str
    sides: tuple[str, ...]  # item keys
    suggested_resolution: str
    suggested_winner: str | None
    status: str = "open"
    decision: dict[str, Any] | None = None
    detected_at: str = "2026-09-01T09:12:00Z"


@dataclass(frozen=True)
class CorpusSpec:
    items: tuple[ItemSpec, ...] = ()
    entities: tuple[EntitySpec, ...] = ()
    relations: tuple[RelationSpec, ...] = ()
    duplicates: tuple[DuplicateSpec, ...] = ()
    conflicts: tuple[ConflictSpec, ...] = ()


REVIEWED = ("reviewed", "Checked against the signed memo", "admin", "2026-09-02T10:00:00Z")

DEMO_RECORDS: dict[str, CorpusSpec] = {
    "falcon": CorpusSpec(
        items=(
            ItemSpec(
                "launch_march",
                "Project Falcon launch date: March 3, 2026",
                "The launch date for Project Falcon is March 3, 2026.",
                "Project Falcon",
                ("project_falcon",),
                (
                    ("launch-plan.md", "The launch date for Project Falcon is March 3, 2026."),
                    ("launch-plan.md", "Launch rehearsal is booked for February 24, 2026."),  # no longer in the text
                ),
                status="Disputed",
                effective_date="2026-03-03",
            ),
            ItemSpec(
                "launch_april",
                "Project Falcon launch date: April 10, 2026",
                "Project Falcon launch date: April 10, 2026, after the supplier delay.",
                "Project Falcon",
                ("project_falcon", "robert_smith"),
                (("steering-memo.md", "Project Falcon launch date: April 10, 2026, after the supplier delay."),),
                effective_date="2026-04-10",
                review=REVIEWED,
            ),
            ItemSpec(
                "launch_historical",
                "Project Falcon launch date first set in November 2025",
                "The launch date for Project Falcon was first set in November 2025.",
                "Project Falcon",
                ("project_falcon",),
                (("launch-plan.md", "# Launch plan"),),
                status="Superseded",
                confidence=0.6,
                effective_date="2025-11-02",
            ),
            ItemSpec(
                "checklist_owner",
                "Launch checklist owner",
                "Bob Smith owns the launch checklist.",
                "Robert Smith",
                ("robert_smith",),
                (("launch-plan.md", "Bob Smith owns the launch checklist."),),
                type="decision",
                confidence=0.8,
            ),
            ItemSpec(
                "memo_signed",
                "Steering memo signed",
                "The steering memo moving the launch was signed by Robert Smith.",
                "Robert Smith",
                ("robert_smith", "project_falcon"),
                (("steering-memo.md", "Signed by Robert Smith."),),
                type="decision",
                support="Inferred",
                confidence=0.75,
            ),
            ItemSpec(
                "parts_confirmed",
                "Acme Robotics confirmed parts",
                "Acme Robotics confirmed parts for Project Falcon in February.",
                "Acme Robotics",
                ("acme_robotics", "project_falcon"),
                (("supplier-notes.txt", "Supplier Acme Robotics confirmed parts for Project Falcon in February."),),
            ),
            ItemSpec(
                "parts_supplier",
                "Acme Robotics supplies Project Falcon",
                "Acme Robotics supplies parts for Project Falcon.",
                "Acme Robotics",
                ("acme_robotics", "project_falcon"),
                (("supplier-notes.txt", "Supplier Acme Robotics"),),
                support="Inferred",
                confidence=0.7,
            ),
            ItemSpec(
                "onboarding_contact",
                "Onboarding contact",
                "New team members meet R. Smith in week one.",
                "R. Smith",
                ("r_smith",),
                (("onboarding.md", "New team members meet R. Smith (rsmith@acmerobotics.example) in week one."),),
                confidence=0.85,
            ),
        ),
        entities=(
            EntitySpec("project_falcon", "Project Falcon", "project", ("Project Falcon",), 0.95),
            EntitySpec(
                "robert_smith",
                "Robert Smith",
                "person",
                ("Robert Smith", "Bob Smith"),
                0.85,
                aliases=(("Bob Smith", "name", 0.9),),
                attributes={"roles": ["launch checklist owner"], "organizations": ["Project Falcon"], "age": 41},
            ),
            EntitySpec(
                "bob_smith",
                "Bob Smith",
                "person",
                (),
                0.9,
                merged_into="robert_smith",
                merge_reason="Nickname of the same person, named together in the launch plan and the memo",
            ),
            EntitySpec(
                "r_smith",
                "R. Smith",
                "person",
                ("R. Smith",),
                0.6,
                aliases=(("rsmith@acmerobotics.example", "email", 0.8),),
                attributes={"emails": ["rsmith@acmerobotics.example"]},
            ),
            EntitySpec(
                "acme_robotics",
                "Acme Robotics",
                "organization",
                ("Acme Robotics",),
                0.9,
                attributes={"roles": ["supplier"]},
            ),
        ),
        relations=(
            RelationSpec("robert_smith", "owns", "launch checklist", "Bob Smith owns the launch checklist."),
            RelationSpec(
                "acme_robotics",
                "supplies",
                "Project Falcon",
                "Acme Robotics confirmed parts for Project Falcon in February.",
            ),
        ),
        duplicates=(
            DuplicateSpec("robert_r", "robert_smith", "r_smith", 0.7, 'Initial "R." matches robert smith'),
            DuplicateSpec(
                "robert_bob",
                "robert_smith",
                "bob_smith",
                0.9,
                '"Bob" is a short form of robert',
                status="accepted",
                decided_by="admin",
                decided_at="2026-09-01T11:00:00Z",
                notes="Same person",
            ),
        ),
        conflicts=(
            ConflictSpec(
                "launch_date",
                "Project Falcon launch date",
                "contradiction",
                ("launch_march", "launch_april"),
                "Keep the later, signed statement (April 10, 2026) and archive the other.",
                "launch_april",
            ),
            ConflictSpec(
                "supplier_twice",
                "Acme Robotics, said twice",
                "duplicate",
                ("parts_confirmed", "parts_supplier"),
                "Archive the duplicate.",
                None,
                status="dismissed",
                decision={
                    "action": "dismiss",
                    "winner_id": None,
                    "notes": "Two different facts",
                    "decided_by": "admin",
                    "decided_at": "2026-09-02T09:30:00Z",
                },
            ),
        ),
    ),
    "harbour": CorpusSpec(
        items=(
            ItemSpec(
                "opening_hours",
                "Harbour opening hours",
                "The harbour opens at 06:00.",
                "Harbour",
                ("harbour",),
                (("handbook.md", "The harbour opens at 06:00."),),
            ),
            ItemSpec(
                "mooring",
                "Mooring requests",
                "Mooring requests go to the harbour master.",
                "Harbour master",
                ("harbour_master",),
                (("handbook.md", "Mooring requests go to the harbour master."),),
                type="decision",
            ),
            ItemSpec(
                "life_jackets",
                "Life jackets",
                "Life jackets are required on the pontoons.",
                "Harbour",
                ("harbour",),
                (("safety.md", "Life jackets are required on the pontoons."),),
            ),
        ),
        entities=(
            EntitySpec("harbour", "Harbour", "place", ("harbour",), 0.9),
            EntitySpec("harbour_master", "Harbour master", "person", ("harbour master",), 0.7),
        ),
        # a disagreement and a possible duplicate of this base, for the cross-scope tests of curation
        duplicates=(DuplicateSpec("harbour_pair", "harbour", "harbour_master", 0.4, '"harbour" in both names'),),
        conflicts=(
            ConflictSpec(
                "pontoon_rules",
                "Pontoon rules, said twice",
                "duplicate",
                ("life_jackets", "opening_hours"),
                "Archive the duplicate.",
                None,
            ),
        ),
    ),
}


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    index: int
    location: str
    text: str
    char_start: int
    char_end: int

    def to_json(self, cut: int | None = None) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "index": self.index,
            "location": self.location,
            "text": self.text if cut is None else self.text[:cut],
            "char_start": self.char_start,
            "char_end": self.char_end,
            "token_estimate": max(1, len(self.text) // 4),
            "content_hash": content_hash(self.text),
        }


def chunks_of(source: Source) -> list[Chunk]:
    """A source's chunks: one per non-empty line, with its character span."""
    chunks: list[Chunk] = []
    offset = 0
    for number, line in enumerate(source.text.split("\n"), start=1):
        if line.strip():
            index = len(chunks)
            chunk_id = "ch_" + hashlib.sha256(f"{source.source_id}/{index}".encode()).hexdigest()[:16]
            chunks.append(Chunk(chunk_id, index, f"line {number}", line, offset, offset + len(line)))
        offset += len(line) + 1
    return chunks


def chunk_at(source: Source, excerpt: str) -> Chunk | None:
    return next((c for c in chunks_of(source) if excerpt in c.text), None)
