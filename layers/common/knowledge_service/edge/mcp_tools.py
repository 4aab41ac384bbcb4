"""The agent tools: what each takes (a pydantic model, so its JSON Schema), and what it calls.

Every tool calls the same function its HTTP route calls: the knowledge reads through
``domain.scope.resolve_scope`` (the same scope resolution, the same refusals), the brain tools
through ``domain.pages.service.Pages`` and the page store's session brain, the verb tools
through the verbs' one front door (``domain.verbs.door.invoke``, door ``mcp``).

Scope is the mission's, never an argument's: every model is ``extra="forbid"`` and none has a
project, scope or knowledge base field, so an argument naming one is refused as unknown.
Order of the checks, each refusal a tool error ``{"error", "code"}``: the tool is in the
mission's role (``tool_not_in_role``); a tier 2 tool was discovered (``tool_not_discovered``);
the mission's autonomy covers the tool's risk (``permission_denied``); the arguments parse
(``bad_request``); then the tool runs with its own refusals (``knowledge_disabled``, ...).
Each call leaves one audit row (mission, tool, allowed/refused, code) and never an argument.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from aws_lambda_powertools import Logger
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from knowledge_service.base_model import Model
from knowledge_service.domain import identifiers, reads as domain
from knowledge_service.domain.agent_missions import DISCOVER_TOOL, TOOLS, autonomy, principal_of
from knowledge_service.domain.pages import paths, search as page_query
from knowledge_service.domain.pages.page_search import PageSearch
from knowledge_service.domain.pages.service import MAX_HISTORY_ROWS, MAX_LISTING, Pages, Written
from knowledge_service.domain.pages.session_brain import SessionBrain
from knowledge_service.domain.pages.tree import walk
from knowledge_service.domain.scope import Standing, resolve_scope
from knowledge_service.domain.verbs import door
from knowledge_service.domain.verbs.models import INPUTS
from knowledge_service.edge.routes.pages import Promote as PromoteBody, PutPage, RevertPage
from knowledge_service.errors import BadRequest, NotFound, PermissionDenied, ServiceError
from knowledge_service.identity.principal import Principal
from knowledge_service.observability import count_outcome
from knowledge_service.runtime import runtime
from knowledge_service.storage.agent_missions import MissionRecord

logger = Logger(child=True)
RESOURCE_SCHEME = "agenthub"
SCOPE_WORDS = ("project", "project_id", "scope", "knowledge_base", "workspace")


class _Args(Model):
    model_config = ConfigDict(extra="forbid")


def _without(model: type[BaseModel], *names: str, **extra: Any) -> type[BaseModel]:
    """``model``'s fields less ``names`` (the scope fields), plus ``extra``, unknown fields refused."""
    fields: dict[str, Any] = {n: (f.annotation, f) for n, f in model.model_fields.items() if n not in names}
    return create_model(  # type: ignore[call-overload,no-any-return]
        f"{model.__name__}Tool", __base__=_Args, **fields, **extra
    )


# ------------------------------------------------------------------------------ knowledge
class SearchArgs(_Args):
    q: str = Field(min_length=1, max_length=domain.QUERY_MAX, pattern=identifiers.NOT_BLANK_PATTERN)
    limit: int = Field(default=domain.SEARCH_LIMIT_DEFAULT, ge=domain.SEARCH_LIMIT_MIN, le=domain.SEARCH_LIMIT_MAX)
    include_historical: bool = False


RetrieveArgs = _without(domain.RetrieveRequest, "project")


class StatementIdArgs(_Args):
    id: str = Field(pattern=identifiers.record_pattern("ki"))


class EntitiesArgs(_Args):
    name: str | None = Field(default=None, max_length=domain.QUERY_MAX, pattern=identifiers.NOT_BLANK_PATTERN)
    q: str | None = Field(default=None, max_length=domain.QUERY_MAX)
    type: str | None = Field(default=None, max_length=200)
    sort: Literal["name", "mentions", "confidence"] = "name"
    page: int = Field(default=1, ge=1, le=domain.PAGE_MAX)
    page_size: int = Field(default=domain.PEOPLE_PAGE_SIZE_DEFAULT, ge=1, le=domain.PAGE_SIZE_MAX)


