"""The agent missions intake's Lambda (``agent.mission.started`` / ``agent.mission.ended`` from
the bus, recorded once per event id): ``edge/bus/``'s handler."""

from knowledge_service import door

lambda_handler = door.bus("mission_intake", preload=("boto3",))
