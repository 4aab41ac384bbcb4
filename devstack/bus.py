"""The local EventBridge bus's rules: each ``EventBridgeRule`` event of ``template.yaml``
delivered to its function, as EventBridge would.

moto's EventBridge matches patterns and delivers to SQS targets, but cannot invoke a
function of ours. So each rule is created on the emulated bus, for real, with its pattern
and one SQS queue as target; one daemon thread per rule long-polls its queue and invokes the
rule's function with the event, as Lambda would receive it (a rule's long invocation, an
export verification receiving a large archive, holds up no other rule's). A handler that
raises leaves the message to be delivered again (after the queue's visibility timeout), as
Lambda's and EventBridge's retries would; intake is idempotent on the event id, so a
redelivery records nothing new. A rule's ``RetryPolicy`` and ``DeadLetterConfig`` are
EventBridge's own and are not played here: the delivery is retried for as long as the stack runs.

Each poll waits up to SQS's longest, 20 s: an event wakes it at once, and an idle stack asks
moto once every 20 s a rule instead of every second (four rules polling each second were the
whole of an idle stack's CPU, ~2 % of a core). ``stop()`` wakes every poll with a message of its
own, which is never delivered, so a stop does not wait out a poll.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from devstack.template import Template

log = logging.getLogger("devstack.bus")

Invoke = Callable[[str, dict[str, Any]], Any]
POLL_SECONDS = 20
RETRY_SECONDS = 1
VISIBILITY_SECONDS = 5
_WAKE = json.dumps({"devstack-bus": "stop"})


@dataclass(frozen=True)
class BusRule:
    function: str
    event: str
    bus: str
    pattern: dict[str, Any]


def bus_rules(template: Template) -> list[BusRule]:
    rules = []
    for name, function in template.functions().items():
        for event_id, event in function.get("Properties", {}).get("Events", {}).items():
            if event["Type"] != "EventBridgeRule":
                continue
            props = event["Properties"]
            bus = str(template.resolve(props.get("EventBusName", "default")))
            rules.append(BusRule(name, event_id, bus, template.resolve(props["Pattern"])))
    return rules


class BusDelivery:
    """The template's bus rules on the emulated bus, and the thread that delivers them."""

    def __init__(self, template: Template, invoke: Invoke, events: Any, sqs: Any):
        self._template = template
        self._invoke = invoke
        self._events = events
        self._sqs = sqs
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._queues: list[tuple[BusRule, str]] = []

    def start(self) -> None:
        for rule in bus_rules(self._template):
            name = f"{self._template.stack_name}-{rule.function}{rule.event}"
            url = self._sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": str(VISIBILITY_SECONDS)})[
                "QueueUrl"
            ]
            arn = self._sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
            self._events.put_rule(Name=name, EventBusName=rule.bus, EventPattern=json.dumps(rule.pattern))
            self._events.put_targets(Rule=name, EventBusName=rule.bus, Targets=[{"Id": "function", "Arn": arn}])
            self._queues.append((rule, url))
        for rule, url in self._queues:
            thread = threading.Thread(
                target=self._loop, args=(rule, url), name=f"devstack-bus-{rule.function}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def _loop(self, rule: BusRule, url: str) -> None:
        while not self._stop.is_set():
            try:
                self._deliver(rule, url)
            except Exception:
                if not self._stop.is_set():
                    log.exception("delivering %s's events failed", rule.function)
                self._stop.wait(RETRY_SECONDS)

    def _deliver(self, rule: BusRule, url: str) -> None:
        answer = self._sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=POLL_SECONDS)
        for message in answer.get("Messages", []):
            if self._stop.is_set():
                return  # the stack is stopping (stop() woke this poll): nothing more is delivered
            event = json.loads(message["Body"])
            try:
                self._invoke(rule.function, event)
            except Exception:
                log.exception("%s failed on event %s; it will be delivered again", rule.function, event.get("id"))
                continue
            self._sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])

    def stop(self) -> None:
        self._stop.set()
        for _, url in self._queues:
            try:
                self._sqs.send_message(QueueUrl=url, MessageBody=_WAKE)
            except Exception:  # the emulator is gone already: the daemon thread ends with the process
                log.debug("could not wake the poll of %s", url, exc_info=True)
        for thread in self._threads:
            thread.join(timeout=5)
