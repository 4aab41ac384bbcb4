"""The export verifier as the unit tiers drive it: the template's bus rule for
``ExportVerifierFunction`` made on moto's bus with an SQS queue as its target (as the local
stack's ``devstack/bus.py`` does), so a test sees each event a download put, and delivers them
to the function's own door (``functions/verifier/app.py``), as EventBridge would."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import boto3

from devstack.bus import bus_rules
from devstack.lambdas import FakeLambdaContext, load_handler
from devstack.template import Template

FUNCTION = "ExportVerifierFunction"


@dataclass
class ExportVerifier:
    """The verifier's rule on moto's bus, its queue, and the function it feeds."""

    template: Template
    queue_url: str

    @classmethod
    def on_the_bus(cls, template: Template) -> ExportVerifier:
        (rule,) = [r for r in bus_rules(template) if r.function == FUNCTION]
        sqs, events = boto3.client("sqs"), boto3.client("events")
        url = sqs.create_queue(QueueName=f"{FUNCTION}{rule.event}")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        events.put_rule(Name=FUNCTION, EventBusName=rule.bus, EventPattern=json.dumps(rule.pattern))
        events.put_targets(Rule=FUNCTION, EventBusName=rule.bus, Targets=[{"Id": "function", "Arn": arn}])
        return cls(template, url)

    def take(self) -> list[dict[str, Any]]:
        """Every event waiting for the verifier, taken off its queue (the bus's, as put)."""
        sqs = boto3.client("sqs")
        taken: list[dict[str, Any]] = []
        while True:
            answer = sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0)
            messages = answer.get("Messages", [])
            if not messages:
                return taken
            for message in messages:
                taken.append(json.loads(message["Body"]))
                sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])

    def invoke(self, event: dict[str, Any]) -> Any:
        """The verifier's own door, invoked with ``event`` as Lambda would."""
        props = self.template.functions()[FUNCTION]["Properties"]
        handler = load_handler(self.template.path.parent / props["CodeUri"], props["Handler"], f"lambda_{FUNCTION}")
        return handler(event, FakeLambdaContext(FUNCTION, timeout_seconds=900))

    def deliver(self) -> list[Any]:
        """Deliver every waiting event to the verifier; what each invocation answered."""
        return [self.invoke(event) for event in self.take()]
