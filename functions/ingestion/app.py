"""The ingestion route group's Lambda: a thin door onto the shared layer's routers."""

from knowledge_service import door

lambda_handler = door.api("ingestion", preload=("boto3", "httpcore", "httpx"))
