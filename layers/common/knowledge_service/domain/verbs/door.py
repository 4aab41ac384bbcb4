"""The front door: the one path every verb call takes, from HTTP and from the CLI alike.

In order, each refusal a :class:`ServiceError` the edge renders as ``{error, code}``:

1. authentication: a principal, or ``Unauthenticated``;
2. the workspace (``?workspace=<project id>``): well formed, or ``BadInput``;
3. the verb's capability, as the installation permission it takes (``knowledge.read`` →
   ``read_knowledge``, ``knowledge.write`` → ``write_knowledge``, ``knowledge.admin`` →
   ``manage_knowledge``, which an agent never holds), or ``Forbidden``;
4. scope: the workspace exists (``NotFound``) and the caller stands in it (``Forbidden``);
5. permission: Member (any role on the project), Admin (its admin role) or Owner (owner
   of its organization) as the verb takes, or ``Forbidden``;
6. risk class against an agent's autonomy (read L0, write L1, sensitive L2; an agent with
   none is L0; a human has none to check), or ``Forbidden``;
7. the body: at most ``MAX_BODY`` bytes, within the edge's bounded reader's depth and number
   bounds (the HTTP door hands it in as ``Call.bounds``), then parsed by the verb's model, or
   ``BadInput``;
8. the AI budget, for a budget-gated verb: refused (``BudgetExceeded``) while spent ≥ limit,
   unless the workspace's Owner (a human) sends ``X-Break-Glass: <reason>``.

Every call, allowed or refused, writes its audit row before the answer: a refusal at the
door is one row with its code; an admitted call writes its row *before* the verb runs (a
failed audit write means the verb never runs) and concludes it with the outcome after.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from knowledge_service import observability
from knowledge_service.domain import identifiers
from knowledge_service.domain.verbs import models
from knowledge_service.domain.verbs.actions import ACTIONS, Context
from knowledge_service.domain.verbs.catalogue import VERBS, Autonomy, Verb, WorkspaceRole
from knowledge_service.errors import (
    BadRequest,
    BudgetExceeded,
    NotFound,
    PermissionDenied,
    ServiceError,
    Unauthenticated,
)
from knowledge_service.identity.principal import Principal, PrincipalKind, ProjectRole
from knowledge_service.models import ProjectRecord
from knowledge_service.storage.projects import ProjectStore
from knowledge_service.storage.verbs import VerbAudit, VerbStore

MAX_BODY = 2 * 1024 * 1024
"""Bytes of request body read at all (a capture's body is at most 1 MiB of UTF-8, JSON-escaped)."""
BREAK_GLASS_MAX = 500

VERB_CODES = {
    400: "BadInput",
    401: "Unauthenticated",
    403: "Forbidden",
    404: "NotFound",
    409: "Conflict",
    413: "BadInput",
    429: "BudgetExceeded",
}


AUTONOMY_REFUSED = "autonomy_insufficient"
"""The code of an agent's refusal for autonomy (the wire says ``Forbidden``; the metric tells it apart)."""


def _refusal_reason(error: ServiceError) -> str:
    if error.status == 429:
        return "budget"
    if error.code == AUTONOMY_REFUSED:
        return "autonomy"
    return verb_code(error)


def verb_code(error: ServiceError) -> str:
    """The verbs' wire code for any error of the one error model."""
    return VERB_CODES.get(error.status, "Internal")


@dataclass(frozen=True)
class Stores:
    projects: ProjectStore
    verbs: VerbStore
    audit: VerbAudit


@dataclass(frozen=True)
class Call:
    """One verb call as either door received it."""

    verb: str
    principal: Principal | None
    workspace: str | None
    body: bytes
    break_glass: str | None = None
    door: str = "http"  # http | cli
    read_with_caller: Mapping[str, ProjectRecord | None] | None = None
    """The workspace's project record as the HTTP door read it in one BatchGetItem with the
    caller's principal (None there: no such project), so the door does not read it again."""
    bounds: Callable[[bytes], object] | None = None
    """The edge's bounded reader (``edge.body.read_json``), run on the body before the model
    parses it: a body too deep, too large or holding a number too long is refused by it."""


def invoke(stores: Stores, call: Call) -> models.Answer:
    verb = VERBS[call.verb]
    row: dict[str, Any] = {
        "workspace": _audit_key(call.workspace),
        "recorded": f"{datetime.now(UTC).isoformat()}#{secrets.token_hex(6)}",
        "verb": verb.name,
        "door": call.door,
        "principal": call.principal.name if call.principal else "-",
        "kind": call.principal.kind.value if call.principal else None,
    }
    try:
        request, role = _admit(stores, verb, call)
        if verb.budget_gated:
            row["break_glass"] = _budget_gate(stores, call, role)
    except ServiceError as refused:
        stores.audit.record({**row, "decision": "refused", "code": verb_code(refused), "message": refused.message})
        observability.count_outcome("VerbCallsRefused", _refusal_reason(refused))
        raise
    stores.audit.record({**row, "decision": "allowed", "role": role.name, "detail": _detail(request)})
    assert call.principal is not None and call.workspace is not None  # admitted: both were checked
    context = Context(stores.verbs, call.workspace, call.principal.name)
    try:
        answer = ACTIONS[verb.name](context, request)
    except ServiceError as failed:
        stores.audit.conclude(row["workspace"], row["recorded"], {"outcome": verb_code(failed)})
        raise
    stores.audit.conclude(row["workspace"], row["recorded"], {"outcome": "ok", **_result(answer)})
    return answer


def _admit(stores: Stores, verb: Verb, call: Call) -> tuple[models.VerbModel, WorkspaceRole]:
    principal = call.principal
    if principal is None:
        raise Unauthenticated("A valid bearer token is required.")
    if not call.workspace:
        raise BadRequest("workspace", "is required (?workspace=<project id>).")
    workspace = identifiers.project_id(call.workspace, "workspace")
    permission = verb.installation_permission
    if not principal.holds(permission):
        raise PermissionDenied(f"{verb.name} takes the {verb.capability.value} capability ({permission.value}).")
    read = call.read_with_caller
    project = read[workspace] if read is not None and workspace in read else stores.projects.get(workspace)
    if project is None:
        raise NotFound(f"workspace: there is no workspace '{workspace}'.")
    role = standing(principal, workspace, project.organization)
    if role is None:
        raise PermissionDenied(f"You hold no role in workspace '{workspace}'.")
    if role < verb.permission:
        raise PermissionDenied(f"{verb.name} takes {verb.permission.name.title()} in the workspace.")
    if principal.kind is PrincipalKind.AGENT:
        level = autonomy_of(principal)
        if level < verb.risk.autonomy:
            raise PermissionDenied(
                f"{verb.name} is {verb.risk.value}: it takes autonomy {verb.risk.autonomy.name};"
                f" this agent is {level.name}.",
                code=AUTONOMY_REFUSED,
            )
    return parse(verb, call.body, call.bounds), role


def parse(verb: Verb, body: bytes, bounds: Callable[[bytes], object] | None = None) -> models.VerbModel:
    """The verb's input, bounded before it is parsed; a refusal names the camelCase field."""
    if len(body) > MAX_BODY:
        raise BadRequest("body", f"is larger than {MAX_BODY} bytes.")
    if bounds is not None and body:
        try:
            bounds(body)  # its own refusal (a BadRequest naming body) stands as it is
        except (UnicodeDecodeError, ValueError):
            raise BadRequest("body", "is not valid JSON.") from None
    try:
        return models.INPUTS[verb.name].model_validate_json(body or b"{}")
    except ValidationError as invalid:
        raise _bad_input(invalid) from None


def _bad_input(invalid: ValidationError) -> BadRequest:
    errors = invalid.errors()
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    field = ".".join(str(p) for p in first["loc"]) or "body"
    if first["type"] == "extra_forbidden":
        return BadRequest(
            field if field.isidentifier() and len(field) <= 64 else "body",
            "is not a field of this verb (fields are camelCase).",
        )
    if first["type"] == "json_invalid":
        return BadRequest("body", "is not valid JSON.")
    if first["type"] in {"model_type", "model_attributes_type"}:
        return BadRequest("body", "must be a JSON object.")
    if first["type"] == "missing":
        return BadRequest(field, "is required.")
    message = str(first.get("msg", "is not valid")).removeprefix("Value error, ")
    return BadRequest(field, message[:1].lower() + message[1:])


def standing(principal: Principal, workspace: str, organization: str) -> WorkspaceRole | None:
    """Member is any role on the project, Admin its admin role, Owner its organization's owner."""
    if principal.owns(organization):
        return WorkspaceRole.OWNER
    role = principal.role_in(workspace)
    if role is ProjectRole.ADMIN:
        return WorkspaceRole.ADMIN
    return WorkspaceRole.MEMBER if role is not None else None


def autonomy_of(principal: Principal) -> Autonomy:
    """An agent's autonomy level; none (or one that is not L0, L1, L2) is the least, L0."""
    try:
        return Autonomy[(principal.autonomy or "L0").upper()]
    except KeyError:
        return Autonomy.L0


def _budget_gate(stores: Stores, call: Call, role: WorkspaceRole) -> str | None:
    """None when the budget allows the call; the break-glass reason when the Owner used it."""
    reason = (call.break_glass or "").strip() or None
    if reason is not None:
        if len(reason) > BREAK_GLASS_MAX:
            raise BadRequest("X-Break-Glass", f"is at most {BREAK_GLASS_MAX} characters.")
        assert call.principal is not None
        if role is not WorkspaceRole.OWNER or call.principal.kind is PrincipalKind.AGENT:
            raise PermissionDenied("Break-glass is the workspace Owner's (a human's) alone.")
    budget = stores.verbs.budget(_audit_key(call.workspace))
    if budget is None or not budget.exceeded:
        return None
    if reason is None:
        raise BudgetExceeded(
            f"Workspace '{budget.workspace}' has spent its AI budget ({budget.spent} of {budget.limit}); "
            "its Owner may break glass with X-Break-Glass: <reason>."
        )
    return reason


def _audit_key(workspace: str | None) -> str:
    return workspace if workspace and well_formed(workspace) else "-"


def well_formed(workspace: str) -> bool:
    try:
        identifiers.project_id(workspace, "workspace")
    except BadRequest:
        return False
    return True


def _detail(request: models.VerbModel) -> dict[str, Any]:
    """What the audit keeps of the input: ids and decisions, never bodies or quotes."""
    kept = request.model_dump(
        by_alias=True, include={"knowledge_id", "superseded_by_id", "capture_id", "decision", "reason", "status"}
    )
    return {k: (v.value if hasattr(v, "value") else v) for k, v in kept.items() if v is not None}


def _result(answer: models.Answer) -> dict[str, Any]:
    found = getattr(answer, "knowledge_id", None) or getattr(answer, "capture_id", None)
    status = getattr(answer, "status", None)
    return {"result_id": found, "result_status": status.value if status is not None else None}
