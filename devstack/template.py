"""Reads ``template.yaml``: the one declaration of every table, bucket, route and schedule.

The local stack and the tests build their AWS resources from here, so nothing is ever
declared twice. Intrinsic functions are resolved as far as the local stack needs: ``Ref``
to parameters and resources, ``Fn::Sub``, ``Fn::If`` on the template's conditions, and
``AWS::NoValue``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from cfn_tools import load_yaml

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "template.yaml"

_NO_VALUE = object()


@dataclass(frozen=True)
class Route:
    function: str  # logical id
    method: str
    path: str  # API Gateway form: /knowledge/items/{id}
    handler_dir: Path
    handler: str


@dataclass(frozen=True)
class Schedule:
    function: str
    expression: str  # rate(6 hours) / cron(...)
    handler_dir: Path
    handler: str
    event: str = ""  # the event's logical id (SixHourly): SAM names the rule after it


@dataclass
class Template:
    stack_name: str = "knowledge-local"
    parameters: dict[str, str] = field(default_factory=dict)
    path: Path = TEMPLATE
    region: str = "us-east-1"
    account_id: str = "123456789012"
    # Logical id -> physical name of a deployed stack (DEVSTACK_AWS=real); overrides the local names.
    physical_ids: dict[str, str] = field(default_factory=dict)

    @cached_property
    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = json.loads(_parsed(self.path.read_text()))
        return body

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        resources: dict[str, dict[str, Any]] = self.body["Resources"]
        return resources

    def of_type(self, resource_type: str) -> dict[str, dict[str, Any]]:
        return {name: r for name, r in self.resources.items() if r["Type"] == resource_type}

    # ------------------------------------------------------------------ names
    def physical_name(self, logical_id: str) -> str:
        """The name a resource gets in the local stack (CloudFormation would add a suffix)."""
        if logical_id in self.physical_ids:
            return self.physical_ids[logical_id]
        resource = self.resources[logical_id]
        props = resource.get("Properties", {})
        explicit = props.get("TableName") or props.get("BucketName") or props.get("Name")
        if explicit:
            return str(self.resolve(explicit))
        name = f"{self.stack_name}-{logical_id}"
        return name.lower() if resource["Type"] == "AWS::S3::Bucket" else name

    def parameter_values(self) -> dict[str, str]:
        values = {name: str(spec.get("Default", "")) for name, spec in self.body.get("Parameters", {}).items()}
        values.update(self.parameters)
        return values

    # ------------------------------------------------------------------ intrinsic functions
    def resolve(self, value: Any) -> Any:
        if isinstance(value, dict) and len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref":
                return self._ref(arg)
            if key == "Fn::Sub":
                return self._sub(arg)
            if key == "Fn::If":
                condition, when_true, when_false = arg
                return self.resolve(when_true if self.condition(condition) else when_false)
            if key == "Fn::GetAtt":
                target, attribute = arg if isinstance(arg, list) else arg.split(".", 1)
                return f"arn:aws:local:{self.region}:{self.account_id}:{self.physical_name(target)}/{attribute}"
        if isinstance(value, dict):
            resolved = {k: self.resolve(v) for k, v in value.items()}
            return {k: v for k, v in resolved.items() if v is not _NO_VALUE}
        if isinstance(value, list):
            return [v for v in (self.resolve(v) for v in value) if v is not _NO_VALUE]
        return value

    def condition(self, name: str) -> bool:
        return bool(self._evaluate(self.body["Conditions"][name]))

    def _evaluate(self, expression: Any) -> Any:
        if isinstance(expression, dict) and len(expression) == 1:
            ((key, arg),) = expression.items()
            if key == "Fn::Not":
                return not self._evaluate(arg[0])
            if key == "Fn::Equals":
                return self._evaluate(arg[0]) == self._evaluate(arg[1])
            if key == "Fn::And":
                return all(self._evaluate(a) for a in arg)
            if key == "Fn::Or":
                return any(self._evaluate(a) for a in arg)
            if key == "Condition":
                return self.condition(arg)
        return self.resolve(expression)

    def _ref(self, name: str) -> Any:
        pseudo = {
            "AWS::StackName": self.stack_name,
            "AWS::Region": self.region,
            "AWS::AccountId": self.account_id,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::NoValue": _NO_VALUE,
        }
        if name in pseudo:
            return pseudo[name]
        parameters = self.parameter_values()
        if name in parameters:
            return parameters[name]
        return self.physical_name(name)

    def _sub(self, arg: Any) -> str:
        text, variables = (arg, {}) if isinstance(arg, str) else (arg[0], arg[1])

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in variables:
                return str(self.resolve(variables[name]))
            if "." in name:
                return str(self.resolve({"Fn::GetAtt": name.split(".", 1)}))
            return str(self._ref(name))

        return re.sub(r"\$\{([^}!]+)\}", replace, text)

    # ------------------------------------------------------------------ functions, routes, schedules
    def function_environment(self, logical_id: str) -> dict[str, str]:
        """Globals' variables overlaid with the function's own, resolved."""
        variables: dict[str, Any] = dict(
            self.body.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})
        )
        own = self.resources[logical_id].get("Properties", {}).get("Environment", {}).get("Variables", {})
        variables.update(own)
        resolved = self.resolve(variables)
        return {k: str(v) for k, v in resolved.items()}

    def functions(self) -> dict[str, dict[str, Any]]:
        return self.of_type("AWS::Serverless::Function")

    def function_of_folder(self) -> dict[str, str]:
        """Each function's logical id by its code's folder (``functions/<folder>``), the prefix
        of its sample events in ``events/`` (``reads_search.json`` is ``ReadsFunction``'s)."""
        return {Path(props["Properties"]["CodeUri"]).name: logical_id for logical_id, props in self.functions().items()}

    def _handler(self, logical_id: str) -> tuple[Path, str]:
        props = self.functions()[logical_id]["Properties"]
        return self.path.parent / props["CodeUri"], props["Handler"]

    def routes(self) -> list[Route]:
        routes = []
        for name, function in self.functions().items():
            for event in function.get("Properties", {}).get("Events", {}).values():
                if event["Type"] == "Api":
                    props = event["Properties"]
                    directory, handler = self._handler(name)
                    routes.append(Route(name, props["Method"].upper(), props["Path"], directory, handler))
        return routes

    def schedules(self) -> list[Schedule]:
        schedules = []
        for name, function in self.functions().items():
            for event_id, event in function.get("Properties", {}).get("Events", {}).items():
                if event["Type"] == "Schedule" and event["Properties"].get("Enabled", True):
                    directory, handler = self._handler(name)
                    schedules.append(
                        Schedule(name, event["Properties"]["Schedule"], directory, handler, event=event_id)
                    )
        return schedules

    def stage_name(self) -> str:
        """The API's stage (the StageName parameter unless the template says otherwise)."""
        api = next(iter(self.of_type("AWS::Serverless::Api").values()))
        return str(self.resolve(api["Properties"].get("StageName", "Prod")))

    def function_setting(self, logical_id: str, name: str, default: Any = None) -> Any:
        """A function property, falling back to Globals (Timeout, MemorySize, ...), resolved."""
        own = self.resources[logical_id].get("Properties", {})
        if name in own:
            return self.resolve(own[name])
        globals_ = self.body.get("Globals", {}).get("Function", {})
        return self.resolve(globals_[name]) if name in globals_ else default

    def function_timeout(self, logical_id: str) -> int:
        return int(self.function_setting(logical_id, "Timeout", 3))

    def function_memory(self, logical_id: str) -> int:
        return int(self.function_setting(logical_id, "MemorySize", 128))

    def gateway_responses(self) -> dict[str, dict[str, Any]]:
        """API Gateway's own answers (UNAUTHORIZED, ...) by response type."""
        return {
            r["Properties"]["ResponseType"]: r["Properties"]
            for r in self.of_type("AWS::ApiGateway::GatewayResponse").values()
        }


def create_resources(
    template: Template, dynamodb_client: Any, s3_client: Any | None = None, events_client: Any | None = None
) -> dict[str, str]:
    """Create every table (and bucket, and bus) the template declares; returns logical → physical."""
    made: dict[str, str] = {}
    existing = set(dynamodb_client.list_tables().get("TableNames", []))
    for logical_id, resource in template.of_type("AWS::DynamoDB::Table").items():
        name = template.physical_name(logical_id)
        made[logical_id] = name
        if name in existing:
            continue
        props = template.resolve(resource["Properties"])
        kwargs: dict[str, Any] = {
            "TableName": name,
            "AttributeDefinitions": props["AttributeDefinitions"],
            "KeySchema": props["KeySchema"],
            "BillingMode": props.get("BillingMode", "PAY_PER_REQUEST"),
        }
        if props.get("GlobalSecondaryIndexes"):
            kwargs["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
        if props.get("LocalSecondaryIndexes"):
            kwargs["LocalSecondaryIndexes"] = props["LocalSecondaryIndexes"]
        if props.get("StreamSpecification"):
            kwargs["StreamSpecification"] = {"StreamEnabled": True, **props["StreamSpecification"]}
        dynamodb_client.create_table(**kwargs)
        ttl = props.get("TimeToLiveSpecification")
        if ttl:
            dynamodb_client.update_time_to_live(TableName=name, TimeToLiveSpecification=ttl)
    if s3_client is not None:
        made.update(_make_buckets(template, s3_client))
    if events_client is not None:
        buses = {b["Name"] for b in events_client.list_event_buses().get("EventBuses", [])}
        for logical_id in template.of_type("AWS::Events::EventBus"):
            name = template.physical_name(logical_id)
            made[logical_id] = name
            if name not in buses:
                events_client.create_event_bus(Name=name)
    return made


def _make_buckets(template: Template, s3_client: Any) -> dict[str, str]:
    """The template's buckets (those missing made), each with its CORS rules (:func:`_local_cors`)."""
    made = {}
    buckets = {b["Name"] for b in s3_client.list_buckets().get("Buckets", [])}
    for logical_id in template.of_type("AWS::S3::Bucket"):
        name = template.physical_name(logical_id)
        made[logical_id] = name
        if name not in buckets:
            s3_client.create_bucket(Bucket=name)
        cors = template.resolve(template.resources[logical_id].get("Properties", {}).get("CorsConfiguration"))
        if cors:
            s3_client.put_bucket_cors(Bucket=name, CORSConfiguration=_local_cors(cors))
    return made


LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*")
"""Where the local stack's API (and so its console) is served: added to a bucket's CORS origins."""


def _local_cors(cors: Mapping[str, Any]) -> dict[str, Any]:
    """A bucket's ``CorsConfiguration`` as S3's API takes it, each rule also admitting the local
    stack's loopback origins (the deployed API's origin is not the local one)."""
    names = {"AllowedMethods": "AllowedMethods", "AllowedOrigins": "AllowedOrigins", "AllowedHeaders": "AllowedHeaders",
             "ExposedHeaders": "ExposeHeaders", "MaxAge": "MaxAgeSeconds", "Id": "ID"}  # fmt: skip
    rules = []
    for rule in cors.get("CorsRules", []):
        made = {names[key]: value for key, value in rule.items() if key in names}
        made["AllowedOrigins"] = [*made.get("AllowedOrigins", []), *LOOPBACK_ORIGINS]
        rules.append(made)
    return {"CORSRules": rules}


@lru_cache(maxsize=4)
def _parsed(text: str) -> str:
    """The template's YAML, parsed once a process for the same text, kept as JSON: ``cfn_tools``
    parses in pure Python (0.2–0.4 s for this template) and its mappings are slow to walk (~20 ms
    to make plain ones), and a process that makes many ``Template()`` (a test fixture does, once a
    test) read the same text again each time. Each ``Template.body`` is its own copy, decoded
    from this text (~1 ms)."""
    return json.dumps(_plain(load_yaml(text)))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
