"""The parameter-server runtime's error type."""

from __future__ import annotations


class PserverError(RuntimeError):
    """A parameter-server failure: an unreachable or vanished peer, a refused message, a timeout.

    The message names the endpoint or trainer concerned."""
