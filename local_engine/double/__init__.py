"""The test double's parts: the control port, injected faults and the in-process network.

Only tests and the local stack import this room (an import-linter contract): the engine runs
without it.

    from local_engine.double import start_double

    sim = start_double(token="sim-secret-token")  # ports 0: free ports
    sim.set_fault("429", times=1)
    ...
    sim.stop()
"""

from local_engine.double.engine import Double, FaultSlot, start_double
from local_engine.double.faults import FAULT_MODES, Fault, FaultError, make_fault

__all__ = ["FAULT_MODES", "Double", "Fault", "FaultError", "FaultSlot", "make_fault", "start_double"]
