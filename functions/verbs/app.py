"""The verbs route group's Lambda: a thin door onto the shared layer's verbs router."""

from knowledge_service import door

lambda_handler = door.api("verbs", preload=("boto3",))
