"""Every route template.yaml sends to a function is one the function's routers answer."""

from __future__ import annotations

from devstack.template import Template
from knowledge_service.edge.catalog import all_routes, template_form


def test_template_routes_and_handler_routes_are_the_same_set() -> None:
    """``ANY`` events are the pages and verbs surfaces' misses (tests/pages/test_surface_misses.py):
    every other route is one a router answers, and every router's route is declared."""
    declared = {(r.method, r.path) for r in Template().routes() if r.method != "ANY"}
    handled = {template_form(r) for r in all_routes()}
    assert declared == handled


def test_every_route_declares_its_permission() -> None:
    undeclared = [(r.method, r.path) for r in all_routes() if r.permission is None]
    assert undeclared == []
