from __future__ import annotations

from collections.abc import Iterator

import pytest

from local_engine import Engine, start_engine
from tests import secrets


@pytest.fixture(scope="module")
def simulator() -> Iterator[Engine]:
    with start_engine(port=0, control_port=0, token="contract-token") as sim:
        secrets.register(sim.token)
        yield sim


@pytest.fixture(autouse=True)
def _fresh(simulator: Engine) -> None:
    simulator.reset()
