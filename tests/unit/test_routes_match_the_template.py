"""Every route template.yaml sends to a function is one the function's routers answer."""

from __future__ import annotations

from devstack.template import Template
from knowledge_service.edge.catalog import all_routes, template_form


def test_template_routes_and_handler_routes_are_the_same_set() -> None:
    declared = {(r.method, r.path) for r in Template().routes()}
    handled = {template_form(r) for r in all_routes()}
    assert declared == handled


def test_every_route_declares_its_permission() -> None:
    undeclared = [(r.method, r.path) for r in all_routes() if r.permission is None]
    assert undeclared == []
