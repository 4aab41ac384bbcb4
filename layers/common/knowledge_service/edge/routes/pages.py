"""Knowledge base pages: ``/api/v1/projects/{id}/kb/...`` (the human's REST surface).

Every route is behind the admin gate (``pages_resolver``), which runs before a body is
read; the routes read their bodies themselves, bounded before they are parsed. A route
that reads its request declares it (``request: Request``: Powertools hands each
resolution's own), and the helpers take it as an argument, so no code here reads the
event the resolver keeps on its class. The answers are the specification's shapes;
refusals are problem+json.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.request import Request
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from knowledge_service.base_model import Model
from knowledge_service.domain.pages import archive as kb_archive, search as page_query
from knowledge_service.domain.pages.page_search import PageSearch
from knowledge_service.domain.pages.service import (
    MAX_BODY_BYTES,
    MAX_HISTORY_ROWS,
    MAX_LISTING,
    MAX_PAGE_BYTES,
    Pages,
    Written,
    invalid,
)
from knowledge_service.edge.access import STARTS_WORK_KEY, Standing, access
from knowledge_service.edge.body import UnreadableBody, body_bytes, read_json
from knowledge_service.edge.pages_resolver import admission, page_text
from knowledge_service.edge.problem import problem_responses
from knowledge_service.edge.resolver import bad_request_from
from knowledge_service.errors import UnsupportedMediaType
from knowledge_service.identity.principal import Permission
from knowledge_service.runtime import runtime

router = APIGatewayRouter()

BASE = "/api/v1/projects/<id>/kb"
READ = access(Permission.READ_KNOWLEDGE, project=Standing.ADMIN)
WRITE = access(Permission.MANAGE_KNOWLEDGE, project=Standing.ADMIN)
TAGS = ["pages"]

# A path's spelling in a URL is bounded before it is read: 2,000 characters spell any
# canonical path of 512 bytes with room for `.`/`..` and the namespace, and keep every
# request line far under what a gateway takes (a 414 would be nobody's documented answer).
URL_PATH_CHARS = 2000
ProjectId = Annotated[str, Path(pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$", max_length=63)]
PagePath = Annotated[str, Path(max_length=URL_PATH_CHARS)]  # percent-encoded here: 512 bytes encode to 1,536
Version = Annotated[str | None, Query(max_length=80)]
Cursor = Annotated[str | None, Query(max_length=64)]
Bounded = Annotated[str | None, Query(max_length=URL_PATH_CHARS)]


class _Body(Model):
    model_config = ConfigDict(extra="forbid")


class PutPage(_Body):
    content: str
    if_version: str | None = Field(default=None, max_length=80)


class ReviewPage(_Body):
    if_version: str | None = Field(default=None, max_length=80)
    verified_by: str | None = Field(default=None, max_length=200)


class RevertPage(_Body):
    version: str = Field(max_length=80)
    if_version: str | None = Field(default=None, max_length=80)


class Promote(_Body):
    from_session_id: str = Field(min_length=1, max_length=200)
    from_path: str = Field(min_length=1, max_length=1024)
    to_path: str = Field(min_length=1, max_length=8192)
    type: str | None = Field(default=None, max_length=200)
    title: str | None = Field(default=None, max_length=1000)
    description: str | None = Field(default=None, max_length=4000)
    tags: list[Annotated[str, Field(max_length=200)]] | None = Field(default=None, max_length=100)
    if_version: str | None = Field(default=None, max_length=80)


class ArchiveHandedOver(Model):
    """The 303's body: where the base's archive is, for a client that does not follow."""

    url: str
    file_name: str
    generation: int
    size_bytes: int


BODIES: tuple[type[BaseModel], ...] = (PutPage, ReviewPage, RevertPage, Promote)
"""The bodies the pages routes read themselves (after the admin gate): the request-model
walk (``tests/unit/test_request_wire_names.py``) holds these too."""


def _pages(project: str, *, search: bool = False) -> Pages:
    """The project's pages, with what the gate read of them with the caller (used once); with
    ``search``, able to rewrite its search snapshot (a forget does)."""
    rt = runtime()
    admitted = admission()
    preread = admitted.preread if admitted is not None else None
    return Pages(rt.pages, project, rt.events, PageSearch(rt.search, project) if search else None, preread)


def _principal() -> str | None:
    """The writing principal's name, recorded beside the spec's actor word (``human``) so a
    version, the history and the last write can name who wrote."""
    admitted = admission()
    return admitted.principal.name if admitted is not None else None


def _media_type(request: Request) -> str:
    headers = request.headers
    value = next((v for k, v in headers.items() if k.lower() == "content-type"), "") or ""
    return value.split(";", 1)[0].strip().lower()


def _raw_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 before it is decoded whole when it cannot fit ``limit``."""
    return body_bytes(request.body, bool(request.resolved_event.is_base64_encoded), limit)


