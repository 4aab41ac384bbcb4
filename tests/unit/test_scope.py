"""Scope: ?project= resolved through the binding map on every call, with the caller's standing."""

from __future__ import annotations

import pytest

from knowledge_service.domain.scope import Standing, resolve_scope
from knowledge_service.errors import BadRequest, KnowledgeDisabled, NotFound, PermissionDenied
from knowledge_service.identity.principal import Permission, ProjectRole
from knowledge_service.models import KnowledgeSettings
from knowledge_service.runtime import Runtime
from tests.conftest import principal

VIEWER = principal("vera", Permission.READ_KNOWLEDGE, roles={"falcon": ProjectRole.VIEWER})
OPERATOR = principal("otto", Permission.READ_KNOWLEDGE, roles={"falcon": ProjectRole.OPERATOR})
OWNER = principal("olga", Permission.READ_KNOWLEDGE, owns=frozenset({"colony"}))
STRANGER = principal("sam", Permission.READ_KNOWLEDGE, roles={"elsewhere": ProjectRole.ADMIN})


def resolve(rt: Runtime, who: object, project: str | None, standing: Standing = Standing.READ) -> str:
    return resolve_scope(rt.env, rt.config, who, project, standing).knowledge_base  # type: ignore[arg-type]


def test_a_bound_project_resolves_to_its_knowledge_base(knowledge_on: Runtime) -> None:
    assert resolve(knowledge_on, VIEWER, "falcon") == "falcon"


def test_a_rebind_is_seen_by_the_very_next_resolution(knowledge_on: Runtime) -> None:
    knowledge_on.config.bind("falcon", "harbour", "test")
    assert resolve(knowledge_on, VIEWER, "falcon") == "harbour"


def test_an_unmapped_project_is_not_found_never_a_fallback(knowledge_on: Runtime) -> None:
    knowledge_on.config.bind("", "harbour", "test")
    with pytest.raises(NotFound, match="not bound"):
        resolve(knowledge_on, OWNER, "colony-docs")


def test_omitting_the_project_uses_the_console_default(knowledge_on: Runtime) -> None:
    with pytest.raises(NotFound, match="console default"):
        resolve(knowledge_on, VIEWER, None)
    knowledge_on.config.bind("", "harbour", "test")
    assert resolve(knowledge_on, VIEWER, None) == "harbour"


def test_reading_takes_a_role_or_ownership_of_the_organization(knowledge_on: Runtime) -> None:
    assert resolve(knowledge_on, OWNER, "falcon") == "falcon"
    with pytest.raises(NotFound) as hidden:
        resolve(knowledge_on, STRANGER, "falcon")
    with pytest.raises(NotFound) as missing:
        resolve(knowledge_on, STRANGER, "no-such")
    # standing before existence: what a missing project is answered, word for word
    assert str(hidden.value) == str(missing.value).replace("no-such", "falcon")
    for standing in (Standing.READ, Standing.OPERATOR):
        with pytest.raises(NotFound):
            resolve(knowledge_on, STRANGER, "falcon", standing)


def test_operator_rank_refuses_the_viewer_and_the_roleless_owner(knowledge_on: Runtime) -> None:
    assert resolve(knowledge_on, OPERATOR, "falcon", Standing.OPERATOR) == "falcon"
    for who in (VIEWER, OWNER):
        with pytest.raises(PermissionDenied):
            resolve(knowledge_on, who, "falcon", Standing.OPERATOR)


def test_a_malformed_or_missing_project_is_refused_before_anything(knowledge_on: Runtime) -> None:
    with pytest.raises(BadRequest, match=r"^project:"):
        resolve(knowledge_on, OWNER, "../falcon")
    with pytest.raises(NotFound, match="no project"):
        resolve(knowledge_on, OWNER, "ghost")


def test_knowledge_off_is_503(knowledge_on: Runtime) -> None:
    knowledge_on.config.save_settings(KnowledgeSettings(knowledge_enabled=False))
    with pytest.raises(KnowledgeDisabled):
        resolve(knowledge_on, VIEWER, "falcon")
