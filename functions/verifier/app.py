"""The export verifier's Lambda (the verifications downloads ask for, from the bus: receive an
export's archive into S3 while hashing it, complete it only when verified): ``edge/bus/``'s handler."""

from knowledge_service import door

lambda_handler = door.bus("export_verification", preload=("boto3", "httpcore", "httpx"))
