"""Exactly-once answers for a caller's Idempotency-Key, on Powertools' idempotency utility.

The same key with the same request answers what the first request answered, without
running it again; the same key with a different request is a conflict. A request that
failed stores nothing, so it may be retried under the same key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer, IdempotencyConfig
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.idempotency import idempotent_function
from aws_lambda_powertools.utilities.idempotency.serialization.pydantic import PydanticSerializer
from pydantic import BaseModel

from knowledge_service.errors import Conflict, IdempotencyKeyReused

ModelT = TypeVar("ModelT", bound=BaseModel)

EXPIRES_AFTER_SECONDS = 24 * 60 * 60


class IdempotencyStore:
    def __init__(self, table_name: str, dynamodb_client: Any | None = None):
        self._persistence = DynamoDBPersistenceLayer(table_name=table_name, boto3_client=dynamodb_client)
        self._config = IdempotencyConfig(
            event_key_jmespath="key",
            payload_validation_jmespath="payload",
            expires_after_seconds=EXPIRES_AFTER_SECONDS,
            raise_on_no_idempotency_key=True,
        )

    def once(
        self,
        key: str,
        payload: dict[str, Any],
        model: type[ModelT],
        act: Callable[[], ModelT],
        lambda_context: Any | None = None,
        *,
        reuse_is_unprocessable: bool = False,
    ) -> ModelT:
        """Run ``act`` once per ``key``; a replay with the same ``payload`` answers the stored result.

        With the Lambda context, a request that dies mid-way stops holding its key when the
        invocation's time runs out, rather than for the whole expiry. The same key with a
        different request is a 409 ``conflict`` by default; ``reuse_is_unprocessable`` makes
        it the 422 ``idempotency_key_reused`` the ingestion routes answer (IETF
        draft-ietf-httpapi-idempotency-key-header), while one still in flight stays a 409.
        """
        if lambda_context is not None:
            self._config.register_lambda_context(lambda_context)

        def run(request: dict[str, Any]) -> ModelT:
            return act()

        guarded = idempotent_function(
            data_keyword_argument="request",
            persistence_store=self._persistence,
            config=self._config,
            output_serializer=PydanticSerializer(model),
        )(run)
        try:
            return cast(ModelT, guarded(request={"key": key, "payload": payload}))
        except IdempotencyValidationError as error:
            if reuse_is_unprocessable:
                raise IdempotencyKeyReused("This Idempotency-Key was already used for a different request.") from error
            raise Conflict("This Idempotency-Key was already used for a different request.") from error
        except IdempotencyAlreadyInProgressError as error:
            raise Conflict("A request with this Idempotency-Key is still in progress.") from error
