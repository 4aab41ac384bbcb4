"""The code's access declarations held equal to a table typed by hand from the specification
(``tests/permissions.py``): weakening a declaration, or adding a route nobody wrote a row
for, fails here, not only in the OpenAPI snapshot."""

from __future__ import annotations

import pytest

from knowledge_service.edge.catalog import RouteInfo, knowledge_routes
from tests.permissions import NOT_YET_BUILT, PERMISSIONS, Access

ROUTES = knowledge_routes()


def declared(route: RouteInfo) -> tuple[str | None, str | None, str | None]:
    return route.permission, route.project_access, route.capability


def expected(row: Access) -> tuple[str, str, str | None]:
    return row.permission.value, row.project.value, row.capability


def mismatches(routes: list[RouteInfo], table: dict[tuple[str, str], Access]) -> list[str]:
    """Every route whose declaration differs from its row, or that has no row."""
    found = []
    for route in routes:
        row = table.get((route.method, route.path))
        if row is None:
            found.append(f"{route.method} {route.path}: no row in tests/permissions.py")
        elif declared(route) != expected(row):
            found.append(f"{route.method} {route.path}: declares {declared(route)}, the specification {expected(row)}")
    return found


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_every_route_declares_what_the_specification_says(route: RouteInfo) -> None:
    assert mismatches([route], PERMISSIONS) == []


def test_every_row_of_the_built_table_is_a_route_the_code_serves() -> None:
    served = {(r.method, r.path) for r in ROUTES}
    assert set(PERMISSIONS) - served == set()  # a stale row would hide a route that went away
    assert set(NOT_YET_BUILT) & served == set()  # a built route's row moves into PERMISSIONS


def test_a_route_with_no_row_fails() -> None:
    unlisted = RouteInfo("POST", "/knowledge/brand-new", "read_knowledge", None, "read", None)
    assert mismatches([unlisted], PERMISSIONS) == ["POST /knowledge/brand-new: no row in tests/permissions.py"]


@pytest.mark.parametrize(
    ("weakened", "why"),
    [
        (("POST", "/knowledge/feed/sync", "read_knowledge", None, "operator"), "a lower permission"),
        (("POST", "/knowledge/feed/sync", "manage_knowledge", None, "read"), "a lower project standing"),
        (("POST", "/knowledge/bases", "manage_knowledge", None, "admin"), "a dropped commercial gate"),
        (("POST", "/settings", "manage_knowledge", None, "installation"), "another permission"),
    ],
)
def test_a_weakened_declaration_fails(weakened: tuple[str, str, str, str | None, str], why: str) -> None:
    method, path, permission, capability, project = weakened
    route = RouteInfo(method, path, permission, capability, project, None)
    assert len(mismatches([route], PERMISSIONS)) == 1, why


def test_the_mcp_route_declares_the_mission_credential_and_no_permission() -> None:
    from knowledge_service.edge.catalog import mcp_routes
    from tests.permissions import MISSION_ROUTES

    assert {(r.method, r.path): r.permission for r in mcp_routes()} == MISSION_ROUTES
    assert all(r.project_access is None and r.capability is None for r in mcp_routes())


def test_only_the_console_s_files_answer_anyone() -> None:
    """``x-permission: public`` skips authentication: exactly the console's file routes declare
    it (the table's ``PUBLIC_ROUTES``), and the access hook honours it under ``/console`` alone."""
    from knowledge_service.edge.access import PUBLIC
    from knowledge_service.edge.catalog import all_routes
    from tests.permissions import PUBLIC_ROUTES

    public = {(r.method, r.path) for r in all_routes() if r.permission == PUBLIC}
    assert public == PUBLIC_ROUTES
    assert all(r.project_access is None and r.capability is None for r in all_routes() if r.permission == PUBLIC)