def _json_body(request: Request, model: type[_Body], *, empty_ok: bool = False) -> Any:
    data = _raw_body(request, MAX_BODY_BYTES)
    if not data.strip() and empty_ok:
        return model()
    try:
        parsed = read_json(data, MAX_BODY_BYTES)  # the one bounded reader: size, depth and numbers before parsing
    except UnreadableBody as unreadable:
        raise invalid(unreadable.field, unreadable.message.removeprefix(f"{unreadable.field}: ")) from unreadable
    except (UnicodeDecodeError, ValueError) as error:
        raise invalid("body", "is not valid JSON in UTF-8.") from error
    try:
        return model.model_validate(parsed)
    except ValidationError as error:
        refused = bad_request_from([dict(e) for e in error.errors(include_url=False)])
        raise invalid(refused.field, refused.message.split(": ", 1)[-1]) from error


def _page(path: str) -> str:
    return page_text(path)  # bytes that are not UTF-8 stay visible to the page path's check


def _written(written: Written, *, changed: bool | None = None) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "ok": True,
        "path": written.path,
        "version": written.version,
        "size_bytes": written.size_bytes,
        "lint": written.lint,
        "warnings": written.warnings,
    }
    if changed is not None:
        answer["changed"] = changed
    return answer


@router.get(
    f"{BASE}/pages",
    operation_id="list_pages",
    summary="List one directory level, or with meta=1 the whole subtree with frontmatter and trust",
    tags=TAGS,
    openapi_extensions=READ,
    responses=problem_responses(400, 401, 404),
)
def list_pages(
    id: ProjectId,
    prefix: Bounded = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LISTING)] = MAX_LISTING,
    meta: Annotated[Literal["0", "1", "true", "false"] | None, Query()] = None,
    after: Bounded = None,
) -> dict[str, Any]:
    return _pages(id).listing(prefix, limit, meta in ("1", "true"), after)


@router.get(
    f"{BASE}/pages/<path>",
    operation_id="get_page",
    summary="Read a page, or with version= one version of it",
    tags=TAGS,
    openapi_extensions=READ,
    responses=problem_responses(400, 401, 404),
)
def get_page(id: ProjectId, path: PagePath, version: Version = None) -> dict[str, Any]:
    pages = _pages(id)
    if version is not None:
        return pages.get_version(_page(path), version)
    return pages.get(_page(path))


@router.put(
    f"{BASE}/pages/<path>",
    operation_id="put_page",
    summary="Write a page (JSON {content, if_version?}, or text/markdown / text/plain with ?if_version=)",
    tags=TAGS,
    openapi_extensions=WRITE,
    responses=problem_responses(400, 401, 404, 409, 413, 415, 503),
)
def put_page(request: Request, id: ProjectId, path: PagePath, if_version: Version = None) -> dict[str, Any]:
    media = _media_type(request)
    if media == "application/json":
        body = _json_body(request, PutPage)
        if body.if_version is not None and if_version is not None and body.if_version != if_version:
            raise invalid("if_version", "is given in the body and the query with different values.")
        content, guard = body.content, body.if_version if body.if_version is not None else if_version
    elif media in ("text/markdown", "text/plain"):
        data = _raw_body(request, MAX_PAGE_BYTES)
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise invalid("body", "is not UTF-8 text.") from error
        guard = if_version
    else:
        raise UnsupportedMediaType("A page is sent as application/json, text/markdown or text/plain.")
    return _written(_pages(id).put(_page(path), content, guard, principal=_principal()))


