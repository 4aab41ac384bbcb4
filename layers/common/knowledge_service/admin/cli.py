"""``knowledge-admin``: create projects, create/list/revoke principals, grant roles, set a
workspace's AI budget and an agent's autonomy, and call a verb through the front door.

It talks to the stores directly (it is the operator's tool, not an API client), so it
works against the running local stack from a second terminal and against a deployment:

    knowledge-admin --local principal create alice --permission read_knowledge --role falcon=viewer
    knowledge-admin --stack knowledge-prod principal list
    knowledge-admin --local subscription set active --capability forager.knowledge.curate
    knowledge-admin --local events --act resolve --project falcon

A new token is printed once, alone on stdout, so a script can capture it:

    TOKEN=$(knowledge-admin --local principal create ci-bot --kind agent --permission read_knowledge)

The verbs' CLI door: the same front door as ``POST /v/<verb>``, with the caller's token
(``KNOWLEDGE_TOKEN``, or ``--token-file``), the answer (or ``{error, code}``) on stdout:

    knowledge-admin --local verb knowledge.distil --workspace falcon --json '{"subject": ...}'
    knowledge-admin --local budget set falcon --limit 100 --spent 0
    knowledge-admin --local principal autonomy ci-bot L1

Where to find the tables: ``--local`` reads the local stack's ``<state dir>/env``: ``--state-dir``, else
``DEVSTACK_STATE_DIR`` (the variable ``make run`` reads), else ``.devstack``;
``--stack NAME`` asks CloudFormation for a deployed stack's tables; otherwise the
environment's ``PRINCIPALS_TABLE`` and ``PROJECTS_TABLE`` (and AWS's usual variables).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from knowledge_service.admin.missions import add_parsers as add_mission_parsers
from knowledge_service.admin.target import point_at, required
from knowledge_service.domain.verbs.catalogue import VERBS, Autonomy
from knowledge_service.errors import BadRequest, ServiceError
from knowledge_service.identity.principal import (
    AGENT_FORBIDDEN,
    Permission,
    Principal,
    PrincipalKind,
    ProjectRole,
    mint_token,
    token_hash,
)
from knowledge_service.observability import METRICS_DISABLED
from knowledge_service.storage import aws
from knowledge_service.storage.config_store import ConfigStore
from knowledge_service.storage.principals import PrincipalRecord, PrincipalStore
from knowledge_service.storage.projects import ProjectStore


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        point_at(args)
        principals = PrincipalStore(aws.dynamodb(), required("PRINCIPALS_TABLE"))
        projects = ProjectStore(aws.dynamodb(), required("PROJECTS_TABLE"))
        # A command line is no Lambda: its stdout is the operator's (a verb's answer is JSON there),
        # so the domain's metrics (knowledge_service.observability) print nothing while it runs.
        with _metrics_off():
            return int(args.run(args, principals, projects) or 0)
    except ServiceError as error:
        print(f"knowledge-admin: {error.message}", file=sys.stderr)
        return 2
    except SystemExit:
        raise
    except Exception as error:  # the operator sees one line, not a traceback
        why = aws.why_unreachable(error)
        print(f"knowledge-admin: {why or f'{type(error).__name__}: {error}'}", file=sys.stderr)
        return 1


@contextmanager
def _metrics_off() -> Iterator[None]:
    before = os.environ.get(METRICS_DISABLED)
    os.environ[METRICS_DISABLED] = "true"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(METRICS_DISABLED, None)
        else:
            os.environ[METRICS_DISABLED] = before


# ---------------------------------------------------------------------- commands
def _project_create(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> None:
    from knowledge_service.domain.identifiers import project_id

    record = projects.create(project_id(args.project_id, "project_id"), args.organization, args.name or "")
    print(f"project {record.project_id} created in organization {record.organization}", file=sys.stderr)


def _project_list(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> None:
    rows = [p.model_dump(mode="json") for p in projects.all()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        print(f"{row['project_id']}\t{row['organization']}\t{row['name']}")


def _autonomy(kind: PrincipalKind, value: str | None) -> str | None:
    """An agent's autonomy level (L0, L1, L2; none is L0); a human has none to set."""
    if value is None:
        return None
    if kind is not PrincipalKind.AGENT:
        raise BadRequest("--autonomy", "only an agent has an autonomy level; a human has none to check.")
    return Autonomy[value].name


