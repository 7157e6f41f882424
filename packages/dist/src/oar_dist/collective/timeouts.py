"""How long a rank waits for its peers in a collective before it gives up."""

from __future__ import annotations

import os

ENV_TIMEOUT = "OAR_COLLECTIVE_TIMEOUT"
DEFAULT_TIMEOUT = 60.0


def collective_timeout() -> float:
    """Seconds from ``OAR_COLLECTIVE_TIMEOUT`` (default 60): a dead peer ends a job, never hangs it."""
    raw = os.environ.get(ENV_TIMEOUT)
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{ENV_TIMEOUT} must be a number of seconds, given {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{ENV_TIMEOUT} must be > 0 seconds, given {raw!r}")
    return value
