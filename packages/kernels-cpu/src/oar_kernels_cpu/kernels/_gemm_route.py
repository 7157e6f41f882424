"""Which way a large product runs when results may depend on the summing order: on OpenBLAS's
own threads, or in pieces on oar's kernel pool, chosen by the time each way took.

On a quiet machine OpenBLAS's spinning workers finish a 128x784x512 product before the pool
can (546 against 650 µs). On a busy one they wait for each other and the same step takes 5 to
15 times longer, where the pool's blocking workers lose only their share (measured here at a
load of 3 to 7 on 2 cores). Neither wins everywhere, so each product shape keeps the recent
time per multiply-add of both ways and runs the faster one; the other way is tried again
every :data:`PROBE_MIN` to :data:`PROBE_MAX` calls (fewer, the more often the probe loses), so
the choice follows the machine's load. ``OAR_BLAS_LARGE_PRODUCTS=openblas`` or ``=pool``
fixes the way. Both ways give the product to float rounding; ``FLAGS_cpu_deterministic``
bypasses this module (always the pool, bit-identical at any thread count).
"""

from __future__ import annotations

import os
import threading
from typing import Final

OPENBLAS: Final = "openblas"
POOL: Final = "pool"
#: the fixed way, if the user set one (``OAR_BLAS_LARGE_PRODUCTS``); else chosen by time
FIXED = os.environ.get("OAR_BLAS_LARGE_PRODUCTS", "auto").strip().lower()
if FIXED not in (OPENBLAS, POOL, "auto"):
    raise ValueError(f"OAR_BLAS_LARGE_PRODUCTS must be 'auto', 'openblas' or 'pool', got {FIXED!r}")
#: weight of the newest time in a way's running average (the rest is its history)
NEW_WEIGHT = 0.3
#: a call counts as at most this many times the running average (one preempted call is not
#: a busy machine; a busy machine still doubles the average in two calls)
SPIKE_CAP = 2.0
#: calls of the faster way between tries of the other, after a try the other won / lost
PROBE_MIN, PROBE_MAX = 16, 512


class Route:
    """The running choice for one product shape: :meth:`pick` a way, run it, :meth:`record`."""

    __slots__ = ("cost", "best", "countdown", "interval", "warm")

    def __init__(self) -> None:
        self.cost: dict[str, float] = {}  # way -> running seconds per multiply-add
        self.best = OPENBLAS
        self.countdown = 0
        self.interval = PROBE_MIN
        self.warm = False  # the first call (page faults, first use of the threads) not counted

    def pick(self) -> str:
        """The way to run the next call: the faster one, or the other when its try is due."""
        if len(self.cost) < 2:  # each way measured once first
            return OPENBLAS if OPENBLAS not in self.cost else POOL
        if self.countdown > 0:
            self.countdown -= 1
            return self.best
        return POOL if self.best == OPENBLAS else OPENBLAS

    def record(self, way: str, seconds: float, macs: int) -> None:
        """Fold one call's time into ``way``'s cost and re-rank the ways. A try of the slower
        way replaces its cost outright: its old average is stale by up to :data:`PROBE_MAX`
        calls, and the load may have gone since."""
        if not self.warm:
            self.warm = True
            return
        cost = seconds / max(macs, 1)
        old = self.cost.get(way)
        probe = old is not None and len(self.cost) == 2 and way != self.best
        if old is None or probe:
            self.cost[way] = cost
        else:  # one preempted call moves the average by at most SPIKE_CAP times its step
            self.cost[way] = old + NEW_WEIGHT * (min(cost, SPIKE_CAP * old) - old)
        if len(self.cost) < 2:
            return
        best = min(self.cost, key=self.cost.__getitem__)
        if old is None:  # both ways measured: start the schedule
            self.countdown = self.interval
        elif probe:  # a try that lost backs off; one that won resets the schedule
            self.interval = PROBE_MIN if best == way else min(2 * self.interval, PROBE_MAX)
            self.countdown = self.interval
        self.best = best


_routes: dict[tuple, Route] = {}
_lock = threading.Lock()


def route_for(key: tuple) -> Route:
    """The route kept for products of this shape key (made on first use)."""
    route = _routes.get(key)
    if route is None:
        with _lock:
            route = _routes.setdefault(key, Route())
    return route


def fixed_way() -> str | None:
    """The way the user fixed with ``OAR_BLAS_LARGE_PRODUCTS``, or None (chosen by time)."""
    return None if FIXED == "auto" else FIXED
