from __future__ import annotations

from collections.abc import Iterator

import pytest

from forager_simulator import Simulator, start_simulator
from tests import secrets


@pytest.fixture(scope="module")
def simulator() -> Iterator[Simulator]:
    with start_simulator(port=0, control_port=0, token="contract-token") as sim:
        secrets.register(sim.token)
        yield sim


@pytest.fixture(autouse=True)
def _fresh(simulator: Simulator) -> None:
    simulator.reset()
