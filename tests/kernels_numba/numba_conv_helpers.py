"""Set-up shared by the conv tests of oar-kernels-numba (test_numba_conv*.py): the module-level
skip, conv2d attrs, and the comparison of a conv2d and its gradients with the numpy kernel.
Imported by name: tests/kernels_numba/conftest.py puts this folder on ``sys.path``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

BOTH = frozenset({"Input@GRAD", "Filter@GRAD"})


def require_numba() -> None:
    """Skip the calling test module unless oar-kernels-numba and numba work here."""
    pytest.importorskip("oar_kernels_numba")
    from oar_kernels_numba.compat import unavailable_reason

    if unavailable_reason() is not None:
        pytest.skip(f"numba unavailable: {unavailable_reason()}", allow_module_level=True)


def conv_attrs(pads=(1, 1), stride=1, dilation=1, groups=1, algorithm="EXPLICIT", fmt="NCHW"):
    """conv2d's attrs for a square stride and dilation."""
    return {
        "strides": [stride, stride],
        "paddings": list(pads),
        "padding_algorithm": algorithm,
        "dilations": [dilation, dilation],
        "groups": groups,
        "data_format": fmt,
    }


def matches_numpy(
    numba_pair: Callable,
    x: np.ndarray,
    w: np.ndarray,
    attrs: dict,
    close: Callable,
    rng: np.random.Generator,
    wanted: frozenset = BOTH,
) -> None:
    """conv2d and the ``wanted`` gradients by oar-kernels-numba against the kernel it overrides:
    same shapes and dtypes, values within ``close(got, want, what)``."""
    dtype = x.dtype.name
    mine, numpy_k = numba_pair("conv2d", dtype)
    gmine, gnumpy = numba_pair("conv2d_grad", dtype)
    ins = {"Input": x, "Filter": w}
    want = numpy_k(dict(ins), attrs)["Output"]
    results = [("Output", mine(dict(ins), attrs)["Output"], want)]
    gins = dict(ins, **{"Output@GRAD": rng.standard_normal(want.shape).astype(dtype)})
    got_g = gmine(dict(gins), attrs, wanted)
    want_g = gnumpy(dict(gins), attrs, wanted)
    assert got_g.keys() == want_g.keys() == set(wanted)
    results += [(k, got_g[k], want_g[k]) for k in want_g]
    for what, got, exp in results:
        assert got.shape == exp.shape and got.dtype == exp.dtype, what
        close(got, exp, what)
