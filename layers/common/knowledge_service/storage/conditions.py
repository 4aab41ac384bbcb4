"""Kept for imports written before :mod:`knowledge_service.storage.toolkit`; import from there."""

from knowledge_service.storage.toolkit import WriteFailed, conditionally, is_condition_failure

__all__ = ["WriteFailed", "conditionally", "is_condition_failure"]
