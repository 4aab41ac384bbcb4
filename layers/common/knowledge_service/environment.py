"""The deployment's settings: one validated model, read once at the handler boundary.

Everything here comes from the function's environment, which ``template.yaml`` sets. The
"file-only" host settings of the specification (``knowledge_forager_allow_remote``, the
allowed hosts, the workspace root, the gate's pin) live here, where no API call reaches.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache

from pydantic import ConfigDict, Field, field_validator

from knowledge_service.base_model import Model

GATE_ENV_VAR = "ANTHILL_KNOWLEDGE_ENABLED"
SETTINGS_CACHE_SECONDS = 5.0
"""How stale a container's copy of the knowledge settings may be (``SETTINGS_CACHE_SECONDS``):
a change saved in one container is seen by the others within this bound, by its own at once."""


class Environment(Model):
    """The function's environment variables, by their lower-cased names (``CONFIG_TABLE`` is
    ``config_table``). A plain model rather than pydantic-settings: one model does not need a
    settings framework on every cold start."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    config_table: str
    principals_table: str
    projects_table: str
    event_log_table: str
    idempotency_table: str
    inbox_table: str = ""
    watermarks_table: str = ""
    actions_table: str = ""
    findings_table: str = ""
    dead_letters_table: str = ""
    archive_bucket: str = ""
    verbs_table: str = ""
    verb_audit_table: str = ""
    event_bus_name: str = ""
    pages_table: str = ""
    sessions_table: str = ""
    forager_credential_parameter: str

    knowledge_forager_endpoint: str = ""
    knowledge_forager_allow_remote: bool = False
    knowledge_forager_allowed_hosts: tuple[str, ...] = ()
    knowledge_workspace_root: str = "/srv/colony/workspace"
    knowledge_forager_managed: bool = False
    forager_allowed_input_roots: tuple[str, ...] = ()
    """FORAGER_ALLOWED_INPUT_ROOTS in the colony's own environment: what a managed engine is
    handed while knowledge_forager_input_roots is empty (comma-separated)."""
    installation_organization: str = "colony"
    forager_timeout_seconds: float = Field(default=8.0, gt=0, le=25)
    settings_cache_seconds: float = Field(default=SETTINGS_CACHE_SECONDS, ge=0, le=60)
    gate_pin: str | None = Field(default=None, alias=GATE_ENV_VAR.lower())
    devstack_engine_file: str = ""
    """DEVSTACK_ENGINE_FILE: set only by the local stack, whose supervisor writes there what the
    engine it manages is doing (``GET /knowledge/engine``); never by template.yaml."""
    devstack_clock_file: str = ""
    """DEVSTACK_CLOCK_FILE: set only by the local stack (``devstack``), never by template.yaml — the
    file whose whole number of seconds moves the functions' clock (``knowledge_service/clock.py``)."""

    @field_validator("knowledge_forager_allowed_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(host.strip().lower() for host in value.split(",") if host.strip())
        return value

    @field_validator("forager_allowed_input_roots", mode="before")
    @classmethod
    def _split_roots(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(root.strip() for root in value.split(",") if root.strip())
        return value

    @field_validator("gate_pin", mode="before")
    @classmethod
    def _empty_pin_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Environment:
        """Read from a process environment: names are matched case-insensitively."""
        return cls.model_validate({name.lower(): value for name, value in environ.items()})

    @property
    def gate_pinned(self) -> bool:
        """True when the gate variable is set: env over settings, so a write would lose."""
        return self.gate_pin is not None

    @property
    def pinned_gate_value(self) -> bool | None:
        if self.gate_pin is None:
            return None
        return self.gate_pin.strip().lower() in {"1", "true", "yes", "on"}


@lru_cache(maxsize=1)
def current_environment() -> Environment:
    """The environment of this container, read on first use (never at import time)."""
    return Environment.from_environ(os.environ)


def tracing_on(environ: Mapping[str, str] | None = None) -> bool:
    """Whether X-Ray tracing runs in this container: in Lambda, unless Powertools' own
    ``POWERTOOLS_TRACE_DISABLED`` says not (the rule Powertools' ``Tracer`` applies)."""
    values = os.environ if environ is None else environ
    if values.get("POWERTOOLS_TRACE_DISABLED", "").strip().lower() in {"1", "true", "yes", "on"}:
        return False
    if values.get("AWS_SAM_LOCAL") or values.get("AWS_CHALICE_CLI_MODE"):
        return False
    return bool(values.get("AWS_LAMBDA_FUNCTION_NAME"))
