"""Size thresholds of the compiled kernels (no numba import: the fusion module reads them)."""

from __future__ import annotations

import os

#: elements below which the numpy kernel runs instead: a compiled call's dispatch costs ~3 µs
#: more than a numpy call, which only pays off on larger arrays (fit_a_line's 13x1 weights)
SMALL = int(os.environ.get("OAR_NUMBA_SMALL", 4096))

#: elements below which a loop stays on one thread. A parallel launch on numba's workqueue
#: layer costs 35-90 µs on a 2-core machine (more right after a GEMM, while OpenBLAS's
#: helper threads still spin), and most loops here are memory bound: at 2 threads a relu
#: loop ran slower in parallel than serially at every size up to 1M elements (65536: 35-80
#: µs against 5; 1M: 134 against 96), about even at 4M; a loop calling ``exp`` broke even
#: near 200k. 2M elements keeps the MLP's 128x512 activations and 784x512 optimizer
#: updates on one thread (they took 4-5x longer in parallel).
PARALLEL_MIN = int(os.environ.get("OAR_NUMBA_PARALLEL_MIN", 1 << 21))

#: the largest pooling window compiled (taps, stride): larger ones (global and adaptive
#: pooling) stay with numpy, whose whole-batch passes win there
MAX_TAPS, MAX_STRIDE = 9, 3
