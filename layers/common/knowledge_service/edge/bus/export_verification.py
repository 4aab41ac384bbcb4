"""The export verifier: each ``knowledge.export.verification_requested`` event a download put on
the bus (``domain/exports.py``) — receive that export's archive from FORAGER into S3 while
hashing it, and complete it only when its SHA-256 and size match (``domain.exports.verify``).

Off the request path: the download that asked answered ``409 not_ready`` at once, and the next
one answers 303 once the archive is in place. A permanent failure (a mismatch, FORAGER saying
the archive is gone) is recorded for the downloads to answer and returned; any other failure is
raised, so Lambda retries the event and, when the retries are spent, sends it to the verifier's
dead-letter queue (docs/operations.md). An event whose detail is not a verification request is
logged and dropped: no retry would make it one.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import ValidationError

from knowledge_service.domain import exports
from knowledge_service.runtime import runtime

logger = Logger()


def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        request = exports.VerificationRequest.model_validate(event.get("detail"))
    except ValidationError:
        logger.warning("not a verification request", extra={"detail_type": event.get("detail-type"),
                                                            "event_id": event.get("id")})  # fmt: skip
        return {"export_id": None, "outcome": "not_a_request"}
    rt = runtime()
    forager = rt.upstream.client(rt.config.settings())
    outcome = exports.verify(forager, rt.archives, request, now=int(rt.clock().timestamp()))
    logger.info(
        "export verification",
        extra={"export_id": request.export_id, "project": request.project, "knowledge_base": request.knowledge_base,
               "requester": request.requester, "outcome": outcome},
    )  # fmt: skip
    return {"export_id": request.export_id, "outcome": outcome}