class StatementsArgs(_Args):
    q: str | None = Field(default=None, max_length=domain.QUERY_MAX)
    type: str | None = Field(default=None, max_length=200)
    status: str | None = Field(default=None, max_length=200)
    support: str | None = Field(default=None, max_length=200)
    review_status: str | None = Field(default=None, max_length=200)
    source_id: str | None = Field(default=None, pattern=identifiers.record_pattern("src"))
    entity_id: str | None = Field(default=None, pattern=identifiers.record_pattern("ent"))
    page: int = Field(default=1, ge=1, le=domain.PAGE_MAX)
    page_size: int = Field(default=domain.STATEMENTS_PAGE_SIZE_DEFAULT, ge=1, le=domain.PAGE_SIZE_MAX)


class ConflictsArgs(_Args):
    status: Literal["open", "resolved", "dismissed", "decided", "all"] = "open"


class NoArgs(_Args):
    pass


# ------------------------------------------------------------------------------ brain
Store = Literal["project", "session"]
PathArg = Annotated[str, Field(min_length=1, max_length=1024)]


StoreArg = Annotated[
    Store,
    Field(description='"session" (the default): this mission\'s own session brain; "project": the knowledge base'),
]


class BrainGetArgs(_Args):
    path: PathArg
    store: StoreArg = "session"
    version: str | None = Field(default=None, max_length=80)


BrainPutArgs = _without(PutPage, path=(PathArg, ...), store=(StoreArg, "session"))


class BrainListArgs(_Args):
    prefix: str | None = Field(default=None, max_length=1024)
    store: StoreArg = "session"
    limit: int = Field(default=100, ge=1, le=MAX_LISTING)
    after: str | None = Field(default=None, max_length=1024, description="The last path of the previous listing")


class BrainDeleteArgs(_Args):
    path: PathArg
    store: StoreArg = "session"
    if_version: str | None = Field(default=None, max_length=80)


BrainPromoteArgs = _without(PromoteBody, "from_session_id")
BrainRevertArgs = _without(RevertPage, path=(PathArg, ...))


class BrainHistoryArgs(_Args):
    path: PathArg
    before: str | None = Field(default=None, max_length=64)
    limit: int = Field(default=50, ge=1, le=MAX_HISTORY_ROWS)


class BrainSearchArgs(_Args):
    q: str = Field(
        min_length=1, max_length=page_query.MAX_QUERY_CHARS, description="The words to find (all must match)"
    )
    tag: str | None = Field(default=None, max_length=200)
    type: str | None = Field(default=None, max_length=200)
    status: str | None = Field(default=None, max_length=200)
    offset: int = Field(default=0, ge=0, le=page_query.MAX_OFFSET)
    limit: int = Field(default=page_query.DEFAULT_LIMIT, ge=1, le=page_query.MAX_LIMIT)


class DiscoverArgs(_Args):
    name: str | None = Field(default=None, max_length=64, description="One tier 2 tool to load; none lists them")


# ------------------------------------------------------------------------------ the calls
@dataclass(frozen=True)
class Caller:
    mission: MissionRecord
    principal: Principal

    @property
    def actor(self) -> str:
        return f"agent:{self.principal.name}"


def _reader(caller: Caller) -> domain.Reader:
    rt = runtime()
    scope = resolve_scope(rt.env, rt.config, caller.principal, caller.mission.project, Standing.READ)
    return domain.Reader(scope, rt.upstream.client(scope.settings))


def _pages(caller: Caller) -> Pages:
    rt = runtime()
    return Pages(rt.pages, caller.mission.project, rt.events)


def _dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True) if isinstance(value, BaseModel) else value


def _written(written: Written, store: str = "project") -> dict[str, Any]:
    return {
        "ok": True,
        "path": written.path,
        "store": store,
        "version": written.version,
        "size_bytes": written.size_bytes,
        "lint": written.lint,
        "warnings": written.warnings,
        "changed": written.changed,
    }


def _search(c: Caller, a: Any) -> Any:
    return domain.search(_reader(c), a.q, a.limit, a.include_historical)


def _retrieve(c: Caller, a: Any) -> Any:
    return domain.retrieve(_reader(c), domain.RetrieveRequest.model_validate(a.model_dump()))


def _item(c: Caller, a: Any) -> Any:
    return domain.item(_reader(c), identifiers.record_id(a.id, "ki"))


