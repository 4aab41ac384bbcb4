"""The pages route group's Lambda: a thin door onto the shared layer's pages router."""

from knowledge_service import door

lambda_handler = door.api("pages", preload=("boto3", "markdown_it"))
