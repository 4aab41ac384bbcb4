"""The MCP route group's Lambda (``POST /mcp``): a thin door onto the shared layer's MCP router.

Like every function, it authenticates its own request: the mission credential is checked by the layer."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge_service.door import end_of_init, traced
from knowledge_service.edge.routes import mcp

logger = Logger()
app = APIGatewayRestResolver()
app.include_router(mcp.router)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@traced
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)


end_of_init()  # the last line of init: what init made is never collected
