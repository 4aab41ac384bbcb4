"""How many examples or trials a test runs, by Hypothesis profile (docs/testing.md, "Profiles").

``ci`` (the default: ``make test``, ``make check``) sizes each count to the time budget of
``make test``; ``deep`` (``make deep``: ``pytest --hypothesis-profile=deep``) runs the large
counts for a deliberate long run. A test names both counts where it is decorated, so a reader
sees what CI tries and what the deep run tries."""

from __future__ import annotations

from hypothesis import settings


def is_deep() -> bool:
    """True under the ``deep`` profile. Read at import, after pytest loaded the profile."""
    return settings.get_current_profile_name() == "deep"


def sized(*, ci: int, deep: int) -> int:
    """``deep`` examples or trials under the deep profile, else ``ci``."""
    if ci > deep:
        raise ValueError(f"the CI count {ci} is above the deep count {deep}")
    return deep if is_deep() else ci
