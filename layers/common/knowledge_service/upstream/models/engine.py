"""What FORAGER says about itself and its projects: ``GET /api/status``, ``GET /api/capabilities``,
``GET`` and ``POST /api/projects`` (docs/upstream-contract.md, "Endpoints").
"""

from __future__ import annotations

from pydantic import Field

from knowledge_service.upstream.models.base import UpstreamModel


class EngineStatus(UpstreamModel):
    version: str
    schema_version: int
    search_backend: str
    model_provider: str


class AnthillExport(UpstreamModel):
    package_version: int | None = None


class ExportCapabilities(UpstreamModel):
    anthill: AnthillExport | None = None


class Capabilities(UpstreamModel):
    instance_id: str | None = None
    generation: str | None = None
    change_feed: bool = False
    exports: ExportCapabilities | None = None

    @property
    def package_version(self) -> int | None:
        if self.exports is None or self.exports.anthill is None:
            return None
        return self.exports.anthill.package_version


class ForagerProject(UpstreamModel):
    project_ref: str
    name: str
    description: str = ""
    source_count: int = 0
    knowledge_count: int = 0
    open_conflict_count: int = 0
    state: str = "ready"


class ProjectList(UpstreamModel):
    projects: list[ForagerProject] = Field(default_factory=list)