def _evidence(c: Caller, a: Any) -> Any:
    return domain.evidence(_reader(c), identifiers.record_id(a.id, "ki"))


def _entities(c: Caller, a: Any) -> Any:
    types = identifiers.forager_words(a.type, "type")
    return domain.entities(_reader(c), name=a.name, q=a.q, types=types, sort=a.sort, page=a.page, page_size=a.page_size)


def _statements(c: Caller, a: Any) -> Any:
    filters = {
        name: ",".join(identifiers.forager_words(getattr(a, name), name))
        for name in ("type", "status", "support", "review_status")
    }
    if a.source_id is not None:
        filters["source_id"] = a.source_id
    if a.entity_id is not None:
        filters["entity_id"] = a.entity_id
    if a.q is not None and a.q.strip():
        filters["q"] = a.q.strip()
    return domain.statements(_reader(c), filters, a.page, a.page_size)


def _conflicts(c: Caller, a: Any) -> Any:
    return domain.conflicts(_reader(c), a.status)


def _sources(c: Caller, a: Any) -> Any:
    return domain.sources(_reader(c))


def _session(c: Caller) -> SessionBrain:
    """The mission's own session brain: the session id is the mission id."""
    return SessionBrain(runtime().pages, c.mission.mission_id, c.mission.expires_at)


def _brain_get(c: Caller, a: Any) -> Any:
    if a.store == "session":
        return _session(c).get(a.path)
    pages = _pages(c)
    answer = pages.get_version(a.path, a.version) if a.version else pages.get(a.path)
    return {**answer, "store": "project"}


def _brain_put(c: Caller, a: Any) -> Any:
    if a.store == "session":
        if a.if_version is not None:
            raise BadRequest("if_version", "guards a page's write; a session brain entry has no versions.")
        return _session(c).put(a.path, a.content)
    return _written(_pages(c).put(a.path, a.content, a.if_version, actor=c.actor))


def _brain_list(c: Caller, a: Any) -> Any:
    if a.store == "session":
        return _session(c).listing(a.prefix, a.limit, a.after)
    return {**_pages(c).listing(a.prefix, a.limit, meta=True, after=a.after), "store": "project"}


def _brain_delete(c: Caller, a: Any) -> Any:
    if a.store == "session":
        if a.if_version is not None:
            raise BadRequest("if_version", "guards a page's delete; a session brain entry has no versions.")
        return _session(c).delete(a.path)
    return {"ok": True, "path": _pages(c).delete(a.path, a.if_version, actor=c.actor), "store": "project"}


def _brain_promote(c: Caller, a: Any) -> Any:
    fields = {k: v for k in ("type", "title", "description", "tags") if (v := getattr(a, k)) is not None}
    written = _pages(c).promote(
        c.mission.mission_id, paths.page_path(a.from_path), a.to_path, fields, a.if_version, actor=c.actor
    )
    return {"ok": True, "path": written.path, "version": written.version, "lint": written.lint}


def _brain_history(c: Caller, a: Any) -> Any:
    return _pages(c).versions(a.path, a.before, a.limit)


def _brain_search(c: Caller, a: Any) -> Any:
    """The knowledge base's page search, the mission's project's (``GET kb/search``'s answer)."""
    query = page_query.parse_query(a.q, tag=a.tag, type=a.type, status=a.status, offset=a.offset, limit=a.limit)
    return {**PageSearch(runtime().search, c.mission.project).search(query), "store": "project"}


def _brain_revert(c: Caller, a: Any) -> Any:
    return _written(_pages(c).revert(a.path, a.version, a.if_version, actor=c.actor))


def _verb(name: str) -> Callable[[Caller, Any], Any]:
    def run(c: Caller, a: Any) -> Any:
        rt = runtime()
        body = json.dumps(a.model_dump(mode="json", by_alias=True, exclude_none=True)).encode()
        call = door.Call(verb=name, principal=c.principal, workspace=c.mission.project, body=body, door="mcp")
        return door.invoke(door.Stores(rt.projects, rt.verbs, rt.verb_audit), call)

    return run


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    args: type[BaseModel]
    run: Callable[[Caller, Any], Any]


def _verb_spec(name: str) -> ToolSpec:
    from knowledge_service.domain.verbs.catalogue import VERBS

    verb = VERBS[name]
    return ToolSpec(name, f"{verb.summary} (the {name} verb, through the verbs' front door)", INPUTS[name], _verb(name))


