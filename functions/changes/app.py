"""The changes route group's Lambda: a thin door onto the shared layer's routers."""

from __future__ import annotations

from knowledge_service import door  # first of all: the collector stays off for the whole of init

# isort: split
from typing import Any

import boto3  # noqa: F401 - loaded from the top of the stack, before the project (door.py)
import httpcore  # noqa: F401 - loaded from the top of the stack, before the project (door.py)
import httpx  # noqa: F401 - loaded from the top of the stack, before the project (door.py)
from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge_service.edge.resolver import knowledge_api
from knowledge_service.edge.routes import changes

logger = Logger()
app = knowledge_api()
app.include_router(changes.router)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@door.traced
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)


door.end_of_init()  # the last line of init: what init made is never collected
