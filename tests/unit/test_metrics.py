"""Each metric an operator acts on is emitted, with its dimensions, when its event happens.

The metrics are embedded-metric-format lines on stdout (Powertools Metrics); as Powertools' own
tests do, the test captures stdout and parses the JSON lines (``knowledge_service.observability``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import httpx
import pytest

from knowledge_service import door, observability
from knowledge_service.domain.exports import receive
from knowledge_service.domain.feed import operator
from knowledge_service.domain.feed.upkeep import Upkeep
from knowledge_service.errors import KnowledgeUnreachable, UpstreamMismatch, UpstreamRefused, UpstreamTimeout
from knowledge_service.runtime import Runtime
from knowledge_service.upstream.client import ArchiveDownload, ForagerClient
from local_engine.double import Double
from tests.unit.test_dead_letter_actions import NOW, _door_refused, _exhausted, _replay
from tests.unit.test_dead_letters import REF, T0, MemoryDeadLetters, entry
from tests.unit.test_feed_restore import publish, run

ARCHIVE = b"an archive of a knowledge base"
SHA256 = "3d4a4d8fbd53f7d37a5b6c92b8c8e4c9b1d5b5f6e7b2c2f0e1a9c8d7b6a5f4e3"  # not ARCHIVE's


@pytest.fixture(autouse=True)
def metric_set(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[None]:
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "schedule")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "KnowledgeService")
    observability.metrics.cache_clear()
    observability.metrics().clear_metrics()
    capsys.readouterr()
    yield
    observability.metrics().clear_metrics()
    observability.metrics.cache_clear()


def emitted(capsys: pytest.CaptureFixture[str], *, flush: bool = True) -> list[dict[str, Any]]:
    """Every EMF line printed so far (after the invocation's flush, as the door does)."""
    if flush and observability.metrics().metric_set:  # an empty flush only warns
        observability.metrics().flush_metrics()
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"_aws"')]


def metric(lines: list[dict[str, Any]], name: str) -> list[tuple[dict[str, str], list[float]]]:
    """Each line's dimensions and values of ``name``."""
    found = []
    for line in lines:
        (directive,) = line["_aws"]["CloudWatchMetrics"]
        if any(m["Name"] == name for m in directive["Metrics"]):
            assert directive["Namespace"] == "KnowledgeService"
            (dimensions,) = directive["Dimensions"]
            values = line[name] if isinstance(line[name], list) else [line[name]]
            found.append(({d: line[d] for d in dimensions}, values))
    return found


# ------------------------------------------------------------------ dead letters
def test_an_escalated_dead_letter_is_counted_with_the_service_dimension(capsys: pytest.CaptureFixture[str]) -> None:
    store = MemoryDeadLetters([entry(REF, n, resolved_days=None, dead_days=0) for n in (1, 2)])
    upkeep = Upkeep(store, None, None, None)  # type: ignore[arg-type]  # escalation reads only the dead letters

    assert upkeep.escalate(REF, T0 + timedelta(days=179)) == 0
    assert metric(emitted(capsys), "DeadLettersEscalated") == []

    assert upkeep.escalate(REF, T0 + timedelta(days=180)) == 2
    assert metric(emitted(capsys), "DeadLettersEscalated") == [({"service": "schedule"}, [2.0])]


# ------------------------------------------------------------------ export verification
class Upload:
    def __init__(self) -> None:
        self.done = ""

    def part(self, body: bytes) -> None:
        pass

    def complete(self) -> None:
        self.done = "complete"

    def abort(self) -> None:
        self.done = "abort"


class Archives:
    def __init__(self) -> None:
        self.upload = Upload()

    def begin(self, key: str) -> Upload:
        return self.upload


class Forager:
    @contextmanager
    def download_archive(self, export_id: str) -> Iterator[ArchiveDownload]:
        # FORAGER announces the digest it recorded; the bytes are what they are
        yield ArchiveDownload(announced_sha256=self.recorded, content_disposition="", chunks=iter([ARCHIVE]))

    def __init__(self, recorded: str) -> None:
        self.recorded = recorded


def _receive(sha256: str) -> str:
    archives = Archives()
    try:
        return receive(Forager(sha256), archives, "exp_1", "exports/exp_1", sha256, len(ARCHIVE), 1024)  # type: ignore[arg-type]
    finally:
        assert archives.upload.done in {"complete", "abort"}


def test_a_digest_mismatch_is_counted_and_no_verification(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UpstreamMismatch):
        _receive(SHA256)

    lines = emitted(capsys)
    assert metric(lines, "ExportDigestMismatches") == [({"service": "schedule"}, [1.0])]
    assert metric(lines, "ExportsVerified") == []


def test_a_verified_archive_is_counted_and_no_mismatch(capsys: pytest.CaptureFixture[str]) -> None:
    _receive(hashlib.sha256(ARCHIVE).hexdigest())

    lines = emitted(capsys)
    assert metric(lines, "ExportsVerified") == [({"service": "schedule"}, [1.0])]
    assert metric(lines, "ExportDigestMismatches") == []


# ------------------------------------------------------------------ FORAGER calls
def _client(answer: Any) -> ForagerClient:
    def handle(request: httpx.Request) -> httpx.Response:
        if isinstance(answer, Exception):
            raise answer
        return httpx.Response(answer, json={"error": {"code": "not_found", "message": "no such project"}})

    return ForagerClient("http://127.0.0.1:1", "a-credential", http=httpx.Client(transport=httpx.MockTransport(handle)))


@pytest.mark.parametrize(
    ("answer", "raised", "outcome"),
    [
        (httpx.ReadTimeout("slow"), UpstreamTimeout, "timeout"),
        (httpx.ConnectError("refused"), KnowledgeUnreachable, "unreachable"),
        (503, Exception, "upstream_error"),
        (404, UpstreamRefused, "refused"),
    ],
)
def test_a_forager_call_is_counted_by_its_outcome(
    capsys: pytest.CaptureFixture[str], answer: Any, raised: type[Exception], outcome: str
) -> None:
    with pytest.raises(raised):
        _client(answer).projects()

    lines = emitted(capsys, flush=False)  # printed at once: a line of its own
    assert metric(lines, "ForagerCalls") == [({"outcome": outcome, "service": "schedule"}, [1.0])]
    [(dimensions, [latency])] = metric(emitted(capsys), "ForagerCallLatency")
    assert dimensions == {"service": "schedule"} and latency >= 0


def test_a_forager_answer_is_counted_ok(capsys: pytest.CaptureFixture[str]) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"projects": []})

    ForagerClient("http://127.0.0.1:1", "c", http=httpx.Client(transport=httpx.MockTransport(handle))).projects()

    assert metric(emitted(capsys, flush=False), "ForagerCalls") == [({"outcome": "ok", "service": "schedule"}, [1.0])]


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        (200, "ok"),
        (404, "refused"),
        (httpx.ConnectError("refused"), "unreachable"),
        (httpx.ReadTimeout("slow"), "timeout"),
    ],
)
def test_an_archive_download_is_counted_like_every_call(
    capsys: pytest.CaptureFixture[str], answer: Any, outcome: str
) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        if isinstance(answer, Exception):
            raise answer
        return httpx.Response(answer, content=ARCHIVE if answer == 200 else b'{"error": {"code": "not_found"}}')

    client = ForagerClient("http://127.0.0.1:1", "c", http=httpx.Client(transport=httpx.MockTransport(handle)))
    try:
        with client.download_archive("exp_1") as download:
            assert b"".join(download.chunks) == ARCHIVE
    except (UpstreamRefused, KnowledgeUnreachable, UpstreamTimeout):
        assert outcome != "ok"
    assert [d["outcome"] for d, _ in metric(emitted(capsys, flush=False), "ForagerCalls")] == [outcome]


