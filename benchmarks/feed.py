"""One feed pass over 10,000 envelopes against moto in-process (tables from template.yaml).

The feed is served by an in-memory producer (no HTTP), so the figure is the consumer's own
cost: envelopes per second, and DynamoDB requests per envelope — a deterministic count,
every botocore call counted at ``BaseClient._make_api_call``. Two lanes: ``off`` (record,
receipt, advance: the floor every envelope pays) and ``suggest`` (each revision also claimed
and studied against a one-source list).
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.emulator import emulated
from devstack.metering import aws_calls
from knowledge_service.domain.feed.consumer import FeedConsumer
from knowledge_service.models import AutoStudy
from knowledge_service.upstream.models import Capabilities, ExportList, FeedPage, ForagerSource, ReceiptAnswer

ENVELOPES = 10_000
KB = "falcon"


class MemoryFeed:
    """A producer with ``count`` revisions (every tenth an export of the one before) on one stream."""

    def __init__(self, count: int) -> None:
        self.envelopes: list[dict[str, Any]] = []
        for sequence in range(1, count + 1):
            export = sequence % 10 == 0
            revision = f"krev_{sequence - 1 if export else sequence}"
            payload: dict[str, Any] = (
                {"revision_id": revision, "export_id": f"exp_{sequence}", "export_format": "anthill_package"}
                if export
                else {"revision_id": revision, "publication_sequence": sequence, "logical_content_hash": f"h{sequence}"}
            )
            self.envelopes.append(
                {
                    "protocol_version": 1,
                    "event_id": f"evt_{sequence}",
                    "event_type": "knowledge.export.completed" if export else "knowledge.revision.published",
                    "sequence": sequence,
                    "stream": "knowledge",
                    "producer_instance_id": "fgi_bench",
                    "producer_generation": "gen_1",
                    "occurred_at": "2026-11-30T06:00:00Z",
                    "payload": payload,
                }
            )

    def capabilities(self) -> Capabilities:
        return Capabilities.model_validate({"instance_id": "fgi_bench", "generation": "gen_1", "change_feed": True})

    def feed(self, project_ref: str, *, generation: str | None, after: int, limit: int = 500) -> FeedPage:
        page = self.envelopes[after : after + limit]
        return FeedPage(
            instance_id="fgi_bench",
            generation="gen_1",
            stream="knowledge",
            envelopes=page,
            head_sequence=len(self.envelopes),
        )

    def sources(self, project_ref: str) -> list[ForagerSource]:
        return [ForagerSource(source_id="src_1", project_ref=project_ref, name="a.md", logical_content_hash="h")]

    def exports(self, project_ref: str) -> ExportList:
        return ExportList()  # read only to reconcile a gap, and this producer leaves none

    def receipt(
        self, project_ref: str, event_id: str, status: str, detail: str, *, synthesized: bool = False
    ) -> ReceiptAnswer:
        return ReceiptAnswer(event_id=event_id, status=status)


def _one(policy: AutoStudy, count: int) -> dict[str, object]:
    with emulated("FeedFunction", with_forager=False) as (rt, _):
        consumer = FeedConsumer(rt.feed_stores(), MemoryFeed(count))
        with aws_calls() as counts:
            started = time.perf_counter()
            outcome = consumer.run(KB, KB, policy)
            elapsed = time.perf_counter() - started
    dynamodb = sum(v for k, v in counts.items() if k.startswith("dynamodb:"))
    assert outcome.recorded == count and outcome.watermark == count
    return {
        "policy": policy.value,
        "envelopes": count,
        "seconds": round(elapsed, 2),
        "envelopes_per_second": round(count / elapsed),
        "dynamodb_requests": dynamodb,
        "dynamodb_per_envelope": round(dynamodb / count, 3),
        "acted": outcome.acted,
        "calls": dict(sorted(counts.items())),
    }


STUDIED_ENVELOPES = 1_000  # the study lane costs ~4.5 requests an envelope under moto: 1,000 keeps make bench short


def measure(count: int = ENVELOPES, studied: int = STUDIED_ENVELOPES) -> list[dict[str, object]]:
    return [_one(AutoStudy.OFF, count), _one(AutoStudy.SUGGEST, studied)]


if __name__ == "__main__":
    import json
    import sys

    sizes = [int(a) for a in sys.argv[1:3]]
    print(json.dumps(measure(*sizes), indent=2))