def _subscription_set(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> None:
    from knowledge_service.domain.commerce import PAID_CAPABILITIES
    from knowledge_service.models import Subscription, SubscriptionRecord

    unknown = sorted(set(args.capability) - PAID_CAPABILITIES)
    if unknown:
        raise BadRequest("--capability", f"{', '.join(unknown)} is not a paid capability of the catalog.")
    record = SubscriptionRecord(state=Subscription(args.state), capabilities=tuple(sorted(set(args.capability))))
    saved = _config().save_subscription(record, os.environ.get("USER") or "knowledge-admin")
    print(json.dumps(saved.model_dump(mode="json"), indent=2))
    print("containers read the subscription again within 30 seconds", file=sys.stderr)


def _subscription_show(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> None:
    print(json.dumps(_config().subscription().model_dump(mode="json"), indent=2))


def _events(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> None:
    from knowledge_service.domain import event_log
    from knowledge_service.storage.event_log import EventLog

    log = EventLog(aws.dynamodb(), required("EVENT_LOG_TABLE"))
    answer = event_log.page(log, act=args.act, project=args.project, limit=args.limit, cursor=args.cursor)
    if args.json:
        print(answer.model_dump_json(indent=2))
        return
    for row in answer.events:
        payload = event_log._numbers(row.payload)
        what = " ".join(f"{k}={v}" for k, v in payload.items() if k not in ("project", "knowledge_base"))
        where = f"{payload.get('project') or '(default)'}->{payload.get('knowledge_base', '')}"
        print(f"{row.at.isoformat()}\t{row.event_type}\t{row.actor}\t{where}\t{what}")
    if answer.next_cursor:
        print(f"more: --cursor {answer.next_cursor}", file=sys.stderr)


def _migrate(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> None:
    from knowledge_service.storage.migrations import MigrationTables, migrate

    moved = migrate(aws.dynamodb(), MigrationTables.named_by(required))
    print(json.dumps(moved) if args.json else "\n".join(f"{step}\t{n} moved" for step, n in moved.items()))


def _config() -> ConfigStore:
    return ConfigStore(aws.dynamodb(), required("CONFIG_TABLE"), required("PROJECTS_TABLE"))


DEFAULT_GRANTED = frozenset({Permission.READ_KNOWLEDGE, Permission.MANAGE_KNOWLEDGE})
"""Seed 000, Permissions: "Both default to granted at the permission layer" (knowledge's own gate,
knowledge_enabled, is the outer one). An agent's default holds only what an agent may hold."""


def _granted(kind: PrincipalKind, given: list[str], withheld: list[str]) -> frozenset[Permission]:
    """What a new principal holds: the defaults an agent may hold, less ``--without``, plus ``--permission``."""
    defaults = DEFAULT_GRANTED - AGENT_FORBIDDEN if kind is PrincipalKind.AGENT else DEFAULT_GRANTED
    explicit = {Permission(p) for p in given}
    clash = explicit & {Permission(p) for p in withheld}
    if clash:
        names = ", ".join(sorted(p.value for p in clash))
        raise BadRequest("--without", f"withholds {names}, which --permission grants.")
    return frozenset((defaults - {Permission(p) for p in withheld}) | explicit)


def _principal_create(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> None:
    kind = PrincipalKind(args.kind)
    principal = Principal(
        name=args.name,
        kind=kind,
        permissions=_granted(kind, args.permission, args.without),
        project_roles=_roles(args.role, projects),
        organizations=frozenset(args.owns),
        workspace_roles=_pairs(args.workspace_role, "--workspace-role"),
        autonomy=_autonomy(PrincipalKind(args.kind), args.autonomy),
    )
    _refuse_agent_management(principal)
    token = mint_token()
    principals.create(principal, token_hash(token))
    print(f"principal {principal.name} created; its token is shown once, on stdout", file=sys.stderr)
    print(token)


def _principal_list(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> None:
    records = [r for r in principals.all() if args.all or r.active]
    if args.json:
        print(json.dumps([_public(r) for r in records], indent=2))
        return
    for record in records:
        roles = ",".join(f"{p}={r.value}" for p, r in sorted(record.project_roles.items())) or "-"
        permissions = ",".join(sorted(p.value for p in record.permissions)) or "-"
        state = "active" if record.active else f"revoked {record.revoked_at:%Y-%m-%d}"
        print(f"{record.name}\t{record.kind.value}\t{permissions}\t{roles}\t{state}")


def _principal_revoke(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> None:
    record = principals.revoke(args.name)
    print(f"principal {record.name} revoked; its token no longer authenticates", file=sys.stderr)


def _principal_grant(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> None:
    record = principals.active_by_name(args.name)
    changed = record.model_copy(
        update={
            "permissions": record.permissions | {Permission(p) for p in args.permission},
            "project_roles": {**record.project_roles, **_roles(args.role, projects)},
            "organizations": record.organizations | set(args.owns),
            "workspace_roles": {**record.workspace_roles, **_pairs(args.workspace_role, "--workspace-role")},
            "autonomy": _autonomy(record.kind, args.autonomy) if args.autonomy is not None else record.autonomy,
        }
    )
    _refuse_agent_management(changed)
    principals.replace(changed)
    print(f"principal {record.name} updated", file=sys.stderr)


def _principal_autonomy(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> None:
    record = principals.active_by_name(args.name)
    principals.replace(record.model_copy(update={"autonomy": _autonomy(record.kind, args.level)}))
    print(f"agent {record.name} now acts at autonomy {args.level}", file=sys.stderr)


def _budget_set(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> None:
    from decimal import Decimal, InvalidOperation

    from knowledge_service.domain.identifiers import project_id

    workspace = project_id(args.workspace, "workspace")
    if projects.get(workspace) is None:
        raise BadRequest("workspace", f"there is no project '{workspace}'.")
    amounts: dict[str, Decimal | None] = {}
    for option, value in (("--limit", args.limit), ("--spent", args.spent)):
        try:
            amount = None if value is None else Decimal(value)
        except InvalidOperation as error:
            raise BadRequest(option, f"'{value}' is not a number.") from error
        if amount is not None and (not amount.is_finite() or amount < 0):
            raise BadRequest(option, "must be a finite number, zero or more.")
        amounts[option] = amount
    budget = _verb_stores(projects).verbs.set_budget(workspace, amounts["--limit"], amounts["--spent"])
    print(json.dumps({"workspace": workspace, "limit": str(budget.limit), "spent": str(budget.spent)}))


def _budget_show(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> None:
    budget = _verb_stores(projects).verbs.budget(args.workspace)
    if budget is None:
        print(json.dumps({"workspace": args.workspace, "limit": None, "spent": None}))
        return
    exceeded = budget.exceeded
    print(
        json.dumps(
            {"workspace": args.workspace, "limit": str(budget.limit), "spent": str(budget.spent), "exceeded": exceeded}
        )
    )


def _verb(args: argparse.Namespace, principals: PrincipalStore, projects: ProjectStore) -> int:
    """The CLI door: the caller's token, then exactly the front door ``POST /v/<verb>`` takes."""
    from knowledge_service.domain.verbs.door import Call, invoke, verb_code
    from knowledge_service.identity.authentication import principal_for

    if args.token_file:
        token = Path(args.token_file).read_text().strip()
    else:
        token = os.environ.get("KNOWLEDGE_TOKEN", "").strip()
    if not token:
        raise BadRequest("KNOWLEDGE_TOKEN", "is not set; the verb is called with the caller's token (or --token-file).")
    call = Call(
        verb=args.verb,
        principal=principal_for(f"Bearer {token}", principals),
        workspace=args.workspace,
        body=args.json.encode("utf-8"),
        break_glass=args.break_glass,
        door="cli",
    )
    try:
        answer = invoke(_verb_stores(projects), call)
    except ServiceError as refused:
        print(json.dumps({"error": refused.message, "code": verb_code(refused)}))
        return 2 if refused.status < 500 else 1
    print(answer.model_dump_json(by_alias=True))
    return 0


def _verb_stores(projects: ProjectStore) -> Any:
    from knowledge_service.domain.verbs.door import Stores
    from knowledge_service.storage.verbs import VerbAudit, VerbStore

    dynamodb = aws.dynamodb()
    verbs = VerbStore(dynamodb, required("VERBS_TABLE"), aws.client("s3"), os.environ.get("ARCHIVE_BUCKET", ""))
    return Stores(projects, verbs, VerbAudit(dynamodb, required("VERB_AUDIT_TABLE")))


# ---------------------------------------------------------------------- helpers
def _refuse_agent_management(principal: Principal) -> None:
    forbidden = principal.permissions & AGENT_FORBIDDEN
    if principal.kind is PrincipalKind.AGENT and forbidden:
        names = ", ".join(sorted(p.value for p in forbidden))
        raise BadRequest(
            "--permission", f"an agent never holds {names}: deciding scope, settings or spending is an operator's act."
        )


def _roles(values: list[str], projects: ProjectStore) -> dict[str, ProjectRole]:
    roles = {}
    for project, role in _pairs(values, "--role").items():
        if projects.get(project) is None:
            raise BadRequest("--role", f"there is no project '{project}' (create it with 'project create').")
        try:
            roles[project] = ProjectRole(role)
        except ValueError as error:
            raise BadRequest("--role", f"'{role}' is not admin, operator or viewer.") from error
    return roles


def _pairs(values: list[str], option: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, sep, item = value.partition("=")
        if not sep or not key or not item:
            raise BadRequest(option, f"'{value}' is not KEY=VALUE.")
        pairs[key] = item
    return pairs


def _public(record: PrincipalRecord) -> dict[str, object]:
    return record.model_dump(mode="json", exclude={"token_hash"})


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="knowledge-admin", description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true", help="the running local stack (make run)")
    where.add_argument("--stack", metavar="NAME", help="a deployed stack, found through CloudFormation")
    parser.add_argument(
        "--state-dir",
        metavar="DIR",
        help="with --local: the local stack's state dir (default: $DEVSTACK_STATE_DIR, else .devstack)",
    )
    nouns = parser.add_subparsers(dest="noun", required=True)

    project = nouns.add_parser("project", help="ANTHILL projects").add_subparsers(dest="verb", required=True)
    create = project.add_parser("create", help="create a project in an organization")
    create.add_argument("project_id")
    create.add_argument("--organization", required=True)
    create.add_argument("--name")
    create.set_defaults(run=_project_create)
    listing = project.add_parser("list", help="list projects")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=_project_list)

    principal = nouns.add_parser("principal", help="principals and their tokens").add_subparsers(
        dest="verb", required=True
    )
    for verb, helptext, run in (
        ("create", "create a principal and print its token once", _principal_create),
        ("grant", "add permissions, roles or ownership to a principal", _principal_grant),
    ):
        sub = principal.add_parser(verb, help=helptext)
        sub.add_argument("name")
        if verb == "create":
            sub.add_argument("--kind", choices=[k.value for k in PrincipalKind], default="human")
            sub.add_argument(
                "--without",
                action="append",
                default=[],
                choices=[p.value for p in DEFAULT_GRANTED],
                help="withhold a permission granted by default (read_knowledge, manage_knowledge)",
            )
        sub.add_argument("--permission", action="append", default=[], choices=[p.value for p in Permission])
        sub.add_argument(
            "--role",
            action="append",
            default=[],
            metavar="PROJECT=ROLE",
            help="a project role: admin, operator or viewer",
        )
        sub.add_argument("--owns", action="append", default=[], metavar="ORGANIZATION")
        sub.add_argument("--workspace-role", action="append", default=[], metavar="WORKSPACE=ROLE")
        sub.add_argument("--autonomy", choices=[a.name for a in Autonomy], help="an agent's autonomy level (the verbs)")
        sub.set_defaults(run=run)
    autonomy = principal.add_parser("autonomy", help="set an agent's autonomy level (L0 read, L1 write, L2 sensitive)")
    autonomy.add_argument("name")
    autonomy.add_argument("level", choices=[a.name for a in Autonomy])
    autonomy.set_defaults(run=_principal_autonomy)
    listing = principal.add_parser("list", help="list principals (never their tokens)")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--all", action="store_true", help="include revoked principals")
    listing.set_defaults(run=_principal_list)
    revoke = principal.add_parser("revoke", help="revoke a principal's token")
    revoke.add_argument("name")
    revoke.set_defaults(run=_principal_revoke)

    _verbs_parsers(nouns)
    add_mission_parsers(nouns)
    _subscription_and_events_parsers(nouns)
    return parser


def _subscription_and_events_parsers(nouns: Any) -> None:
    subscription = nouns.add_parser("subscription", help="the colony's Forager subscription").add_subparsers(
        dest="verb", required=True
    )
    setting = subscription.add_parser("set", help="set the subscription's state and paid capabilities")
    setting.add_argument("state", choices=["unenrolled", "active", "lapsed"])
    setting.add_argument("--capability", action="append", default=[], metavar="CAPABILITY")
    setting.set_defaults(run=_subscription_set)
    showing = subscription.add_parser("show", help="the subscription as the functions read it")
    showing.set_defaults(run=_subscription_show)

    events = nouns.add_parser("events", help="the event log: who decided what, newest first")
    events.add_argument("--act", help="an event type or a curation act (resolve, merge, ...)")
    events.add_argument("--project", help="only this ANTHILL project's acts")
    events.add_argument("--limit", type=int, default=50)
    events.add_argument("--cursor")
    events.add_argument("--json", action="store_true")
    events.set_defaults(run=_events)

    migrating = nouns.add_parser(
        "migrate",
        help="move items saved under keys this version no longer reads (idempotent; run after each deploy)",
    )
    migrating.add_argument("--json", action="store_true")
    migrating.set_defaults(run=_migrate)


def _verbs_parsers(nouns: Any) -> None:
    """``budget`` and ``verb``: the verbs' operator commands."""
    budget = nouns.add_parser("budget", help="a workspace's AI budget (the verbs' budget gate)").add_subparsers(
        dest="verb", required=True
    )
    setting = budget.add_parser("set", help="set a workspace's AI budget limit and/or amount spent")
    setting.add_argument("workspace")
    setting.add_argument("--limit")
    setting.add_argument("--spent")
    setting.set_defaults(run=_budget_set)
    showing = budget.add_parser("show", help="a workspace's AI budget")
    showing.add_argument("workspace")
    showing.set_defaults(run=_budget_show)

    verb = nouns.add_parser("verb", help="call a knowledge.* verb through the front door with your token")
    verb.add_argument("verb", choices=sorted(VERBS))
    verb.add_argument("--workspace", required=True, help="the workspace (an ANTHILL project id)")
    verb.add_argument("--json", default="{}", help="the verb's input, as JSON (camelCase names)")
    verb.add_argument("--break-glass", metavar="REASON", help="the workspace Owner's audited break-glass")
    verb.add_argument("--token-file", help="read the caller's token from this file (default: $KNOWLEDGE_TOKEN)")
    verb.set_defaults(run=_verb)


if __name__ == "__main__":
    sys.exit(main())
