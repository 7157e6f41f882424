"""numpy kernels for elementwise_* ops and their gradients.

Large float operands are cut into row pieces that the kernel thread pool runs at once
(``_split``); results are bit for bit the same, and gradient sums the same for any thread count.
"""

from __future__ import annotations

from oar_kernels_cpu.kernels import _parallel, _split, array_module, kernel
from oar_kernels_cpu.kernels._util import align_y

xp = array_module(__name__)

_FORWARD = {
    "elementwise_add": xp.add,
    "elementwise_sub": xp.subtract,
    "elementwise_mul": xp.multiply,
    "elementwise_max": xp.maximum,
    "elementwise_min": xp.minimum,
    "elementwise_pow": xp.power,
    "elementwise_mod": xp.mod,
    "elementwise_floordiv": xp.floor_divide,
}


def _fits(small: xp.ndarray, big: xp.ndarray) -> bool:
    """Whether broadcasting ``small`` against ``big`` gives ``big``'s shape."""
    return small.ndim <= big.ndim and all(
        s == 1 or s == b for s, b in zip(small.shape[::-1], big.shape[::-1])
    )


def _out_buffer(x, y, donated):
    """A donated operand that can hold the result (same dtype, the broadcast shape), or None."""
    if x.dtype != y.dtype:
        return None
    if "X" in donated and (x.shape == y.shape or _fits(y, x)):
        return x
    if "Y" in donated and (x.shape == y.shape or _fits(x, y)):
        return y
    return None


def _aligned(x, y, axis):
    """``align_y`` for operands of different ranks, with no call where numpy's trailing
    alignment already is Fluid's (``axis`` -1 or the rank difference: an fc's bias)."""
    if axis == -1 or axis == abs(x.ndim - y.ndim):
        return x, y
    return align_y(x, y, axis)


def _make_forward(ufunc):
    def forward(inputs, attrs, donated=frozenset()):
        x = inputs["X"]
        y = inputs["Y"]
        if x.ndim != y.ndim:  # cheaper than comparing shapes; align_y keeps equal ranks as they are
            x, y = _aligned(x, y, attrs["axis"])
        try:
            # the common case: one call, no helpers. Sized by X, the operand Fluid broadcasts Y
            # onto (a larger Y, which oar also accepts, runs as one call too)
            if x.size < _parallel.SPLIT_MIN:
                if donated:
                    return {"Out": ufunc(x, y, out=_out_buffer(x, y, donated))}
                return {"Out": ufunc(x, y)}
            out = _out_buffer(x, y, donated) if donated else None
            return {"Out": _split.ufunc(xp, ufunc, x, y, out=out)}
        except ValueError:
            _mismatch(inputs, attrs)
            raise

    return forward


def _mismatch(inputs, attrs):
    """Raise the Fluid-style message for X and Y that do not broadcast."""
    x, y = inputs["X"], inputs["Y"]
    if x.shape == y.shape:
        return
    raise ValueError(
        f"X of shape {list(x.shape)} and Y of shape {list(y.shape)} do not broadcast (axis="
        f"{attrs['axis']}): each dim of Y, aligned at axis, must equal X's or be 1"
    ) from None


for _name, _ufunc in _FORWARD.items():
    kernel(_name, inplace=True)(_make_forward(_ufunc))


@kernel("elementwise_div")
def elementwise_div(inputs, attrs):
    x, y = inputs["X"], inputs["Y"]
    if x.shape != y.shape:
        x, y = align_y(x, y, attrs["axis"])
    try:
        if x.dtype.kind in "iu":
            return {"Out": xp.floor_divide(x, y)}  # Fluid's integer division truncates toward zero
        return {"Out": _split.ufunc(xp, xp.divide, x, y)}
    except ValueError:
        _mismatch(inputs, attrs)
        raise


def _grad(local):
    """Wrap ``local(x, y, out, dout) -> (dx, dy)`` (in aligned shapes) into a grad kernel."""

    def grad(inputs, attrs, wanted):
        x0, y0 = inputs["X"], inputs["Y"]
        dout = inputs["Out@GRAD"]
        x, y = (x0, y0) if x0.ndim == y0.ndim else _aligned(x0, y0, attrs["axis"])
        dx, dy = local(x, y, inputs.get("Out"), dout, "X@GRAD" in wanted, "Y@GRAD" in wanted)
        out = {}
        if dx is not None:
            dx = _split.reduce_to(xp, dx, x.shape)
            out["X@GRAD"] = dx if dx.shape == x0.shape else dx.reshape(x0.shape)
        if dy is not None:
            dy = _split.reduce_to(xp, dy, y.shape)
            out["Y@GRAD"] = dy if dy.shape == y0.shape else dy.reshape(y0.shape)
        return out

    return grad


def _add(x, y, out, d, wx, wy):
    return (d if wx else None), (d if wy else None)


def _sub(x, y, out, d, wx, wy):
    return (d if wx else None), (_split.ufunc(xp, xp.negative, d) if wy else None)


def _mul(x, y, out, d, wx, wy):
    return (
        _split.ufunc(xp, xp.multiply, d, y) if wx else None,
        _split.ufunc(xp, xp.multiply, d, x) if wy else None,
    )


def _div(x, y, out, d, wx, wy):
    dx = _split.ufunc(xp, xp.divide, d, y) if wx else None
    dy = _split.apply(xp, lambda d, x, y: -d * x / (y * y), d, x, y) if wy else None
    return dx, dy


def _max(x, y, out, d, wx, wy):
    return (
        _split.apply(xp, lambda d, x, y: d * (x >= y), d, x, y) if wx else None,
        _split.apply(xp, lambda d, x, y: d * ~(x >= y), d, x, y) if wy else None,
    )


def _min(x, y, out, d, wx, wy):
    return (
        _split.apply(xp, lambda d, x, y: d * (x <= y), d, x, y) if wx else None,
        _split.apply(xp, lambda d, x, y: d * ~(x <= y), d, x, y) if wy else None,
    )


def _pow(x, y, out, d, wx, wy):
    dx = d * y * xp.power(x, y - 1) if wx else None
    dy = (
        d * (out if out is not None else xp.power(x, y)) * xp.log(xp.where(x > 0, x, 1))
        if wy
        else None
    )
    return dx, dy


for _name, _local in {
    "elementwise_add": _add,
    "elementwise_sub": _sub,
    "elementwise_mul": _mul,
    "elementwise_div": _div,
    "elementwise_max": _max,
    "elementwise_min": _min,
    "elementwise_pow": _pow,
}.items():
    # add and sub gradients read only the shapes of X and Y: their buffers may be freed early
    _nnb = ("X", "Y") if _local in (_add, _sub) else ()
    kernel(_name + "_grad", wants_outputs=True, no_need_buffer=_nnb)(_grad(_local))
