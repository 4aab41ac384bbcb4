"""The MCP route group's Lambda (``POST /mcp``): a thin door onto the shared layer's MCP router.

Like every function, it authenticates its own request: the mission credential is checked by the layer."""

from knowledge_service import door

lambda_handler = door.api("mcp", preload=("boto3", "httpcore", "httpx", "markdown_it", "referencing", "mcp"))
