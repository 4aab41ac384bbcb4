"""The knowledge gate: ``knowledge_enabled``, projected env-over-settings."""

from __future__ import annotations

from knowledge_service.environment import GATE_ENV_VAR, Environment
from knowledge_service.errors import KnowledgeDisabled
from knowledge_service.models import KnowledgeSettings


def knowledge_enabled(settings: KnowledgeSettings, env: Environment) -> bool:
    pinned = env.pinned_gate_value
    return settings.knowledge_enabled if pinned is None else pinned


def why_disabled(env: Environment) -> str:
    if env.gate_pinned:
        return f"Knowledge is off: {GATE_ENV_VAR} pins knowledge_enabled off in this deployment."
    return "Knowledge is off: knowledge_enabled is false (POST /settings turns it on)."


def require_enabled(settings: KnowledgeSettings, env: Environment) -> None:
    if not knowledge_enabled(settings, env):
        raise KnowledgeDisabled(why_disabled(env))
