"""The base of every FORAGER answer model."""

from __future__ import annotations

from pydantic import ConfigDict

from knowledge_service.base_model import Model


class UpstreamModel(Model):
    """Upstream models ignore fields they do not know: FORAGER may add a field without a
    colony release. They still refuse an answer that lacks what the edge relies on. Like
    every model here, one is built the first time it validates (``base_model.Model``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
