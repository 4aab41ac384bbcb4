"""The local engine: a FORAGER of its own that serves docs/upstream-contract.md.

    from local_engine import start_engine

    engine = start_engine(token="a-secret-token", data_dir=Path("engine-data"))  # port 0: a free port
    ...
    engine.stop()

The package has a room per job (README.md, "Layout"); the test double, with its control port,
is ``local_engine.double``.
"""

from local_engine.ingestion.workers import default_workers
from local_engine.serving.server import Engine, start_engine
from local_engine.serving.state import EngineState, Project

__all__ = ["Engine", "EngineState", "Project", "default_workers", "start_engine"]
