"""``var[i]``, ``var[i:j]``, ``var[i][j]`` on eager variables.

Reading needs no gradient in the seeds (printing a kernel or a channel), so a
variable that does not need a gradient, or indexing under ``no_grad``, is a
plain numpy view copied into a new variable. Where a gradient must flow, the
registered ``slice`` op is used (the same op static ``x[...]`` lowers to).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from oar.dygraph.varbase import VarBase, _host
from oar.framework.mode import _dygraph_tracer

_warned = False


def _normalise(item: Any) -> tuple:
    if not isinstance(item, tuple):
        item = (item,)
    out = []
    for it in item:
        if isinstance(it, VarBase):
            it = int(it)
        if isinstance(it, (np.integer,)):
            it = int(it)
        if not isinstance(it, (int, slice)) and it is not Ellipsis:
            raise TypeError(f"dygraph indexing supports ints and slices, given {type(it).__name__}")
        out.append(it)
    return tuple(out)


def getitem(x: VarBase, item: Any) -> VarBase:
    item = _normalise(item)
    tracer = _dygraph_tracer()
    arr = _host(x._value)
    for axis, it in enumerate(item):
        if isinstance(it, int) and not -arr.shape[axis] <= it < arr.shape[axis]:
            raise IndexError(
                f"index {it} is out of range for axis {axis} of variable '{x.name}' "
                f"with shape {list(arr.shape)}"
            )
    if x.stop_gradient or tracer is None or not tracer._has_grad:
        return VarBase(np.array(arr[item]), stop_gradient=True)
    return _slice_op(tracer, x, item, arr.shape)


def _slice_op(tracer: Any, x: VarBase, item: tuple, shape: tuple) -> VarBase:
    from oar.plugins import registries

    if "slice" not in registries().ops or any(it is Ellipsis for it in item):
        global _warned
        if not _warned:
            _warned = True
            warnings.warn(
                f"indexing '{x.name}': the 'slice' op is not installed, so the result is a detached copy and "
                f"no gradient flows through indexing (install the nn ops for differentiable indexing)",
                stacklevel=3,
            )
        return VarBase(np.array(_host(x._value)[item]), stop_gradient=True)
    axes, starts, ends, decrease = [], [], [], []
    for axis, it in enumerate(item):
        if isinstance(it, int):
            it = it % shape[axis]
            axes.append(axis), starts.append(it), ends.append(it + 1), decrease.append(axis)
        else:
            start, stop, step = it.indices(shape[axis])
            if step != 1:
                raise NotImplementedError(
                    "dygraph indexing with a gradient supports step 1 slices only"
                )
            axes.append(axis), starts.append(start), ends.append(stop)
    out = VarBase(None)
    attrs = {"axes": axes, "starts": starts, "ends": ends}
    if decrease:
        attrs["decrease_axis"] = decrease
    tracer.trace_op("slice", {"Input": [x]}, {"Out": [out]}, attrs)
    return out
