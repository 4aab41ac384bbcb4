"""The page search compactor's Lambda (the pages signals from the bus: fold a project's search
overlay into a new snapshot once it is large enough): ``edge/bus/``'s handler."""

from knowledge_service import door

lambda_handler = door.bus("search_compaction", preload=("boto3",))
