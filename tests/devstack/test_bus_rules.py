"""The local stack's bus rules: each EventBridgeRule event of template.yaml, read whole."""

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
