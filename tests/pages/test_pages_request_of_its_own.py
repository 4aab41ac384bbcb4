"""The pages code reads its request through the request Powertools hands each resolution
(``app.request`` in the gate, ``request: Request`` in a route), never through the event the
resolver keeps on its class (``BaseRouter.current_event``): request state travels with the
request, not in a class global (issue 25)."""

from __future__ import annotations

import ast
import inspect

import pytest

from knowledge_service.edge import pages_resolver
from knowledge_service.edge.routes import pages


@pytest.mark.parametrize("module", [pages_resolver, pages], ids=lambda m: m.__name__)
def test_no_pages_code_reads_the_resolvers_class_level_event(module: object) -> None:
    tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]

    reads = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "current_event"]

    assert reads == [], f"{module.__name__} reads current_event on lines {reads}"  # type: ignore[attr-defined]


def test_the_routes_that_read_a_body_declare_their_request() -> None:
    readers = [pages.put_page, pages.review_page, pages.revert_page, pages.promote]

    assert all("request" in inspect.signature(route).parameters for route in readers)
