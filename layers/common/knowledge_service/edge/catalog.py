"""Every route of every group, in one place: for the OpenAPI document and the tests that
walk every route (request wire names, the authorization matrix)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, get_args, get_origin

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel

from knowledge_service.edge.access import CAPABILITY_KEY, PERMISSION_KEY, PROJECT_ACCESS_KEY
from knowledge_service.edge.pages_resolver import pages_api
from knowledge_service.edge.resolver import knowledge_api
from knowledge_service.edge.routes import (
    bindings,
    changes,
    console,
    curation,
    exports,
    feed,
    ingestion,
    mcp,
    pages,
    reads,
    status,
    verbs,
)
from knowledge_service.edge.verbs_resolver import verbs_api


def knowledge_routers() -> list[APIGatewayRouter]:
    """The routers of the ``/knowledge`` surface (and /modules, /settings), every group."""
    return [
        status.router,
        bindings.router,
        reads.router,
        feed.router,
        changes.router,
        ingestion.router,
        curation.router,
        exports.router,
        console.router,
    ]


@dataclass(frozen=True)
class RouteInfo:
    method: str
    path: str  # OpenAPI form: /knowledge/items/{id}
    permission: str | None
    capability: str | None
    project_access: str | None
    body_model: type[BaseModel] | None


def full_knowledge_api() -> APIGatewayRestResolver:
    app = knowledge_api()
    for router in knowledge_routers():
        app.include_router(router)
    return app


def full_pages_api() -> APIGatewayRestResolver:
    app = pages_api()
    app.include_router(pages.router)
    return app


def pages_routes() -> list[RouteInfo]:
    """The pages surface's routes (``/api/v1/projects/{id}/kb/*``), in handler form."""
    return _routes(full_pages_api())


def template_form(route: RouteInfo) -> tuple[str, str]:
    """How ``template.yaml`` routes a handler route to its function: API Gateway takes a
    greedy ``{path+}`` only last, so a page's ``/review`` and ``/revert`` ride on
    ``POST .../pages/{path+}`` and the pages resolver splits them off again."""
    path = route.path
    if path.startswith("/console/"):  # the console's files, a folder or two deep: one greedy route
        return route.method, "/console/{proxy+}"
    if path.endswith(("/kb/pages/{path}/review", "/kb/pages/{path}/revert")):
        path = path.rsplit("/", 1)[0]
    return route.method, path.replace("/kb/pages/{path}", "/kb/pages/{path+}")


def knowledge_routes() -> list[RouteInfo]:
    return _routes(full_knowledge_api())


def full_verbs_api() -> APIGatewayRestResolver:
    """The verbs surface (``/v``): its own resolver and renderer, ``{error, code}`` on refusal."""
    app = verbs_api()
    app.include_router(verbs.router)
    return app


def verbs_routes() -> list[RouteInfo]:
    return _routes(full_verbs_api())


def full_mcp_api() -> APIGatewayRestResolver:
    """``POST /mcp``: the MCP SDK answers; the route declares its body and its credential."""
    app = APIGatewayRestResolver()
    app.include_router(mcp.router)
    return app


def mcp_routes() -> list[RouteInfo]:
    return _routes(full_mcp_api())


def console_file_routes() -> list[RouteInfo]:
    """``GET /console/...``: the console's own files, answered to anyone (``x-permission: public``)."""
    app = knowledge_api()
    app.include_router(console.assets)
    return _routes(app)


def all_routes() -> list[RouteInfo]:
    """Every route of every surface the API serves."""
    every = knowledge_routes() + verbs_routes() + pages_routes() + mcp_routes() + console_file_routes()
    return sorted(every, key=lambda r: (r.path, r.method))


def _routes(app: APIGatewayRestResolver) -> list[RouteInfo]:
    routes = []
    for route in app._static_routes + app._dynamic_routes:
        declared = route.openapi_extensions or {}
        routes.append(
            RouteInfo(
                route.method,
                route.openapi_path,
                declared.get(PERMISSION_KEY),
                declared.get(CAPABILITY_KEY),
                declared.get(PROJECT_ACCESS_KEY),
                _body_model(route.func),
            )
        )
    return sorted(routes, key=lambda r: (r.path, r.method))


def _body_model(func: Any) -> type[BaseModel] | None:
    for parameter in inspect.signature(func, eval_str=True).parameters.values():
        annotation = parameter.annotation
        if get_origin(annotation) is not None and any(isinstance(a, Body) for a in get_args(annotation)[1:]):
            model = get_args(annotation)[0]
            if isinstance(model, type) and issubclass(model, BaseModel):
                return model
    return None
