"""The compiled loop of the bias add + relu fusion (imported when a plan first uses it)."""

from __future__ import annotations

from oar_kernels_numba._jit import loop, prange


@loop
def bias_relu(x, b, out):
    # x, out: (outer, C, inner); b: (C,)
    for o in prange(x.shape[0]):
        for c in range(x.shape[1]):
            bc = b[c]
            for i in range(x.shape[2]):
                t = x[o, c, i] + bc
                out[o, c, i] = t if (t > 0 or t != t) else 0


@loop
def bias_relu_rows(x, b, out):
    # x, out: (outer, C); b: (C,). The 3-D loop's innermost run of length 1 does not
    # vectorise (12x slower for an fc's (batch, C) output)
    for o in prange(x.shape[0]):
        for c in range(x.shape[1]):
            t = x[o, c] + b[c]
            out[o, c] = t if (t > 0 or t != t) else 0