# ------------------------------------------------------------------ the door flushes
def test_the_door_publishes_what_an_invocation_counted_even_when_it_raises(capsys: pytest.CaptureFixture[str]) -> None:
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        observability.count("DeadLettersReplayed")
        raise RuntimeError("the invocation failed after counting")

    with pytest.raises(RuntimeError):
        door.measured(handler)({}, None)

    assert metric(emitted(capsys, flush=False), "DeadLettersReplayed") == [({"service": "schedule"}, [1.0])]


# ------------------------------------------------------------------ dead letters filed, replayed, discarded
def test_a_dead_letter_filed_at_the_door_then_discarded_is_counted_each_time(
    capsys: pytest.CaptureFixture[str], knowledge_on: Runtime, forager: Double
) -> None:
    entry = _door_refused(knowledge_on, forager)
    assert metric(emitted(capsys), "DeadLettersFiled") == [({"service": "schedule"}, [1.0])]

    operator.discard(knowledge_on.dead_letters, entry, "ada", "sender_error", NOW, lambda: "unused")
    assert metric(emitted(capsys), "DeadLettersDiscarded") == [({"service": "schedule"}, [1.0])]


def test_an_exhausted_retry_filed_then_replayed_is_counted_each_time(
    capsys: pytest.CaptureFixture[str], knowledge_on: Runtime, forager: Double
) -> None:
    entry, flaky, _ = _exhausted(knowledge_on, forager)
    assert metric(emitted(capsys), "DeadLettersFiled") == [({"service": "schedule"}, [1.0])]

    flaky.error = None
    _replay(knowledge_on, entry)
    lines = emitted(capsys)
    assert metric(lines, "DeadLettersReplayed") == [({"service": "schedule"}, [1.0])]
    assert metric(lines, "DeadLettersDiscarded") == []


# ------------------------------------------------------------------ feed passes degraded
def test_a_pass_that_degrades_its_stream_is_counted_once_and_a_clean_one_not(
    capsys: pytest.CaptureFixture[str], knowledge_on: Runtime, forager: Double
) -> None:
    publish(forager, 3, "before")
    run(knowledge_on, forager)
    assert metric(emitted(capsys), "FeedPassesDegraded") == []

    forager.feed_fault(REF, "ahead", 2)  # a restore: the cursor is ahead of the producer
    assert run(knowledge_on, forager).degraded == ["cursor_ahead"]
    lines = emitted(capsys)
    assert metric(lines, "FeedPassesDegraded") == [({"service": "schedule"}, [1.0])]
    assert [(d["outcome"], v) for d, v in metric(lines, "FeedDegradations")] == [("cursor_ahead", [1.0])]


def test_a_pass_counts_the_envelopes_it_read_and_acted_on(
    capsys: pytest.CaptureFixture[str], knowledge_on: Runtime, forager: Double
) -> None:
    publish(forager, 3, "before")
    outcome = run(knowledge_on, forager)
    assert outcome.received >= 3
    lines = emitted(capsys)
    assert metric(lines, "FeedEnvelopesRead") == [({"service": "schedule"}, [float(outcome.received)])]
    assert sum(values[0] for _, values in metric(lines, "FeedEnvelopesActed")) == outcome.acted
    assert metric(run(knowledge_on, forager) and emitted(capsys), "FeedEnvelopesRead") == []  # nothing new
