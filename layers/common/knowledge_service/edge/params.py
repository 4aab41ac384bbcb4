"""Parameters every group shares, declared with the shapes the code enforces, so the API's
own description, generated clients and the edge agree on what is accepted."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from knowledge_service.domain import identifiers

Project = Annotated[
    str | None,
    Query(
        pattern=identifiers.PROJECT_OR_DEFAULT_PATTERN,
        max_length=63,
        description="ANTHILL project id; the console default when omitted (or empty)",
    ),
]

ForagerWords = Annotated[
    str | None,
    Query(pattern=identifiers.FORAGER_WORDS_PATTERN, max_length=2000, description="FORAGER's words, comma-separated"),
]

StatementId = Annotated[str, Path(pattern=identifiers.record_pattern("ki"), description="ki_ and 16 hex digits")]
EntityId = Annotated[str, Path(pattern=identifiers.record_pattern("ent"), description="ent_ and 16 hex digits")]
SourceId = Annotated[str, Path(pattern=identifiers.record_pattern("src"), description="src_ and 16 hex digits")]
ConflictId = Annotated[str, Path(pattern=identifiers.record_pattern("cf"), description="cf_ and 16 hex digits")]
DuplicateId = Annotated[str, Path(pattern=identifiers.record_pattern("mc"), description="mc_ and 16 hex digits")]
ExportId = Annotated[str, Path(pattern=identifiers.record_pattern("exp"), description="exp_ and 16 hex digits")]
