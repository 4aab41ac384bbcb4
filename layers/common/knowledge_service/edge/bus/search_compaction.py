"""The page search compactor: each pages signal (``kb_put``, ``kb_deleted``, ...) from the bus
names its project; when that project's search overlay holds ``COMPACT_AFTER`` change markers,
fold them into a new snapshot (``domain/pages/page_search.py``: under a lease, one writer per
project, and a conditional swap of the pointer). Off the request path: a write never waits
for it, and a query is right whether it ran or not."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge_service.domain.pages.page_search import COMPACT_AFTER, PageSearch
from knowledge_service.edge.bus import project_named
from knowledge_service.runtime import runtime

logger = Logger()


def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    project = project_named(event, logger)
    if project is None:
        return {"project": None, "compacted": False}
    finder = PageSearch(runtime().search, project)
    if finder.pending() < COMPACT_AFTER:
        return {"project": project, "compacted": False}
    done = finder.compact()
    logger.info("search compaction", extra={"project": project, **done})
    return {"project": project, **done}
