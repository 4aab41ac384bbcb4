from __future__ import annotations

from collections.abc import Iterator

import pytest

from local_engine.double import Double, start_double
from tests import secrets


@pytest.fixture(scope="module")
def simulator() -> Iterator[Double]:
    with start_double(port=0, control_port=0, token="contract-token") as sim:
        secrets.register(sim.token)
        yield sim


@pytest.fixture(autouse=True)
def _fresh(simulator: Double) -> None:
    simulator.reset()
