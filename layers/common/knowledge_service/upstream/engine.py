"""The engine and its knowledge bases (docs/upstream-contract.md, "Endpoints"): status,
capabilities, the projects FORAGER holds, and making one."""

from __future__ import annotations

from knowledge_service.upstream import models
from knowledge_service.upstream.transport import Transport


class EngineCalls(Transport):
    def status(self) -> models.EngineStatus:
        return self._get("/api/status", models.EngineStatus)

    def capabilities(self) -> models.Capabilities:
        return self._get("/api/capabilities", models.Capabilities)

    def projects(self) -> list[models.ForagerProject]:
        return self._get("/api/projects", models.ProjectList).projects

    def create_project(
        self, name: str, description: str, *, idempotency_key: str | None = None
    ) -> models.ForagerProject:
        body = {"name": name}
        if description:
            body["description"] = description
        return self._post("/api/projects", body, models.ForagerProject, idempotency_key=idempotency_key)
