"""An upload's file names through both sides of the upstream contract, over loopback
(docs/upstream-contract.md, "Ingestion", "A file part's name on the wire"): the colony's fence
accepts a name, the client writes it percent-encoded, the engine decodes it with a real multipart
parser, and the job records exactly the name the colony accepted."""

from __future__ import annotations

import pytest

from knowledge_service.domain.workspace_paths import file_name
from knowledge_service.upstream.client import ForagerClient
from knowledge_service.upstream.multipart import FilePart
from local_engine.double import Double
from tests.unit.test_upload_names import ON_THE_WIRE

pytestmark = pytest.mark.contract


def test_every_accepted_name_is_recorded_by_the_engine_exactly_as_it_was_accepted(simulator: Double) -> None:
    # Given every kind of name the fence accepts, the probe's `;` names, `%22` and quotes included
    accepted = [file_name(name) for name in ON_THE_WIRE]
    assert "x; filename=/etc/passwd" in accepted and "a;rm -rf ~" in accepted and '"' in accepted
    files = [FilePart(name, 1, lambda: [b"x"]) for name in accepted]
    # When the client uploads them in one batch, and preflights the same batch
    client = ForagerClient(simulator.url, simulator.token, timeout_seconds=5.0)
    job = client.upload("falcon", files, force=False, admission_job_id=None, idempotency_key="names-1")
    measured = client.preflight("falcon", files, idempotency_key="names-2")
    # Then the engine's job names each file exactly as the colony accepted it, and nothing else
    held = next(j for j in simulator.jobs("falcon") if j["job_id"] == job.job_id)
    assert held["inputs"] == accepted
    assert measured.entry_count == len(accepted)
