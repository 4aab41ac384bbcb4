"""The REQUEST authorizer: validates ``Authorization: Bearer <token>`` against hashed tokens.

Every failure (missing, malformed, unknown, revoked) is the same ``Unauthorized``, which
API Gateway renders as the envelope's 401 ``unauthenticated`` (template.yaml's gateway
responses). The principal reaches the functions as JSON in the request context.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.data_classes import event_source
from aws_lambda_powertools.utilities.data_classes.api_gateway_authorizer_event import (
    APIGatewayAuthorizerRequestEvent,
    APIGatewayAuthorizerResponse,
)
from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge_service.door import end_of_init, traced
from knowledge_service.identity.authorizer import principal_for, principal_store

logger = Logger()


@logger.inject_lambda_context
@traced
@event_source(data_class=APIGatewayAuthorizerRequestEvent)
def lambda_handler(event: APIGatewayAuthorizerRequestEvent, context: LambdaContext) -> dict[str, Any]:
    principal = principal_for(
        event.headers.get("Authorization") or event.headers.get("authorization"), principal_store()
    )
    if principal is None:
        logger.info("bearer token refused")
        raise Exception("Unauthorized")  # API Gateway's contract for a 401  # noqa: TRY002
    arn = event.parsed_arn
    policy = APIGatewayAuthorizerResponse(
        principal_id=principal.name,
        region=arn.region,
        aws_account_id=arn.aws_account_id,
        api_id=arn.api_id,
        stage=arn.stage,
        context={"principal": principal.model_dump_json()},
    )
    policy.allow_all_routes()
    return policy.asdict()


end_of_init()  # the last line of init: what init made is never collected
