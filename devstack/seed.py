"""What a newcomer's first local stack holds, written through the layer's own stores.

Idempotent: each start writes only what is missing. The local stack starts with
knowledge enabled and bound to its FORAGER (the simulator, or ``FORAGER_ENDPOINT``), two
demo ANTHILL projects in organization ``colony``, ``falcon`` bound to FORAGER's
``falcon``, and an admin principal whose token is kept in the state directory.
"""

from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowledge_service.identity.principal import (
    Permission,
    Principal,
    PrincipalKind,
    ProjectRole,
    is_well_formed,
    mint_token,
    token_hash,
)
from knowledge_service.models import KnowledgeSettings
from knowledge_service.storage.config_store import ConfigStore
from knowledge_service.storage.credential import CredentialStore
from knowledge_service.storage.principals import PrincipalStore
from knowledge_service.storage.projects import ProjectStore

log = logging.getLogger("devstack.seed")

ADMIN_NAME = "local-admin"
ORGANIZATION = "colony"
DEMO_PROJECTS = {"colony-docs": "Colony docs", "falcon": "Falcon"}
DEMO_BINDING = ("falcon", "falcon")  # ANTHILL project -> FORAGER project
ACTOR = "devstack"


@dataclass(frozen=True)
class Admin:
    name: str
    token: str
    minted: bool


def admin_principal(name: str = ADMIN_NAME) -> Principal:
    return Principal(
        name=name,
        kind=PrincipalKind.HUMAN,
        permissions=frozenset(Permission),
        project_roles=dict.fromkeys(DEMO_PROJECTS, ProjectRole.ADMIN),
        organizations=frozenset({ORGANIZATION}),
    )


def ensure_admin(principals: PrincipalStore, token_file: Path) -> Admin:
    """The admin whose token ``token_file`` keeps, while that principal is active; else a new one.

    Nothing is revoked. When an active ``local-admin`` exists whose token the file does
    not hold (the file was lost), the new principal is ``local-admin-2`` (or the next free
    number): the old one stays for whoever holds its token.
    """
    if token_file.exists():
        token = token_file.read_text(encoding="utf-8").strip()
        if is_well_formed(token):
            record = principals.by_token_hash(token_hash(token))
            if record is not None and record.active:
                return Admin(record.name, token, minted=False)
            log.info(
                "the kept admin token is %s; minting a new one",
                "revoked" if record is not None else "unknown to this stack",
            )
    name = ADMIN_NAME
    number = 1
    while any(r.active for r in principals.by_name(name)):
        number += 1
        name = f"{ADMIN_NAME}-{number}"
    if name != ADMIN_NAME:
        log.warning("an active %s exists but its token is not in %s; minting %s instead", ADMIN_NAME, token_file, name)
    token = mint_token()
    principals.create(admin_principal(name), token_hash(token))
    write_secret(token_file, token + "\n")
    return Admin(name, token, minted=True)


def seed_demo(
    config: ConfigStore,
    credentials: CredentialStore,
    projects: ProjectStore,
    *,
    endpoint: str,
    credential: str,
    previous_endpoint: str | None,
) -> list[str]:
    """Settings, credential, demo projects and binding, where missing; what was written.

    When the stored endpoint is the one the previous start bound (the simulator's port
    changed, or ``FORAGER_ENDPOINT`` did), it follows to ``endpoint`` with its credential.
    """
    written: list[str] = []
    settings = config.settings()
    moved = False
    if settings.updated_at is None:  # never saved: save_settings always stamps updated_at
        config.save_settings(
            KnowledgeSettings(knowledge_enabled=True, knowledge_forager_endpoint=endpoint, updated_by=ACTOR)
        )
        written.append("settings")
    elif previous_endpoint not in (None, endpoint) and settings.knowledge_forager_endpoint == previous_endpoint:
        config.save_settings(
            settings.model_copy(
                update={"knowledge_forager_endpoint": endpoint, "updated_at": None, "updated_by": ACTOR}
            )
        )
        written.append(f"settings endpoint {previous_endpoint} -> {endpoint}")
        moved = True
    current = credentials.read()
    if current is None or (moved and current != credential):
        credentials.write(credential)
        written.append("credential")
    for project_id, name in DEMO_PROJECTS.items():
        if projects.get(project_id) is None:
            projects.create(project_id, ORGANIZATION, name=name)
            written.append(f"project {project_id}")
    project, knowledge_base = DEMO_BINDING
    if not any(b.project == project for b in config.bindings()):
        config.bind(project, knowledge_base, ACTOR)
        written.append(f"binding {project} -> {knowledge_base}")
    return written


DEMO_ROLE = "researcher"
DEMO_ROLE_TOOLS = (
    "knowledge_search",
    "knowledge_retrieve",
    "knowledge_item",
    "knowledge_evidence",
    "knowledge_sources",
    "brain_get",
    "brain_list",
    "brain_history",
    "brain_search",
    "brain_put",
    "knowledge.get",
    "knowledge.list",
)


def seed_demo_role(missions: Any) -> bool:
    """The demo role contract for agent missions (``events/missions_started.json`` names it),
    where missing; True when it was written."""
    from knowledge_service.storage.agent_missions import RoleContract

    if missions.role(DEMO_ROLE) is not None:
        return False
    missions.put_role(RoleContract(name=DEMO_ROLE, tools=DEMO_ROLE_TOOLS))
    return True


def write_secret(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
