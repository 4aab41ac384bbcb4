"""Finding a deployed stack's tables, for the admin command."""

from __future__ import annotations

from typing import Any

LOGICAL_TO_VARIABLE = {
    "ConfigTable": "CONFIG_TABLE",
    "PrincipalsTable": "PRINCIPALS_TABLE",
    "ProjectsTable": "PROJECTS_TABLE",
    "EventLogTable": "EVENT_LOG_TABLE",
    "VerbsTable": "VERBS_TABLE",
    "VerbAuditTable": "VERB_AUDIT_TABLE",
    "ArchiveBucket": "ARCHIVE_BUCKET",
    "KnowledgeBus": "EVENT_BUS_NAME",  # knowledge-admin mission start|end put their events there
}


def stack_tables(cloudformation: Any, stack_name: str) -> dict[str, str]:
    """The deployed stack's table names, keyed by the environment variable the functions read."""
    found: dict[str, str] = {}
    paginator = cloudformation.get_paginator("list_stack_resources")
    for page in paginator.paginate(StackName=stack_name):
        for resource in page["StackResourceSummaries"]:
            variable = LOGICAL_TO_VARIABLE.get(resource["LogicalResourceId"])
            if variable:
                found[variable] = resource["PhysicalResourceId"]
    return found
