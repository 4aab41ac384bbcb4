"""The knowledge base archive builder: each ``kb.archive.requested`` event from the bus (put
there by ``GET .../kb/archive`` while no archive of the base's current state exists) builds the
project's archive (``domain/pages/archive.py``). Off the request path: the GET answers
``409 not_ready`` at once and hands the archive over once it exists."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge_service.domain.pages import archive
from knowledge_service.edge.bus import project_named
from knowledge_service.errors import PayloadTooLarge
from knowledge_service.runtime import runtime

logger = Logger()


def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    project = project_named(event, logger)
    if project is None:
        return {"project": None, "built": False}
    rt = runtime()
    try:
        done = archive.build(rt.pages, rt.kb_archives, rt.archives, project)
    except PayloadTooLarge as refused:  # the GET refuses the same base with its 413: nothing to retry
        logger.warning("archive refused", extra={"project": project, "reason": refused.message})
        return {"project": project, "built": False, "reason": refused.message}
    logger.info("kb archive", extra=done)
    return done
