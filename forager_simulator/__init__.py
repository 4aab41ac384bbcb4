"""A stateful FORAGER simulator: the test double for docs/upstream-contract.md.

    from forager_simulator import start_simulator

    sim = start_simulator(token="sim-secret-token")  # port 0: free ports
    ...
    sim.stop()

See README.md for the control port.
"""

from .faults import FAULT_MODES, Fault, FaultError, make_fault
from .server import Simulator, start_simulator
from .state import Project, SimulatorState

__all__ = [
    "FAULT_MODES",
    "Fault",
    "FaultError",
    "Project",
    "Simulator",
    "SimulatorState",
    "make_fault",
    "start_simulator",
]
