"""A stateful FORAGER simulator: the test double for docs/upstream-contract.md.

    from local_engine import start_engine

    sim = start_engine(token="sim-secret-token")  # port 0: free ports
    ...
    sim.stop()

See README.md for the control port.
"""

from .faults import FAULT_MODES, Fault, FaultError, make_fault
from .server import Engine, start_engine
from .state import EngineState, Project
from .workers import default_workers

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
