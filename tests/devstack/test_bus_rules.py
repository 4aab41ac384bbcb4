"""The local stack's bus rules: each EventBridgeRule event of template.yaml, read whole (its
EventBridge-only settings, a retry policy and a dead-letter queue, in nobody's way)."""

from __future__ import annotations

from devstack.bus import bus_rules
from devstack.template import Template


def test_the_agent_missions_rule_is_read_from_the_template_with_its_bus_and_pattern() -> None:
    template = Template()
    rules = {rule.function: rule for rule in bus_rules(template)}
    missions = rules["AgentMissionsFunction"]
    assert missions.bus == template.physical_name("KnowledgeBus")
    assert missions.pattern == {
        "source": ["knowledge-service.agent-missions"],
        "detail-type": ["agent.mission.started", "agent.mission.ended"],
    }


def test_the_export_verifiers_rule_is_read_whole_beside_its_retry_policy_and_dead_letter_queue() -> None:
    template = Template()
    rules = {rule.function: rule for rule in bus_rules(template)}
    verifier = rules["ExportVerifierFunction"]
    assert verifier.bus == template.physical_name("KnowledgeBus")
    assert verifier.pattern == {
        "source": ["knowledge-service.exports"],
        "detail-type": ["knowledge.export.verification_requested"],
    }
    props = template.functions()["ExportVerifierFunction"]["Properties"]["Events"][verifier.event]["Properties"]
    assert {"RetryPolicy", "DeadLetterConfig"} <= set(props)  # EventBridge's own: present, and not in the way
