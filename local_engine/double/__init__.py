"""The test double's parts: the control port, injected faults and the in-process network. Only tests
and the local stack use them.
"""
