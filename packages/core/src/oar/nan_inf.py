"""``FLAGS_check_nan_inf``: stop at the first op whose output holds NaN or Inf.

Off (the default) costs nothing: plans and the eager tracer are the plain
ones. On, the Executor builds checked plans (``oar.executor.checked_plan``)
and the dygraph ``Tracer`` runs checked methods, both calling
:func:`check_output` after each op; switching the flag rebuilds plans.
The error names the op, the output variable and the user's line, as Fluid's
``find nan or inf`` error does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.errors import OpRuntimeError
from oar.lod_tensor import LoDTensor, SelectedRows


class NanInfError(OpRuntimeError):
    """An op produced NaN or Inf while ``FLAGS_check_nan_inf`` is on."""


def _plain(value: Any) -> Any:
    if isinstance(value, LoDTensor):
        return value._array
    if isinstance(value, SelectedRows):
        return value.value
    return value


def bad_values(value: Any) -> str | None:
    """A short description of the non-finite entries of a float array, or None if all finite."""
    value = _plain(value)
    dtype = getattr(value, "dtype", None)
    if dtype is None or getattr(dtype, "kind", "") not in "fc":
        return None
    finite = np.isfinite(value)
    if bool(finite.all()):
        return None
    nan = int(np.isnan(value).sum())
    inf = int((~finite).sum()) - nan
    first = int(np.flatnonzero(~np.asarray(finite).ravel())[0])
    return (
        f"{nan} NaN and {inf} Inf among {int(np.size(value))} values (first at flat index {first})"
    )


def check_output(
    op_type: str, slot: str, name: str | None, value: Any, callsite: Any, created: bool
) -> None:
    """Raise :class:`NanInfError` if ``value`` (output ``slot`` of ``op_type``) is not finite."""
    found = bad_values(value)
    if found is not None:
        raise _error(op_type, slot, name, found, callsite, created)


def _error(
    op_type: str, slot: str, name: str | None, found: str, callsite: Any, created: bool
) -> NanInfError:
    var = f"'{name}'" if name else "(a gradient)"
    exc = NanInfError(
        f"output {slot} {var} contains NaN or Inf: {found} (FLAGS_check_nan_inf is on; "
        f"the first op producing a non-finite value is reported)",
        op=op_type,
        variable=name,
        callsite=callsite,
        created=created,
    )
    exc.slot = slot
    exc.found = found
    return exc


# --- dygraph: checked tracer methods, installed while the flag is on --------------------------
_ORIGINAL: dict = {}


def _checked_trace_op(self, type, inputs, outputs, attrs, stop_gradient=False):
    try:
        _ORIGINAL["trace_op"](self, type, inputs, outputs, attrs, stop_gradient)
    except NanInfError as exc:  # raised by the checked general call: name the output variable
        vs = outputs.get(exc.slot) if exc.variable is None else None
        v = (vs[0] if isinstance(vs, (list, tuple)) else vs) if vs else None
        name = getattr(v, "name", None)
        if not name:
            raise
        raise _error(type, exc.slot, name, exc.found, exc.callsite, False) from None
    site = None
    for slot, vs in outputs.items():
        for v in vs if isinstance(vs, (list, tuple)) else (vs,):
            value = getattr(v, "_value", None)
            if value is not None and bad_values(value) is not None:
                if site is None:
                    site = _user_site()
                check_output(type, slot, getattr(v, "name", None), value, site, False)


def _checked_trace_simple(self, type, ins, attrs):
    out = _ORIGINAL["trace_simple"](self, type, ins, attrs)
    if bad_values(out._value) is not None:
        check_output(type, "Out", out.name, out._value, _user_site(), False)
    return out


def _checked_call(self, info, values, attrs, wanted):
    res = _ORIGINAL["_call"](self, info, values, attrs, wanted)
    for slot, value in res.items():
        for v in value if isinstance(value, list) else (value,):
            if v is not None and bad_values(v) is not None:
                check_output(info.opdef.type, slot, None, v, _user_site(), False)
    return res


_CHECKED = {
    "trace_op": _checked_trace_op,
    "trace_simple": _checked_trace_simple,
    "_call": _checked_call,  # the general path, and backward's grad ops
}


def _user_site() -> Any:
    from oar.framework.callsite import user_callsite

    return user_callsite()


def install_dygraph_checks(on: bool) -> None:
    """Swap the Tracer's op-running methods for checked ones (on) or back (off)."""
    from oar.dygraph.tracer import Tracer

    if not _ORIGINAL:
        _ORIGINAL.update({name: Tracer.__dict__[name] for name in _CHECKED})
    for name, checked in _CHECKED.items():
        setattr(Tracer, name, checked if on else _ORIGINAL[name])


def dygraph_checks_installed() -> bool:
    from oar.dygraph.tracer import Tracer

    return bool(_ORIGINAL) and Tracer.__dict__["trace_op"] is _checked_trace_op


def follow_flag(on: bool) -> None:
    """``FLAGS_check_nan_inf`` listener: install or remove the dygraph checks as it changes."""
    if on or _ORIGINAL:
        install_dygraph_checks(bool(on))
