"""The deployment's settings: one validated model, read once at the handler boundary.

Everything here comes from the function's environment, which ``template.yaml`` sets. The
"file-only" host settings of the specification (``knowledge_forager_allow_remote``, the
allowed hosts, the workspace root, the gate's pin) live here, where no API call reaches.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

GATE_ENV_VAR = "ANTHILL_KNOWLEDGE_ENABLED"


class Environment(BaseSettings):
    model_config = SettingsConfigDict(frozen=True, extra="ignore", populate_by_name=True)

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
    event_bus_name: str = ""
    forager_credential_parameter: str

    knowledge_forager_endpoint: str = ""
    knowledge_forager_allow_remote: bool = False
    knowledge_forager_allowed_hosts: Annotated[tuple[str, ...], NoDecode] = ()
    knowledge_workspace_root: str = "/srv/colony/workspace"
    knowledge_forager_managed: bool = False
    installation_organization: str = "colony"
    forager_timeout_seconds: float = Field(default=8.0, gt=0, le=25)
    gate_pin: str | None = Field(default=None, alias=GATE_ENV_VAR)

    @field_validator("knowledge_forager_allowed_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(host.strip().lower() for host in value.split(",") if host.strip())
        return value

    @field_validator("gate_pin", mode="before")
    @classmethod
    def _empty_pin_is_unset(cls, value: object) -> object:
        return None if value == "" else value

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
    return Environment()  # type: ignore[call-arg]
