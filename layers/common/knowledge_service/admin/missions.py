"""``knowledge-admin role`` and ``knowledge-admin mission``: agent role contracts and missions.

    knowledge-admin --local role set researcher --tool knowledge_search --tool brain_get --project-role viewer
    knowledge-admin --local role show researcher
    knowledge-admin --local role list
    CREDENTIAL=$(knowledge-admin --local mission start falcon --role researcher --autonomy L1)
    knowledge-admin --local mission end "$CREDENTIAL"      # or the mission id

``mission start`` draws the credential, puts the real ``agent.mission.started`` event on the
bus (the local stack's under ``--local``) carrying only the credential's SHA-256, waits for
intake to record the mission, and prints the credential alone on stdout (the mission id on
stderr). ``mission end`` puts ``agent.mission.ended`` and waits for intake to stamp it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from knowledge_service.admin.target import required
from knowledge_service.domain import agent_missions as missions
from knowledge_service.errors import InternalError, NotFound
from knowledge_service.storage import aws
from knowledge_service.storage.agent_missions import AgentMissionStore, MissionRecord

WAIT_SECONDS = 30.0


def _store() -> AgentMissionStore:
    return AgentMissionStore(aws.dynamodb(), required("CONFIG_TABLE"))


def _bus() -> str:
    return required("EVENT_BUS_NAME")


def _role_set(args: argparse.Namespace, *_: Any) -> None:
    role = missions.role_contract(args.name, args.tool, args.project_role, args.mission_seconds)
    _store().put_role(role)
    print(json.dumps(role.model_dump(mode="json"), indent=2))


def _role_show(args: argparse.Namespace, *_: Any) -> None:
    role = _store().role(args.name)
    if role is None:
        raise NotFound(f"There is no role contract '{args.name}'.")
    print(json.dumps(role.model_dump(mode="json"), indent=2))


def _role_list(args: argparse.Namespace, *_: Any) -> None:
    for role in _store().roles():
        print(f"{role.name}\t{role.project_role.value}\t{role.mission_seconds}s\t{','.join(role.tools)}")


def _put(detail_type: str, detail: dict[str, Any]) -> str:
    answer = aws.client("events").put_events(
        Entries=[
            {
                "Source": missions.MISSION_SOURCE,
                "DetailType": detail_type,
                "EventBusName": _bus(),
                "Detail": json.dumps(detail),
            }
        ]
    )
    entry = answer["Entries"][0]
    if answer.get("FailedEntryCount") or "EventId" not in entry:
        raise InternalError(f"The bus refused the event: {entry.get('ErrorMessage', 'no reason given')}.")
    return str(entry["EventId"])


def _wait(mission_id: str, done: Any, what: str) -> MissionRecord:
    store = _store()
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        mission = store.by_id(mission_id)
        if mission is not None and done(mission):
            return mission
        time.sleep(0.2)
    raise InternalError(
        f"Intake did not {what} mission {mission_id} within {WAIT_SECONDS:.0f} s (is the bus rule there?)."
    )


def _mission_start(args: argparse.Namespace, *_: Any) -> None:
    store = _store()
    if store.role(args.role) is None:
        raise NotFound(f"There is no role contract '{args.role}' (knowledge-admin role set).")
    credential = missions.mint_credential()
    detail: dict[str, Any] = {
        "project": args.project,
        "role": args.role,
        "autonomy": args.autonomy,
        "credential_sha256": missions.credential_hash(credential),
    }
    if args.expires_in:
        detail["expires_in_seconds"] = args.expires_in
    missions.MissionStarted.model_validate(detail)  # refuse here what intake would refuse
    mission_id = _put(missions.STARTED, detail)
    mission = _wait(mission_id, lambda m: True, "record")
    print(credential)
    print(f"mission {mission.mission_id} until {mission.expires_at.isoformat()}", file=sys.stderr)


def _mission_end(args: argparse.Namespace, *_: Any) -> None:
    store = _store()
    given = args.mission.strip()
    mission = store.by_credential_hash(missions.credential_hash(given)) if missions.is_credential(given) else None
    mission = mission or store.by_id(given)
    if mission is None:
        raise NotFound("There is no such mission.")
    _put(missions.ENDED, {"mission_id": mission.mission_id})
    ended = _wait(mission.mission_id, lambda m: m.ended_at is not None, "end")
    print(f"mission {ended.mission_id} ended at {ended.ended_at.isoformat() if ended.ended_at else '?'}")


def _mission_show(args: argparse.Namespace, *_: Any) -> None:
    mission = _store().by_id(args.mission_id)
    if mission is None:
        raise NotFound("There is no such mission.")
    print(json.dumps(mission.model_dump(mode="json", exclude={"credential_hash"}), indent=2))


def add_parsers(nouns: Any) -> None:
    role = nouns.add_parser("role", help="agent role contracts (which MCP tools a role may dispatch)")
    roles = role.add_subparsers(dest="verb", required=True)
    setting = roles.add_parser("set", help="create or replace a role contract")
    setting.add_argument("name")
    setting.add_argument("--tool", action="append", default=[], help="an MCP tool the role may dispatch (repeat)")
    setting.add_argument("--project-role", default="viewer", choices=["viewer", "operator", "admin"])
    setting.add_argument("--mission-seconds", type=int, help="how long its missions last (default 8 h)")
    setting.set_defaults(run=_role_set)
    showing = roles.add_parser("show", help="one role contract")
    showing.add_argument("name")
    showing.set_defaults(run=_role_show)
    roles.add_parser("list", help="every role contract").set_defaults(run=_role_list)

    mission = nouns.add_parser("mission", help="agent missions (MCP): start one, end one")
    verbs = mission.add_subparsers(dest="verb", required=True)
    start = verbs.add_parser("start", help="start a mission; prints its credential alone on stdout")
    start.add_argument("project")
    start.add_argument("--role", required=True)
    start.add_argument("--autonomy", default="L0", choices=list(missions.AUTONOMY_LEVELS))
    start.add_argument("--expires-in", type=int, metavar="SECONDS", help="end it sooner than the role says")
    start.set_defaults(run=_mission_start)
    end = verbs.add_parser("end", help="end a mission, by its id or its credential")
    end.add_argument("mission", metavar="ID_OR_CREDENTIAL")
    end.set_defaults(run=_mission_end)
    show = verbs.add_parser("show", help="one mission as intake recorded it (never its credential)")
    show.add_argument("mission_id")
    show.set_defaults(run=_mission_show)
