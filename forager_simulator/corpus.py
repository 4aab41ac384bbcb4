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