@router.delete(
    f"{BASE}/pages/<path>",
    operation_id="delete_page",
    summary="Delete a page (its bytes stay in its history)",
    tags=TAGS,
    openapi_extensions=WRITE,
    responses=problem_responses(400, 401, 404, 409, 503),
)
def delete_page(id: ProjectId, path: PagePath, if_version: Version = None) -> dict[str, Any]:
    return {"ok": True, "path": _pages(id).delete(_page(path), if_version, principal=_principal())}


@router.post(
    f"{BASE}/pages/<path>/review",
    operation_id="review_page",
    summary="Append {by: human, at} to the page's verified block",
    tags=TAGS,
    openapi_extensions=WRITE,
    responses=problem_responses(400, 401, 404, 409, 413, 503),
)
def review_page(request: Request, id: ProjectId, path: PagePath) -> dict[str, Any]:
    body = _json_body(request, ReviewPage, empty_ok=True)
    written = _pages(id).review(_page(path), body.if_version, body.verified_by, principal=_principal())
    return {"ok": True, "path": written.path, "version": written.version}


@router.post(
    f"{BASE}/pages/<path>/revert",
    operation_id="revert_page",
    summary="Write a version from the page's history back as a new write",
    tags=TAGS,
    openapi_extensions=WRITE,
    responses=problem_responses(400, 401, 404, 409, 413, 503),
)
def revert_page(request: Request, id: ProjectId, path: PagePath) -> dict[str, Any]:
    body = _json_body(request, RevertPage)
    written = _pages(id).revert(_page(path), body.version, body.if_version, principal=_principal())
    return _written(written, changed=written.changed)


@router.post(
    f"{BASE}/promote",
    operation_id="promote_to_page",
    summary="Copy a session brain entry into the knowledge base",
    tags=TAGS,
    openapi_extensions=WRITE,
    responses=problem_responses(400, 401, 404, 409, 413, 503),
)
def promote(request: Request, id: ProjectId) -> dict[str, Any]:
    body = _json_body(request, Promote)
    fields: dict[str, str | list[str]] = {
        k: v for k, v in {"type": body.type, "title": body.title, "description": body.description}.items() if v
    }
    if body.tags is not None:
        fields["tags"] = body.tags
    written = _pages(id).promote(
        body.from_session_id, body.from_path, body.to_path, fields, body.if_version, principal=_principal()
    )
    return {"ok": True, "path": written.path, "version": written.version, "lint": written.lint}


@router.get(
    f"{BASE}/history",
    operation_id="get_page_history",
    summary="The whole base's write log, newest first",
    tags=TAGS,
    openapi_extensions=READ,
    responses=problem_responses(400, 401, 404),
)
def history(
    id: ProjectId,
    path: Bounded = None,
    prefix: Bounded = None,
    actor: Annotated[str | None, Query(max_length=200)] = None,
    op: Annotated[Literal["kb.put", "kb.delete", "kb.review", "kb.promote", "kb.revert"] | None, Query()] = None,
    before: Cursor = None,
    limit: Annotated[int, Query(ge=0, le=MAX_HISTORY_ROWS)] = 50,
) -> dict[str, Any]:
    return _pages(id).history(path, prefix, actor, op, before, limit)


@router.get(
    f"{BASE}/versions",
    operation_id="list_page_versions",
    summary="One page's versions, newest first",
    tags=TAGS,
    openapi_extensions=READ,
    responses=problem_responses(400, 401, 404),
)
def versions(
    id: ProjectId,
    path: Annotated[str, Query(max_length=URL_PATH_CHARS)],
    before: Cursor = None,
    limit: Annotated[int, Query(ge=1, le=MAX_HISTORY_ROWS)] = 50,
) -> dict[str, Any]:
    return _pages(id).versions(path, before, limit)


