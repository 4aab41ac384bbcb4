"""The deployment's environment, read as Lambda hands it over (upper-case variables)."""

from __future__ import annotations

from knowledge_service.environment import Environment

REQUIRED = {
    "CONFIG_TABLE": "config",
    "PRINCIPALS_TABLE": "principals",
    "PROJECTS_TABLE": "projects",
    "EVENT_LOG_TABLE": "events",
    "IDEMPOTENCY_TABLE": "idempotency",
    "FORAGER_CREDENTIAL_PARAMETER": "/stack/forager/credential",
}


def test_variables_are_read_by_their_upper_case_names() -> None:
    env = Environment.from_environ({**REQUIRED, "KNOWLEDGE_FORAGER_ALLOW_REMOTE": "true", "PATH": "/bin"})
    assert env.config_table == "config"
    assert env.knowledge_forager_allow_remote is True


def test_allowed_hosts_are_a_comma_separated_lower_cased_list() -> None:
    env = Environment.from_environ({**REQUIRED, "KNOWLEDGE_FORAGER_ALLOWED_HOSTS": " Forager.Internal, ,b.example "})
    assert env.knowledge_forager_allowed_hosts == ("forager.internal", "b.example")


def test_the_gate_pin_is_unset_when_empty_and_read_when_set() -> None:
    assert not Environment.from_environ({**REQUIRED, "ANTHILL_KNOWLEDGE_ENABLED": ""}).gate_pinned
    pinned = Environment.from_environ({**REQUIRED, "ANTHILL_KNOWLEDGE_ENABLED": "true"})
    assert pinned.gate_pinned
    assert pinned.pinned_gate_value is True
