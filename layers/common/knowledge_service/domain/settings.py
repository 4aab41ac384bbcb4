"""POST /settings: the console-writable knowledge settings.

``knowledge_enabled`` (refused while the environment pins the gate), the two study
settings, the endpoint (within the deployment's endpoint policy) and the credential
(written to Parameter Store, never read back). The file-only host settings are not here:
they are deployment parameters.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import ConfigDict, Field, SecretStr, StrictBool, field_validator
from pydantic.json_schema import SkipJsonSchema

from knowledge_service.base_model import Model
from knowledge_service.domain.endpoint_policy import LOOPBACK_ENDPOINT_PATTERN, EndpointRefused, check_endpoint
from knowledge_service.domain.gate import knowledge_enabled
from knowledge_service.domain.workspace_paths import PATH_MAX, SEGMENT_MAX_BYTES, PathRefused, contain, shown
from knowledge_service.environment import GATE_ENV_VAR, Environment
from knowledge_service.errors import BadRequest, Conflict
from knowledge_service.models import AutoStudy, KnowledgeSettings, RevisionStudy
from knowledge_service.storage.config_store import ConfigStore
from knowledge_service.storage.credential import CredentialStore

BEARER_SAFE = re.compile(r"^[\x21-\x7e]+$")
FILE_ONLY = (
    "knowledge_forager_allow_remote",
    "knowledge_forager_managed",
    "knowledge_forager_allowed_hosts",
    "knowledge_workspace_root",
)


INPUT_ROOTS_FIELD = "knowledge_forager_input_roots"
INPUT_ROOTS_MAX = 50

_NAME_CHARACTERS = r"A-Za-z0-9 _.,+=@~()-"
_BLOCKED_NAME = (
    r"\.[Gg][Ii][Tt]|[Dd][Aa][Tt][Aa]|\.?[Cc][Aa][Cc][Hh][Ee]|[Cc][Aa][Cc][Hh][Ee][Ss]"
    r"|__[Pp][Yy][Cc][Aa][Cc][Hh][Ee]__|[Nn][Oo][Dd][Ee]_[Mm][Oo][Dd][Uu][Ll][Ee][Ss]"
    r"|\.[Vv][Ee][Nn][Vv]|\.[Hh][Gg]|\.[Ss][Vv][Nn]|\.[^/]*[_-][Cc][Aa][Cc][Hh][Ee]|\.\.?"
)
_FOLDER_NAME = rf"(?!({_BLOCKED_NAME})(/|$))[{_NAME_CHARACTERS}]{{1,{SEGMENT_MAX_BYTES}}}"
INPUT_ROOT_PATTERN = rf"^{_FOLDER_NAME}(/{_FOLDER_NAME})*$"
"""An input root as ``POST /settings`` takes it, declared exactly: a folder named relative to
the workspace, '/'-separated names of ASCII letters, digits, spaces and ``._-+=@,~()``, none
empty, ``.`` or ``..``, none a blocked folder in any letter case (``workspace_paths``'
``BLOCKED_SEGMENTS`` and ``.*-cache`` folders), each at most 255 characters. Every such folder
lies inside the workspace by construction (``contain`` takes it: ``tests/unit/test_input_roots.py``
holds that as a property); what the pattern leaves out (absolute paths, percent-escapes, ``\\``,
other characters) is refused ``400 setting_refused`` with the reason. The one refusal no
document can state is the host's own: a folder that is a symbolic link out of the workspace
where the workspace is mounted."""
INPUT_ROOT = re.compile(INPUT_ROOT_PATTERN)


FileOnly = Annotated[SkipJsonSchema[None], Field(default=None, exclude=True)]


def _at_least_one_never_null(schema: dict[str, Any]) -> None:
    """The document of ``SettingsUpdate``: at least one setting, and none of them null."""
    schema["minProperties"] = 1
    for field in schema.get("properties", {}).values():
        kept = [option for option in field.pop("anyOf", []) if option.get("type") != "null"]
        if len(kept) == 1:
            field.update(kept[0])
        elif kept:
            field["anyOf"] = kept
        if field.get("default", "") is None:
            del field["default"]


class SettingsUpdate(Model):
    """The settings to change; a field left out stays as it is."""

    # At least one setting; a field may be left out but never null (the document says both).
    model_config = ConfigDict(extra="forbid", json_schema_extra=_at_least_one_never_null)

    knowledge_enabled: StrictBool | None = None
    knowledge_auto_study: AutoStudy | None = None
    knowledge_revision_study: RevisionStudy | None = None
    knowledge_forager_endpoint: Annotated[
        str | None,
        Field(
            max_length=2048,
            json_schema_extra={"pattern": LOOPBACK_ENDPOINT_PATTERN},
            description="A loopback http(s) URL, or empty to clear it (a deployment that allows remote hosts "
            "also takes its listed hosts)",
        ),
    ] = None
    knowledge_forager_token: Annotated[
        SecretStr | None,
        Field(min_length=1, max_length=4096, json_schema_extra={"pattern": BEARER_SAFE.pattern}),
    ] = None
    knowledge_forager_input_roots: Annotated[
        list[
            Annotated[str, Field(min_length=1, max_length=PATH_MAX, json_schema_extra={"pattern": INPUT_ROOT_PATTERN})]
        ]
        | None,
        Field(max_length=INPUT_ROOTS_MAX),
    ] = None

    # Named so a write gets a refusal that says why, not "unknown field".
    knowledge_forager_allow_remote: FileOnly
    knowledge_forager_managed: FileOnly
    knowledge_forager_allowed_hosts: FileOnly
    knowledge_workspace_root: FileOnly

    @field_validator("knowledge_forager_token")
    @classmethod
    def _header_safe(cls, value: SecretStr | None) -> SecretStr | None:
        # A bearer credential travels in an HTTP header: visible ASCII, no spaces.
        if value is not None and not BEARER_SAFE.match(value.get_secret_value()):
            raise ValueError("must be visible ASCII with no spaces (it is sent as a bearer token)")
        return value

    @field_validator(*FILE_ONLY, mode="before")
    @classmethod
    def _refuse_file_only(cls, value: object) -> None:
        raise ValueError("is file-only: a deployment parameter that no API call can change")


class SettingsView(Model):
    """The settings as they now stand. The credential is reported as set or not, never shown."""

    knowledge_enabled: bool
    knowledge_auto_study: AutoStudy
    knowledge_revision_study: RevisionStudy
    revision_study_resolved: AutoStudy
    knowledge_forager_endpoint: str
    knowledge_forager_input_roots: list[str]
    knowledge_forager_token_set: bool
    knowledge_forager_allow_remote: bool
    gate_env_var: str
    gate_env_pinned: bool


def apply_settings(
    env: Environment, config: ConfigStore, credentials: CredentialStore, update: SettingsUpdate, actor: str
) -> SettingsView:
    """Validate the whole update, then write it: the credential first, the rest after.

    If the settings write fails after the credential was replaced, the previous credential
    is put back, so a failed request leaves nothing half-written.
    """
    for field in sorted(update.model_fields_set):  # the document says never null, of every setting
        if getattr(update, field) is None:
            raise BadRequest(field, "may be left out, but not null.")
    changes = update.model_dump(exclude_unset=True, exclude={"knowledge_forager_token", *FILE_ONLY})
    if not changes and update.knowledge_forager_token is None:
        raise BadRequest("body", "names no setting to change.")
    if update.knowledge_enabled is not None and env.gate_pinned:
        raise Conflict(
            f"knowledge_enabled is pinned by {GATE_ENV_VAR} in this deployment's environment; a settings "
            "write would persist and then lose to the variable."
        )
    if update.knowledge_forager_endpoint is not None:
        changes["knowledge_forager_endpoint"] = _endpoint(env, update.knowledge_forager_endpoint)
    if update.knowledge_forager_input_roots is not None:
        changes["knowledge_forager_input_roots"] = _input_roots(env, update.knowledge_forager_input_roots)

    current = config.settings()
    updated = current.model_copy(update={**changes, "updated_at": datetime.now(UTC), "updated_by": actor})
    previous_token = None
    if update.knowledge_forager_token is not None:
        previous_token = credentials.read()
        credentials.write(update.knowledge_forager_token.get_secret_value())
    try:
        config.save_settings(updated)
    except Exception:
        if update.knowledge_forager_token is not None:
            if previous_token is None:
                credentials.remove()
            else:
                credentials.write(previous_token)
        raise
    return settings_view(env, updated, credentials)


def settings_view(env: Environment, settings: KnowledgeSettings, credentials: CredentialStore) -> SettingsView:
    return SettingsView(
        knowledge_enabled=knowledge_enabled(settings, env),
        knowledge_auto_study=settings.knowledge_auto_study,
        knowledge_revision_study=settings.knowledge_revision_study,
        revision_study_resolved=settings.revision_study_resolved,
        knowledge_forager_endpoint=settings.knowledge_forager_endpoint
        if settings.knowledge_forager_endpoint is not None
        else env.knowledge_forager_endpoint,
        knowledge_forager_input_roots=list(settings.knowledge_forager_input_roots),
        knowledge_forager_token_set=credentials.read() is not None,
        knowledge_forager_allow_remote=env.knowledge_forager_allow_remote,
        gate_env_var=GATE_ENV_VAR,
        gate_env_pinned=env.gate_pinned,
    )


def _input_roots(env: Environment, folders: list[str]) -> tuple[str, ...]:
    """The second fence, written: every folder must lie inside the colony's workspace (the
    first fence's own rule), or the whole write is refused naming the folder and why."""
    for folder in folders:
        reason = input_root_refusal(folder, env.knowledge_workspace_root) or _undeclared(folder)
        if reason is not None:
            raise BadRequest(INPUT_ROOTS_FIELD, f"'{shown(folder)}' is refused: {reason}.", code="setting_refused")
    return tuple(dict.fromkeys(folders))


def input_root_refusal(folder: str, workspace_root: str) -> str | None:
    """Why ``folder`` may not be handed to the engine as an allowed input root, or None."""
    try:
        contain(folder, workspace_root)
    except PathRefused as refused:
        return refused.reason
    return None


def _undeclared(folder: str) -> str | None:
    """Why a folder inside the workspace is still not one the document declares, or None."""
    if INPUT_ROOT.fullmatch(folder):
        return None
    if folder.startswith("/"):
        return "it is absolute; name it relative to the workspace"
    if any(name in ("", ".", "..") for name in folder.split("/")):
        return "write it without empty, '.' or '..' names"
    return "a name holds a character other than ASCII letters, digits, spaces and ._-+=@,~()"


def _endpoint(env: Environment, value: str) -> str:
    if value == "":
        return ""  # clears the endpoint: knowledge is then "not configured"
    try:
        return check_endpoint(
            value, allow_remote=env.knowledge_forager_allow_remote, allowed_hosts=env.knowledge_forager_allowed_hosts
        )
    except EndpointRefused as refused:
        raise BadRequest("knowledge_forager_endpoint", str(refused)) from refused
