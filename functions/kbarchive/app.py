"""The knowledge base archive builder's Lambda (``kb.archive.requested`` from the bus: the whole
base streamed into one tar.gz in the archive bucket): ``edge/bus/``'s handler."""

from knowledge_service import door

lambda_handler = door.bus("kb_archive", preload=("boto3",))
