"""Console sessions, keyed by the SHA-256 of their id (the id itself is never stored).

An item holds the principal's token hash (what the session stands for), the principal's
name (for the operator reading the table), when it began, and ``expire_at_epoch``: when it
ends unless used, also the table's TTL attribute, so DynamoDB deletes what nobody ended.
TTL deletes lazily (up to days late), so :meth:`SessionStore.token_hash_for` holds the
expiry itself: a session past its end is refused whether or not the item is still there.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from boto3.dynamodb.conditions import Attr

from knowledge_service.identity.session import LIFETIME_SECONDS, REFRESH_AFTER_SECONDS, new_session_id, session_hash
from knowledge_service.storage.toolkit import conditionally

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource


class SessionStore:
    def __init__(self, resource: DynamoDBServiceResource, table_name: str):
        self._table = resource.Table(table_name)

    def begin(self, token_hash: str, principal: str, now: datetime) -> tuple[str, datetime]:
        """A new session for the principal whose token hashes to ``token_hash``: its id (for the
        cookie, never stored) and when it ends unless used."""
        session_id = new_session_id()
        ends = int(now.timestamp()) + LIFETIME_SECONDS
        self._table.put_item(
            Item={
                "session_hash": session_hash(session_id),
                "token_hash": token_hash,
                "principal": principal,
                "created_at": now.isoformat(),
                "expire_at_epoch": ends,
            },
            ConditionExpression=Attr("session_hash").not_exists(),  # 256 random bits: never refused
        )
        return session_id, datetime.fromtimestamp(ends, tz=now.tzinfo)

    def token_hash_for(self, session_id: str, now: datetime) -> str | None:
        """The token hash the live session stands for, or None (unknown, ended or expired).
        Each use moves its end :data:`LIFETIME_SECONDS` on, written at most once per
        :data:`REFRESH_AFTER_SECONDS` so a busy page does not write on every read."""
        key = {"session_hash": session_hash(session_id)}
        item = self._table.get_item(Key=key, ConsistentRead=True).get("Item")
        if item is None:
            return None
        ends, at = int(str(item["expire_at_epoch"])), int(now.timestamp())
        if ends <= at:
            return None
        if ends - LIFETIME_SECONDS + REFRESH_AFTER_SECONDS <= at:
            # Conditional: a session ended meanwhile (signed out, another request) stays ended,
            # and the request that raced its end is not let in on the read made before it.
            refreshed = conditionally(
                lambda: self._table.update_item(
                    Key=key,
                    UpdateExpression="SET expire_at_epoch = :ends",
                    ConditionExpression=Attr("session_hash").exists() & Attr("expire_at_epoch").gt(at),
                    ExpressionAttributeValues={":ends": at + LIFETIME_SECONDS},
                )
            )
            if not refreshed:
                return None
        return str(item["token_hash"])

    def end(self, session_id: str) -> None:
        """End the session now (signing out): the item is deleted, so its id is worth nothing."""
        self._table.delete_item(Key={"session_hash": session_hash(session_id)})

    def expires_at(self, session_id: str) -> int | None:
        item = self._table.get_item(Key={"session_hash": session_hash(session_id)}, ConsistentRead=True).get("Item")
        return int(str(item["expire_at_epoch"])) if item else None
