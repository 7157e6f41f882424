"""Size thresholds of the compiled kernels (no numba import: the fusion module reads them)."""

from __future__ import annotations

import os

#: elements below which the numpy kernel runs instead: a compiled call's dispatch costs ~3 µs
#: more than a numpy call, which only pays off on larger arrays (fit_a_line's 13x1 weights)
SMALL = int(os.environ.get("OAR_NUMBA_SMALL", 4096))

#: elements below which a loop stays on one thread (a parallel launch costs ~10-20 µs)
PARALLEL_MIN = int(os.environ.get("OAR_NUMBA_PARALLEL_MIN", 1 << 16))

#: the largest pooling window compiled (taps, stride): larger ones (global and adaptive
#: pooling) stay with numpy, whose whole-batch passes win there
MAX_TAPS, MAX_STRIDE = 9, 3
