"""What curation's decisions answer besides a conflict or an item (docs/upstream-contract.md,
"Curation").
"""

from __future__ import annotations

from knowledge_service.upstream.models.base import UpstreamModel
from knowledge_service.upstream.models.entities import Duplicate, PersonRow


class DuplicateDecision(UpstreamModel):
    duplicate: Duplicate


class Unmerged(UpstreamModel):
    restored: PersonRow
    winner: PersonRow
