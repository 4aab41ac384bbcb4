"""What FORAGER answers, as the edge reads it (docs/upstream-contract.md): one module per
area of the contract, each imported the first time one of its names is asked for.

``from knowledge_service.upstream.models import Job`` or ``models.Job`` reads as if every
answer were defined here; only the area that defines it is imported (PEP 562). A function
defines at import the areas its own models name, and any other when a route first reads
it, rather than all of FORAGER's contract on every cold start (about 0.2 ms a model:
``docs/benchmarks.md``).
The map below and the imports for type checkers name the same things; a unit test holds
them, and every area's own names, to each other.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from knowledge_service.upstream.models.conflicts import (
        ConflictRecord as ConflictRecord,
        ConflictRecords as ConflictRecords,
        ConflictSource as ConflictSource,
        Decision as Decision,
    )
    from knowledge_service.upstream.models.curation import (
        DuplicateDecision as DuplicateDecision,
        Unmerged as Unmerged,
    )
    from knowledge_service.upstream.models.engine import (
        AnthillExport as AnthillExport,
        Capabilities as Capabilities,
        EngineStatus as EngineStatus,
        ExportCapabilities as ExportCapabilities,
        ForagerProject as ForagerProject,
        ProjectList as ProjectList,
    )
    from knowledge_service.upstream.models.entities import (
        Alias as Alias,
        Duplicate as Duplicate,
        DuplicateList as DuplicateList,
        DuplicateSide as DuplicateSide,
        EntityDetail as EntityDetail,
        Mention as Mention,
        MergeRecord as MergeRecord,
        NamedEntities as NamedEntities,
        NamedEntity as NamedEntity,
        PeoplePage as PeoplePage,
        PersonRow as PersonRow,
        Relationship as Relationship,
    )
    from knowledge_service.upstream.models.exports import (
        ExportList as ExportList,
        ExportRow as ExportRow,
    )
    from knowledge_service.upstream.models.feed import (
        EXPORT_COMPLETED as EXPORT_COMPLETED,
        REVISION_PUBLISHED as REVISION_PUBLISHED,
        FeedCursorRefused as FeedCursorRefused,
        FeedEnvelope as FeedEnvelope,
        FeedPage as FeedPage,
        ForagerSource as ForagerSource,
        HeadRevision as HeadRevision,
        ReceiptAnswer as ReceiptAnswer,
        SourceList as SourceList,
    )
    from knowledge_service.upstream.models.ingestion import (
        STAGES as STAGES,
        Admission as Admission,
        Job as Job,
        JobError as JobError,
        JobList as JobList,
        JobStage as JobStage,
        JobStatus as JobStatus,
        MeasuredEntry as MeasuredEntry,
        RejectedEntry as RejectedEntry,
        StageName as StageName,
        StageStatus as StageStatus,
    )
    from knowledge_service.upstream.models.retrieval import (
        Retrieval as Retrieval,
        RetrievedItem as RetrievedItem,
    )
    from knowledge_service.upstream.models.search import (
        EntityRef as EntityRef,
        SearchHit as SearchHit,
        SearchResult as SearchResult,
    )
    from knowledge_service.upstream.models.sources import (
        Chunk as Chunk,
        RegisteredSources as RegisteredSources,
        SourceDetail as SourceDetail,
        SourceError as SourceError,
        SourceRow as SourceRow,
    )
    from knowledge_service.upstream.models.statements import (
        EvidenceLink as EvidenceLink,
        EvidenceList as EvidenceList,
        FacetCounts as FacetCounts,
        KnowledgeItem as KnowledgeItem,
        StatementRow as StatementRow,
        StatementsPage as StatementsPage,
    )

AREAS: dict[str, tuple[str, ...]] = {
    "engine": (
        "EngineStatus",
        "AnthillExport",
        "ExportCapabilities",
        "Capabilities",
        "ForagerProject",
        "ProjectList",
    ),
    "feed": (
        "REVISION_PUBLISHED",
        "EXPORT_COMPLETED",
        "FeedEnvelope",
        "FeedPage",
        "HeadRevision",
        "ForagerSource",
        "SourceList",
        "ReceiptAnswer",
        "FeedCursorRefused",
    ),
    "search": (
        "EntityRef",
        "SearchHit",
        "SearchResult",
    ),
    "statements": (
        "EvidenceLink",
        "StatementRow",
        "KnowledgeItem",
        "EvidenceList",
        "FacetCounts",
        "StatementsPage",
    ),
    "entities": (
        "PersonRow",
        "NamedEntity",
        "NamedEntities",
        "PeoplePage",
        "DuplicateSide",
        "Duplicate",
        "DuplicateList",
        "Alias",
        "MergeRecord",
        "Relationship",
        "Mention",
        "EntityDetail",
    ),
    "sources": (
        "SourceRow",
        "RegisteredSources",
        "SourceError",
        "Chunk",
        "SourceDetail",
    ),
    "conflicts": (
        "ConflictSource",
        "Decision",
        "ConflictRecord",
        "ConflictRecords",
    ),
    "retrieval": (
        "RetrievedItem",
        "Retrieval",
    ),
    "ingestion": (
        "JobStatus",
        "StageStatus",
        "StageName",
        "STAGES",
        "JobStage",
        "JobError",
        "Job",
        "JobList",
        "MeasuredEntry",
        "RejectedEntry",
        "Admission",
    ),
    "curation": (
        "DuplicateDecision",
        "Unmerged",
    ),
    "exports": (
        "ExportRow",
        "ExportList",
    ),
}
"""Each area module under this package, and the names it defines."""

_AREA_OF = {name: area for area, names in AREAS.items() for name in names}
if not TYPE_CHECKING:  # a type checker reads the imports above, and no catch-all

    def __getattr__(name: str) -> Any:
        area = _AREA_OF.get(name)
        if area is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{area}"), name)
        globals()[name] = value  # the next lookup is an ordinary one
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_AREA_OF})
