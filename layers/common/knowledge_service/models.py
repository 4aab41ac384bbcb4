"""Records the domain and the stores share: settings, bindings, ANTHILL projects."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated

from pydantic import BeforeValidator, ConfigDict, Field

from knowledge_service.base_model import Model


class AutoStudy(StrEnum):
    """knowledge_auto_study: what the six-hourly poll does."""

    OFF = "off"
    SUGGEST = "suggest"
    ON = "on"


class RevisionStudy(StrEnum):
    """knowledge_revision_study: what a revision on the change feed causes."""

    INHERIT = "inherit"
    OFF = "off"
    SUGGEST = "suggest"
    ON = "on"


class KnowledgeSettings(Model):
    """The console-writable knowledge settings, as stored.

    ``knowledge_forager_endpoint`` is None until someone writes one; the deployment's
    ``ForagerEndpoint`` parameter applies until then.
    """

    model_config = ConfigDict(frozen=True)

    knowledge_enabled: bool = False
    knowledge_auto_study: AutoStudy = AutoStudy.SUGGEST
    knowledge_revision_study: RevisionStudy = RevisionStudy.INHERIT
    knowledge_forager_endpoint: str | None = None
    knowledge_forager_input_roots: tuple[str, ...] = ()
    updated_at: datetime | None = None
    updated_by: str | None = None

    @property
    def revision_study_resolved(self) -> AutoStudy:
        """What a revision actually causes: inherit resolves through knowledge_auto_study."""
        if self.knowledge_revision_study is RevisionStudy.INHERIT:
            return self.knowledge_auto_study
        return AutoStudy(self.knowledge_revision_study.value)


DEFAULT_PROJECT = ""
"""The project key of the console default binding (``?project=`` omitted)."""


class Binding(Model):
    """An ANTHILL project (or the console default, ``""``) bound to a FORAGER project."""

    model_config = ConfigDict(frozen=True)

    project: str
    knowledge_base: str
    bound_at: datetime | None = None
    bound_by: str | None = None


class ProjectRecord(Model):
    """An ANTHILL project: the ids ``?project=`` names, each in an organization."""

    model_config = ConfigDict(frozen=True)

    project_id: str
    organization: str
    name: str = ""
    created_at: datetime | None = None


def _json_integer(value: object) -> object:
    """A JSON integer: ``5`` or ``5.0`` (JSON Schema's ``integer`` is any number with no
    fraction), never ``true``, ``"5"`` or ``5.5`` — the same set the document declares."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("must be an integer")  # noqa: TRY004 - pydantic reports ValueError, not TypeError
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("must be an integer")
        return int(value)
    return value


JsonInteger = Annotated[int, BeforeValidator(_json_integer)]
"""An integer field of a request body, accepting exactly what its ``integer`` schema says."""


class Subscription(StrEnum):
    """The subscription's state."""

    UNENROLLED = "unenrolled"
    ACTIVE = "active"
    LAPSED = "lapsed"


class SubscriptionRecord(Model):
    """What the colony's Forager subscription is, and which paid capabilities it carries."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    state: Subscription = Subscription.UNENROLLED
    capabilities: tuple[str, ...] = Field(default=())
    updated_at: str | None = None
    updated_by: str | None = None

    def carries(self, capability: str) -> bool:
        return capability in self.capabilities
