"""A stateful FORAGER simulator: the test double for docs/upstream-contract.md.

    from local_engine import start_engine

    sim = start_engine(token="sim-secret-token")  # port 0: free ports
    ...
    sim.stop()

See README.md for the control port.
"""

from local_engine.double.faults import FAULT_MODES, Fault, FaultError, make_fault
from local_engine.ingestion.workers import default_workers
from local_engine.serving.server import Engine, start_engine
from local_engine.serving.state import EngineState, Project

__all__ = [
    "FAULT_MODES",
    "Engine",
    "EngineState",
    "Fault",
    "FaultError",
    "Project",
    "default_workers",
    "make_fault",
    "start_engine",
]
