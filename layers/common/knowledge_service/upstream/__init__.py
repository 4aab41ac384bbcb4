"""The FORAGER client: the only code that speaks HTTP to the engine (docs/upstream-contract.md)."""
