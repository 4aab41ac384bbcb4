"""The environment switches, and DEVSTACK_AWS=real against a stand-in deployed stack.

The deployed stack is moto's CloudFormation (tables only, CloudFormation-style
suffixed names): what the local stack must do is read each table's physical name by
logical id and hand the functions those names, seed nothing but the admin, and write
no snapshot.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import boto3
import httpx
import pytest

from devstack.aws import MotoEmulator
from devstack.stack import DEFAULT_STATE_DIR, StackStartError, options_from_env, start_stack
from devstack.template import Template


def test_the_defaults_without_any_switch() -> None:
    options = options_from_env({})
    assert options == {
        "state_dir": DEFAULT_STATE_DIR,
        "api_port": 3000,
        "moto_port": 4566,
        "forager_port": 8790,
        "forager_control_port": None,  # the control port is the tests' own: off unless asked for
        "schedule_seconds": None,
        "forager_endpoint": None,
        "forager_token": None,
        "aws": "local",
        "stack_name": None,
        "concurrency": 8,
        "journal_records": 5000,
        "workspace": Path.cwd().resolve(),  # the folder make run is started from
    }


def test_every_switch_is_read() -> None:
    options = options_from_env(
        {
            "DEVSTACK_PORT": "3100",
            "DEVSTACK_MOTO_PORT": "0",
            "DEVSTACK_FORAGER_PORT": "9000",
            "DEVSTACK_FORAGER_CONTROL_PORT": "9001",
            "DEVSTACK_ENGINE_CONTROL": "1",
            "DEVSTACK_STATE_DIR": "/tmp/state",
            "DEVSTACK_SCHEDULE_SECONDS": "2.5",
            "FORAGER_ENDPOINT": "https://forager.example",
            "FORAGER_TOKEN": "fgr_x",
            "DEVSTACK_AWS": "real",
            "DEVSTACK_STACK_NAME": "knowledge-prod",
            "DEVSTACK_CONCURRENCY": "1",
            "DEVSTACK_JOURNAL_RECORDS": "40",
            "DEVSTACK_WORKSPACE": str(Path(__file__).parent),
        }
    )
    assert options == {
        "state_dir": Path("/tmp/state"),
        "api_port": 3100,
        "moto_port": 0,
        "forager_port": 9000,
        "forager_control_port": 9001,
        "schedule_seconds": 2.5,
        "forager_endpoint": "https://forager.example",
        "forager_token": "fgr_x",
        "aws": "real",
        "stack_name": "knowledge-prod",
        "concurrency": 1,
        "journal_records": 40,
        "workspace": Path(__file__).parent.resolve(),
    }


def test_a_workspace_that_is_not_a_folder_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(StackStartError, match="DEVSTACK_WORKSPACE"):
        options_from_env({"DEVSTACK_WORKSPACE": str(tmp_path / "missing")})


@pytest.mark.parametrize(
    "environ",
    [
        {"DEVSTACK_PORT": "http"},
        {"DEVSTACK_MOTO_PORT": "70000"},
        {"DEVSTACK_SCHEDULE_SECONDS": "soon"},
        {"DEVSTACK_SCHEDULE_SECONDS": "0"},
        {"DEVSTACK_AWS": "cloud"},
        {"DEVSTACK_CONCURRENCY": "0"},
        {"DEVSTACK_JOURNAL_RECORDS": "0"},
        {"DEVSTACK_JOURNAL_RECORDS": "many"},
        {"LOCAL_ENGINE_WORKERS": "many"},
        {"LOCAL_ENGINE_WORKERS": "99"},
    ],
)
def test_a_bad_switch_is_refused_with_its_name(environ: dict[str, str]) -> None:
    with pytest.raises(StackStartError, match=next(iter(environ))):
        options_from_env(environ)


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A stack named ``deployed`` holding the template's tables; logical id -> physical name."""
    moto = MotoEmulator("127.0.0.1", 0)
    moto.start()
    for key, value in {
        "AWS_ENDPOINT_URL": moto.url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    try:
        moto.reset()
        tables = {
            logical_id: {
                "Type": resource["Type"],
                "Properties": {
                    k: v
                    for k, v in resource["Properties"].items()
                    if k in ("AttributeDefinitions", "KeySchema", "BillingMode", "GlobalSecondaryIndexes")
                },
            }
            for logical_id, resource in Template().of_type("AWS::DynamoDB::Table").items()
        }
        cloudformation = boto3.client("cloudformation")
        cloudformation.create_stack(
            StackName="deployed",
            TemplateBody=json.dumps(
                {"Parameters": {"StageName": {"Type": "String", "Default": "v1"}}, "Resources": tables}
            ),
        )
        resources = cloudformation.describe_stack_resources(StackName="deployed")["StackResources"]
        yield {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in resources}
    finally:
        moto.reset()
        moto.stop()


def test_real_aws_runs_the_functions_on_the_deployed_stacks_tables(deployed: dict[str, str], tmp_path: Path) -> None:
    stack = start_stack(
        state_dir=tmp_path, api_port=0, forager_port=0, forager_control_port=0, aws="real", stack_name="deployed"
    )
    try:
        assert stack.moto_url is None
        assert stack.env["CONFIG_TABLE"] == deployed["ConfigTable"] != "knowledge-local-ConfigTable"
        assert stack.env["PRINCIPALS_TABLE"] == deployed["PrincipalsTable"]
        assert stack.env["FORAGER_CREDENTIAL_PARAMETER"] == "/deployed/forager/credential"
        answer = httpx.get(
            f"{stack.url}/knowledge/status", headers={"Authorization": f"Bearer {stack.admin_token}"}, timeout=30
        )
        assert answer.status_code == 200
        assert answer.json()["data"]["enabled"] is False  # no settings seeded on a real stack
        assert stack.snapshot() is False
        principals = boto3.client("dynamodb").scan(TableName=deployed["PrincipalsTable"])["Items"]
        assert [p["name"]["S"] for p in principals] == ["local-admin"]
        assert (tmp_path / "admin-deployed.token").read_text().strip() == stack.admin_token
    finally:
        stack.stop()
    assert not (tmp_path / "aws-state.json").exists()


def test_real_aws_needs_the_stack_name(tmp_path: Path) -> None:
    with pytest.raises(StackStartError, match="DEVSTACK_STACK_NAME"):
        start_stack(state_dir=tmp_path, api_port=0, forager_port=0, forager_control_port=0, aws="real")


def test_a_port_in_use_stops_the_start_naming_the_variable_and_leaves_nothing_running(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        before = dict(os.environ)
        with pytest.raises(StackStartError, match="DEVSTACK_MOTO_PORT"):
            start_stack(state_dir=tmp_path, api_port=0, moto_port=port, forager_port=0, forager_control_port=0)
    assert dict(os.environ) == before
    stack = start_stack(
        state_dir=tmp_path, api_port=0, moto_port=0, forager_port=0, forager_control_port=0, persist=False
    )
    stack.stop()
