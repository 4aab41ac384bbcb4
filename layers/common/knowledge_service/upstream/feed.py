"""The change feed (docs/upstream-contract.md, "Change feed"): the feed's pages, the head
revision, the sources the polling pass compares, and the receipts owed to the producer."""

from __future__ import annotations

from typing import Any

from knowledge_service.errors import UpstreamRefused
from knowledge_service.upstream import models
from knowledge_service.upstream.transport import Transport

FEED_REFUSALS = frozenset({"cursor_expired", "cursor_ahead", "generation_changed"})


class FeedCalls(Transport):
    def feed(self, project_ref: str, *, generation: str | None, after: int, limit: int = 500) -> models.FeedPage:
        """The project's feed after ``after``; a 409 cursor refusal raises ``FeedCursorRefused``."""
        params: dict[str, Any] = {"after": after, "limit": limit}
        if generation:
            params["generation"] = generation
        try:
            return self._get(f"/api/projects/{project_ref}/feed", models.FeedPage, params=params)
        except UpstreamRefused as refused:
            if refused.upstream_status == 409 and refused.upstream_code in FEED_REFUSALS:
                raise models.FeedCursorRefused(
                    refused.upstream_code, refused.upstream_message, refused.data or {}
                ) from refused
            raise

    def head_revision(self, project_ref: str) -> models.HeadRevision | None:
        try:
            return self._get(f"/api/projects/{project_ref}/revisions/head", models.HeadRevision)
        except UpstreamRefused as refused:
            if refused.upstream_status == 404:
                return None
            raise

    def sources(self, project_ref: str) -> list[models.ForagerSource]:
        return self._get(f"/api/projects/{project_ref}/sources", models.SourceList).sources

    def receipt(
        self, project_ref: str, event_id: str, status: str, detail: str, *, synthesized: bool = False
    ) -> models.ReceiptAnswer:
        body: dict[str, Any] = {"event_id": event_id, "status": status, "detail": detail}
        if synthesized:
            body["synthesized"] = True
        return self._post(
            f"/api/projects/{project_ref}/feed/receipts",
            body,
            models.ReceiptAnswer,
            idempotency_key=f"receipt:{event_id}:{status}",
        )
