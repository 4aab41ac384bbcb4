"""The six-hourly pass's Lambda (EventBridge ``rate(6 hours)``): ``edge/bus/``'s handler."""

from knowledge_service import door

lambda_handler = door.bus("six_hourly_pass", preload=("boto3", "httpcore", "httpx"))
