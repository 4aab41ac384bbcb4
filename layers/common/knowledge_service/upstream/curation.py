"""Curation (docs/upstream-contract.md, "Curation"): a person's decisions on conflicts,
duplicates, merged entities and statements, sent to FORAGER."""

from __future__ import annotations

from typing import Any

from knowledge_service.upstream import models
from knowledge_service.upstream.transport import Transport, present


class CurationCalls(Transport):
    def resolve_conflict(self, conflict_id: str, body: dict[str, Any]) -> models.ConflictRecord:
        return self._post(f"/api/conflicts/{conflict_id}/resolve", present(body), models.ConflictRecord)

    def reopen_conflict(self, conflict_id: str, actor: str) -> models.ConflictRecord:
        return self._post(f"/api/conflicts/{conflict_id}/reopen", {"actor": actor}, models.ConflictRecord)

    def decide_duplicate(self, candidate_id: str, body: dict[str, Any]) -> models.DuplicateDecision:
        return self._post(f"/api/duplicates/{candidate_id}/decide", present(body), models.DuplicateDecision)

    def unmerge_entity(self, entity_id: str, body: dict[str, Any]) -> models.Unmerged:
        return self._post(f"/api/entities/{entity_id}/unmerge", present(body), models.Unmerged)

    def review_item(self, knowledge_id: str, body: dict[str, Any]) -> models.KnowledgeItem:
        return self._post(f"/api/knowledge/{knowledge_id}/review", present(body), models.KnowledgeItem)