SPECS: dict[str, ToolSpec] = {
    s.name: s
    for s in (
        ToolSpec("knowledge_search", "Ranked candidates in this project's knowledge, no evidence", SearchArgs, _search),
        ToolSpec(
            "knowledge_retrieve",
            "Evidence, entities and conflicts for a question, and `rendered`: the text a model is given",
            RetrieveArgs,
            _retrieve,
        ),
        ToolSpec("knowledge_item", "One statement, with what a person decided about it", StatementIdArgs, _item),
        ToolSpec("knowledge_evidence", "Why we believe a statement: its evidence links", StatementIdArgs, _evidence),
        ToolSpec("knowledge_entities", "Canonical entities by name, or the people list", EntitiesArgs, _entities),
        ToolSpec("knowledge_statements", "Statements, filtered and paged", StatementsArgs, _statements),
        ToolSpec("knowledge_conflicts", "Disagreements, with both sides", ConflictsArgs, _conflicts),
        ToolSpec("knowledge_sources", "Registered sources", NoArgs, _sources),
        ToolSpec(
            "brain_get",
            "Read this mission's session brain entry (the default) or, with store project, a page",
            BrainGetArgs,
            _brain_get,
        ),
        ToolSpec(
            "brain_put",
            "Write this mission's session brain entry (the default) or, with store project, a page",
            BrainPutArgs,
            _brain_put,
        ),
        ToolSpec(
            "brain_list",
            "List this mission's session brain (the default) or, with store project, the pages, under a prefix",
            BrainListArgs,
            _brain_list,
        ),
        ToolSpec(
            "brain_delete",
            "Delete a session brain entry (the default) or, with store project, a page (its bytes stay in its history)",
            BrainDeleteArgs,
            _brain_delete,
        ),
        ToolSpec("brain_promote", "Promote a session brain entry to a page", BrainPromoteArgs, _brain_promote),
        ToolSpec("brain_history", "A page's versions, newest first", BrainHistoryArgs, _brain_history),
        ToolSpec(
            "brain_search",
            "Search the knowledge base's pages (path, title, tags, type, status, body): ranked hits with snippets",
            BrainSearchArgs,
            _brain_search,
        ),
        ToolSpec("brain_revert", "Put a page's earlier version back", BrainRevertArgs, _brain_revert),
        *(_verb_spec(name) for name in TOOLS if "." in name),
    )
}


def input_schema(spec: ToolSpec) -> dict[str, Any]:
    return spec.args.model_json_schema(by_alias=True)


def listed(mission: MissionRecord) -> list[ToolSpec]:
    """What ``tools/list`` offers: the role's tier 1 tools, the tier 2 ones it discovered, and
    ``tools_discover`` when the role lists any tier 2 tool."""
    shown = [
        SPECS[name] for name in mission.tools if name in SPECS and (TOOLS[name].tier == 1 or name in mission.discovered)
    ]
    if any(TOOLS[name].tier == 2 for name in mission.tools if name in TOOLS):
        shown.append(DISCOVER_SPEC)
    return shown


DISCOVER_SPEC = ToolSpec(
    DISCOVER_TOOL,
    "List the on-demand (tier 2) tools this mission's role may load, or load one by name; list tools again after",
    DiscoverArgs,
    lambda c, a: None,
)


def call(mission: MissionRecord, name: str, arguments: dict[str, Any] | None) -> tuple[dict[str, Any], bool]:
    """Run one tool call: ``(payload, is_error)``. Always one audit row."""
    rt = runtime()
    principal = principal_of(mission)
    row: dict[str, Any] = {
        "workspace": mission.project,
        "recorded": f"{datetime.now(UTC).isoformat()}#{secrets.token_hex(6)}",
        "verb": f"mcp:{name[:64]}",
        "door": "mcp",
        "principal": principal.name,
        "kind": principal.kind.value,
        "mission": mission.mission_id,
    }
    try:
        payload = _dispatch(Caller(mission, principal), name, arguments or {})
    except ServiceError as refused:
        rt.verb_audit.record({**row, "decision": "refused", "code": refused.code, "status": refused.status})
        count_outcome("McpToolCalls", refused.code)
        return {"error": refused.message, "code": refused.code}, True
    except Exception:  # a bug: logged with its trace, answered without one, audited all the same
        logger.exception("tool failed", extra={"tool": name[:64], "mission": mission.mission_id})
        rt.verb_audit.record({**row, "decision": "refused", "code": "internal", "status": 500})
        count_outcome("McpToolCalls", "internal")
        return {"error": "The tool failed; the failure is logged.", "code": "internal"}, True
    rt.verb_audit.record({**row, "decision": "allowed"})
    count_outcome("McpToolCalls", "ok")
    return payload, False