@router.delete(
    f"{BASE}/versions",
    operation_id="forget_page_versions",
    summary="Forget the kept bytes of one page's history (admin; audited first)",
    tags=TAGS,
    openapi_extensions=WRITE,
    responses=problem_responses(400, 401, 404),
)
def forget_versions(id: ProjectId, path: Annotated[str, Query(max_length=URL_PATH_CHARS)]) -> dict[str, Any]:
    return _pages(id, search=True).forget_history(path)


@router.get(
    f"{BASE}/backlinks",
    operation_id="list_backlinks",
    summary="The pages that link to a page, in path order",
    tags=TAGS,
    openapi_extensions=READ,
    responses=problem_responses(400, 401, 404),
)
def backlinks(id: ProjectId, path: Annotated[str, Query(max_length=URL_PATH_CHARS)]) -> list[dict[str, Any]]:
    return _pages(id).backlinks(path)


@router.get(
    f"{BASE}/lint",
    operation_id="lint_pages",
    summary="Lint the whole tree (fresh=1 walks again)",
    tags=TAGS,
    openapi_extensions=READ,
    responses=problem_responses(400, 401, 404),
)
def lint(id: ProjectId, fresh: Annotated[Literal["0", "1", "true", "false"] | None, Query()] = None) -> dict[str, Any]:
    return _pages(id).lint(fresh in ("1", "true"))


@router.get(
    f"{BASE}/stats",
    operation_id="get_page_stats",
    summary="Pages, bytes, trust and staleness counts",
    tags=TAGS,
    openapi_extensions=READ,
    responses=problem_responses(400, 401, 404),
)
def stats(id: ProjectId) -> dict[str, Any]:
    return _pages(id).stats()


@router.get(
    f"{BASE}/search",
    operation_id="search_pages",
    summary="Search the pages (path, title, tags, type, status, body): ranked hits with a highlighted snippet",
    tags=TAGS,
    openapi_extensions=READ,
    responses=problem_responses(400, 401, 404),
)
def search(
    id: ProjectId,
    q: Annotated[str, Query(min_length=1, max_length=page_query.MAX_QUERY_CHARS)],
    tag: Annotated[str | None, Query(max_length=200)] = None,
    type: Annotated[str | None, Query(max_length=200)] = None,
    status: Annotated[str | None, Query(max_length=200)] = None,
    offset: Annotated[int, Query(ge=0, le=page_query.MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=page_query.MAX_LIMIT)] = page_query.DEFAULT_LIMIT,
) -> dict[str, Any]:
    query = page_query.parse_query(q, tag=tag, type=type, status=status, offset=offset, limit=limit)
    return PageSearch(runtime().search, id).search(query)


@router.get(
    f"{BASE}/archive",
    operation_id="get_pages_archive",
    summary="The whole base as one tar.gz (pages and a manifest): a 303 to a short-lived URL, "
    "or 409 not_ready while it is built",
    tags=TAGS,
    openapi_extensions={**READ, STARTS_WORK_KEY: True},  # builds the archive: a session needs the console's header
    responses={
        303: {
            "description": "The archive of the base as it is now: Location is a presigned URL valid for five minutes",
            "content": {"application/json": {"model": ArchiveHandedOver}},
        },
        **{k: v for k, v in problem_responses(400, 401, 404, 409, 413).items() if k != 200},
    },
)
def archive(id: ProjectId) -> Response[str]:
    rt = runtime()
    handed = kb_archive.handover(rt.pages, rt.kb_archives, rt.archives, id)
    body = ArchiveHandedOver(
        url=handed.url, file_name=handed.file_name, generation=handed.generation, size_bytes=handed.size_bytes
    )
    return Response(
        status_code=303,
        content_type=content_types.APPLICATION_JSON,
        body=body.model_dump_json(),
        headers={"Location": handed.url, "Cache-Control": "no-store"},
    )
