"""Reads (docs/upstream-contract.md, "Reads"): search, retrieval, statements and their evidence,
entities and people, duplicates, sources and conflicts."""

from __future__ import annotations

from knowledge_service.upstream import models
from knowledge_service.upstream.transport import Transport, flag, present


class ReadCalls(Transport):
    def search(self, project_ref: str, q: str, *, limit: int, include_historical: bool) -> models.SearchResult:
        params = {"q": q, "limit": limit, "include_historical": flag(include_historical)}
        return self._get(f"/api/projects/{project_ref}/search", models.SearchResult, params=params)

    def retrieve(self, project_ref: str, query: str, *, top_k: int, include_historical: bool) -> models.Retrieval:
        body = {"query": query, "top_k": top_k, "include_historical": include_historical}
        return self._post(f"/api/projects/{project_ref}/retrieve", body, models.Retrieval)

    def knowledge_item(self, knowledge_id: str) -> models.KnowledgeItem:
        """Not project-scoped upstream: the caller holds ``project_ref`` to its scope."""
        return self._get(f"/api/knowledge/{knowledge_id}", models.KnowledgeItem)

    def evidence(self, knowledge_id: str) -> models.EvidenceList:
        return self._get(f"/api/knowledge/{knowledge_id}/evidence", models.EvidenceList)

    def entities_named(self, project_ref: str, name: str) -> models.NamedEntities:
        return self._get(f"/api/projects/{project_ref}/entities", models.NamedEntities, params={"name": name})

    def people(
        self, project_ref: str, *, q: str | None, types: list[str], sort: str, page: int, page_size: int
    ) -> models.PeoplePage:
        params = present({"q": q, "type": ",".join(types), "sort": sort, "page": page, "page_size": page_size})
        return self._get(f"/api/projects/{project_ref}/people", models.PeoplePage, params=params)

    def entity(self, entity_id: str) -> models.EntityDetail:
        """Not project-scoped upstream (GET /api/entities/:id): carries ``project_ref``."""
        return self._get(f"/api/entities/{entity_id}", models.EntityDetail)

    def statements(
        self, project_ref: str, filters: dict[str, str], *, page: int, page_size: int
    ) -> models.StatementsPage:
        params = present({**filters, "page": page, "page_size": page_size})
        return self._get(f"/api/projects/{project_ref}/statements", models.StatementsPage, params=params)

    def duplicates(self, project_ref: str, status: str) -> models.DuplicateList:
        return self._get(f"/api/projects/{project_ref}/duplicates", models.DuplicateList, params={"status": status})

    def registered_sources(self, project_ref: str) -> models.RegisteredSources:
        """The sources as GET /knowledge/sources lists them (every field, not the feed's few)."""
        return self._get(f"/api/projects/{project_ref}/sources", models.RegisteredSources)

    def source(self, source_id: str) -> models.SourceDetail:
        """Not project-scoped upstream (GET /api/sources/:id): ``source.project_ref`` says whose."""
        return self._get(f"/api/sources/{source_id}", models.SourceDetail)

    def conflicts(self, project_ref: str, status: str) -> models.ConflictRecords:
        return self._get(f"/api/projects/{project_ref}/conflicts", models.ConflictRecords, params={"status": status})