def _dispatch(caller: Caller, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    mission = caller.mission
    if name == DISCOVER_TOOL:
        try:
            return _discover(mission, DiscoverArgs.model_validate(arguments))
        except ValidationError as invalid:
            raise _refusal(invalid) from None
    if name not in mission.tools or name not in SPECS:
        raise PermissionDenied(f"{name[:64]} is not a tool of role '{mission.role}'.", code="tool_not_in_role")
    info = TOOLS[name]
    if info.tier == 2 and name not in mission.discovered:
        raise PermissionDenied(
            f"{name} is offered on demand: call {DISCOVER_TOOL} with its name first.", code="tool_not_discovered"
        )
    if autonomy(mission.autonomy) < info.risk.autonomy:
        raise PermissionDenied(
            f"{name} is {info.risk.value}: it takes autonomy {info.risk.autonomy.name}; this mission is"
            f" {autonomy(mission.autonomy).name}."
        )
    spec = SPECS[name]
    try:
        args = spec.args.model_validate(arguments)
    except ValidationError as invalid:
        raise _refusal(invalid) from None
    answer = _dump(spec.run(caller, args))
    return answer if isinstance(answer, dict) else {"result": answer}


def _discover(mission: MissionRecord, args: DiscoverArgs) -> dict[str, Any]:
    offered = [n for n in mission.tools if n in TOOLS and TOOLS[n].tier == 2]
    if args.name is None:
        return {"tools": [{"name": n, "loaded": n in mission.discovered} for n in offered]}
    if args.name not in offered:
        raise PermissionDenied(
            f"{args.name} is not an on-demand tool of role '{mission.role}'.", code="tool_not_in_role"
        )
    runtime().agent_missions.discover(mission, args.name)
    spec = SPECS[args.name]
    return {
        "loaded": args.name,
        "tool": {"name": spec.name, "description": spec.description, "inputSchema": input_schema(spec)},
    }


def _refusal(invalid: ValidationError) -> BadRequest:
    errors = invalid.errors()
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    field = ".".join(str(p) for p in first["loc"]) or "arguments"
    field = field if field.isidentifier() and len(field) <= 64 else "arguments"
    if first["type"] == "extra_forbidden":
        if field in SCOPE_WORDS:
            return BadRequest(field, "is not an argument of this tool: scope is the mission's, never a tool's.")
        return BadRequest(field, "is not an argument of this tool.")
    if first["type"] == "missing":
        return BadRequest(field, "is required.")
    return BadRequest(field, str(first.get("msg", "is not valid"))[:200])


# ------------------------------------------------------------------------------ resources
def resource_uri(project: str, path: str) -> str:
    """A page as an MCP resource: ``agenthub://project/<id>/kb<path>`` (after the session
    brain's ``agenthub://session/<id>/brain<path>`` that promote writes into ``sources``)."""
    return f"{RESOURCE_SCHEME}://project/{project}/kb{path}"


def resources(mission: MissionRecord) -> list[dict[str, Any]]:
    """Every page of the mission's project (the pages an agent may read), by canonical path."""
    heads = walk(runtime().pages, mission.project).heads
    return [
        {"uri": resource_uri(mission.project, path), "name": path, "mimeType": "text/markdown"}
        for path in sorted(heads)[:MAX_LISTING]
    ]


def read_resource(mission: MissionRecord, uri: str) -> str:
    """A page's text by its URI; another project's URI is not found, in the same words."""
    prefix = f"{RESOURCE_SCHEME}://project/{mission.project}/kb/"
    if not uri.startswith(prefix):
        raise NotFound("There is no such resource.")
    try:
        return str(Pages(runtime().pages, mission.project).get(uri[len(prefix) - 1 :])["content"])
    except NotFound:
        raise NotFound("There is no such resource.") from None
