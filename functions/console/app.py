"""The console route group's Lambda: the console's files, signing in and out, who am I."""

from knowledge_service import door

lambda_handler = door.api("console", preload=("boto3",))
