"""Turning a compiled plan into straight-line Python code.

Per-op Python overhead decides small-model speed. A generic loop over step
tuples pays, per op, for unpacking the tuple, building the inputs dict in a
comprehension (a frame of its own), checking flags and looping over outputs.
Every one of those facts is fixed when the plan is compiled, so we generate
(once, with ``exec``, as ``attrs`` and ``dataclasses`` do) code that does only
the work left, e.g. for one op::

    res = _fn3({'X': env['x'], 'Y': env['w']}, _attrs3)
    v = res['Out']
    if v is not None:
        env['fc_0.tmp_0'] = v
    res = v = None
    env.pop('x@GRAD', None)

:func:`make_run_fns` strings up to 200 such ops into one function (one call
per chunk, ``i = k`` before each op so a failure names it);
:func:`make_step_fn` wraps a single op, for tests and tools.

Kernels registered with ``inplace=True`` may reuse an input's buffer for an
output. The plan names the candidates (inputs that die at this op and are
neither fed, fetched nor persistable); the generated code donates one only
if, at run time, nothing else references the array (its reference count is
the baseline measured below, so no other variable, view or user holds it) and
it owns its writeable memory -- the test CPython's own temporary elision uses.

Variable names are embedded with ``repr``, so any string is safe. Steps with
rarer needs (LoD kernels, SelectedRows densifying, duplicable outputs) get a
closure that runs the generic code for that one step; the plan falls back to
its generic loop when LoD is present at all (see ``Plan.run``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from oar.lod_tensor import SelectedRows
from oar.registry import EMPTY_VAR

# below this size a fresh allocation is cheaper than the checks that donation needs,
# and keeping an array cheaper than swapping it for a shape stand-in
MIN_DONATED_BYTES = 16384

_ZEROS = bytes(64)


def shape_stand_in(value):
    """A read-only zero-strided array with ``value``'s shape and dtype (no data of its own).

    Replaces an array that later ops read only through ``no_need_buffer``
    slots, so its memory is released early. Non-arrays are kept as they are.
    """
    if type(value) is not np.ndarray or value.dtype.itemsize > len(_ZEROS) or value.dtype.hasobject:
        return value
    return np.ndarray(value.shape, value.dtype, buffer=_ZEROS, strides=(0,) * value.ndim)


def _exec(lines: list, namespace: dict, label: str) -> Callable:
    exec(compile("\n".join(lines), f"<oar plan step {label}>", "exec"), namespace)
    return namespace["step"]


def _refcount_baseline() -> int:
    """sys.getrefcount of an array held only by ``env``, in exactly the generated code's shape."""
    probe = _exec(
        [
            "def step(env):",
            "  try:",
            "    a0 = env['x']",
            "    return _rc(a0)",
            "  except Exception:",
            "    raise",
        ],
        {"_rc": sys.getrefcount},
        "probe",
    )
    return probe({"x": np.empty(1)})


_RC_BASELINE = _refcount_baseline()


class StepFailed(Exception):
    """Raised by a fused plan function: op ``index`` raised ``__cause__``."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


def _is_generic(flags: tuple, outs: tuple) -> bool:
    lod, _wants_outputs, densify = flags[:3]
    return bool(lod or densify or any(dup for _s, _n, dup in outs))


def _body(
    k: int,
    fn: Callable,
    singles: tuple,
    dups: tuple,
    attrs: dict,
    outs: tuple,
    frees: tuple,
    wanted: frozenset,
    flags: tuple,
    donatable: tuple,
    shrink: tuple,
    ns: dict,
) -> list:
    """Statements (indented 4) running step ``k`` against ``env``; fills ``ns`` with its constants.

    Locals are cleared at the end, so no stale reference keeps an array alive
    (or blocks its donation) after the step.
    """
    if _is_generic(flags, outs):
        ns[f"_g{k}"] = _generic_step(fn, singles, dups, attrs, outs, frees, wanted, flags, shrink)
        return [f"    _g{k}(env)"]
    wants_outputs = flags[1]
    ns[f"_fn{k}"], ns[f"_attrs{k}"], ns[f"_wanted{k}"] = fn, attrs, wanted
    lines = []
    items = []
    for i, (s, n) in enumerate(singles):
        if s in donatable:
            lines.append(f"    a{i} = env[{n!r}]")
            items.append(f"{s!r}: a{i}")
        else:
            items.append(f"{s!r}: env[{n!r}]")
    items += [f"{s!r}: [" + ", ".join(f"env[{n!r}]" for n in names) + "]" for s, names in dups]
    extra = f", _wanted{k}" if wants_outputs else ""
    call = f"_fn{k}({{" + ", ".join(items) + f"}}, _attrs{k}{extra}"
    if donatable:
        # cheap tests first: most arrays in small programs are held elsewhere or tiny
        lines.append("    donated = None")
        for i, (s, _n) in enumerate(singles):
            if s in donatable:
                ns[f"_d{k}_{i}"] = frozenset((s,))
                lines += [
                    f"    if (type(a{i}) is _nd and a{i}.nbytes >= _min and _rc(a{i}) == _base"
                    f" and a{i}.base is None and a{i}.flags.writeable):",
                    f"        donated = _d{k}_{i} if donated is None else donated | _d{k}_{i}",
                ]
        # the inputs dict is built after the checks: it holds references too
        lines += [
            "    if donated is None:",
            f"        res = {call})",
            "    else:",
            f"        res = {call}, donated=donated)",
        ]
        lines.append(
            "    "
            + " = ".join(f"a{i}" for i, (s, _n) in enumerate(singles) if s in donatable)
            + " = None"
        )
    else:
        lines.append(f"    res = {call})")
    for s, n, _dup in outs:
        if n == EMPTY_VAR:
            continue
        get = f"res.get({s!r})" if wants_outputs else f"res[{s!r}]"
        lines += [f"    v = {get}", "    if v is not None:", f"        env[{n!r}] = v"]
    lines.append("    res = v = None")
    for n in frees:
        lines.append(f"    env.pop({n!r}, None)")
    for n in shrink:  # small arrays are cheaper to keep than to replace
        lines += [
            f"    v = env.get({n!r})",
            "    if type(v) is _nd and v.nbytes >= _min:",
            f"        env[{n!r}] = _stand_in(v)",
            "    v = None",
        ]
    return lines


def _namespace() -> dict:
    return {
        "_rc": sys.getrefcount,
        "_base": _RC_BASELINE,
        "_nd": np.ndarray,
        "_min": MIN_DONATED_BYTES,
        "StepFailed": StepFailed,
        "_stand_in": shape_stand_in,
    }


def make_step_fn(
    fn: Callable,
    singles: tuple,
    dups: tuple,
    attrs: dict,
    outs: tuple,
    frees: tuple,
    wanted: frozenset,
    flags: tuple,
    donatable: tuple = (),
    shrink: tuple = (),
) -> Callable:
    """A function ``step(env)`` that runs one compiled op against the value dict ``env``.

    Behaves exactly like one iteration of the plan's generic loop when no LoD
    is tracked: same inputs, same tolerance of ``None`` outputs, same frees.
    ``donatable`` lists the input slots of an ``inplace`` kernel that may be
    donated (see the module docstring); empty for other kernels. ``shrink``
    names variables whose later readers need only their shape (see
    :func:`shape_stand_in`).
    """
    if _is_generic(flags, outs):
        return _generic_step(fn, singles, dups, attrs, outs, frees, wanted, flags, shrink)
    ns = _namespace()
    lines = ["def step(env):"]
    lines += _body(0, fn, singles, dups, attrs, outs, frees, wanted, flags, donatable, shrink, ns)
    return _exec(lines, ns, getattr(fn, "__name__", "kernel"))


def make_run_fns(steps: list, chunk: int = 200) -> tuple:
    """The whole plan as a few straight-line functions ``run(env)`` of up to ``chunk`` ops each.

    ``steps`` holds :func:`make_step_fn`'s arguments per op. One call per
    chunk instead of one per op; an op's failure surfaces as
    :class:`StepFailed` (its plan index) raised from the original exception.
    """
    fns = []
    for lo in range(0, len(steps), chunk):
        ns = _namespace()
        hi = min(lo + chunk, len(steps))
        lines = ["def step(env):", "  i = 0", "  try:"]
        for k in range(lo, hi):
            lines.append(f"      i = {k}")
            lines += ["  " + line for line in _body(k, *steps[k], ns)]
        lines += ["  except Exception as exc:", "    raise StepFailed(i) from exc"]
        fns.append(_exec(lines, ns, f"ops {lo}-{hi - 1}"))
    return tuple(fns)


def _generic_step(fn, singles, dups, attrs, outs, frees, wanted, flags, shrink=()) -> Callable:
    _lod, wants_outputs, densify = flags[:3]

    def step(env: dict) -> None:
        inputs = {s: env[n] for s, n in singles}
        for s, ns in dups:
            inputs[s] = [env[n] for n in ns]
        if densify:
            for s, n in singles:
                if n in densify and isinstance(inputs[s], SelectedRows):
                    inputs[s] = inputs[s].to_dense()
        res = fn(inputs, attrs, wanted) if wants_outputs else fn(inputs, attrs)
        for s, n, dup in outs:
            if dup:
                for name, v in zip(n, res[s]):
                    if name != EMPTY_VAR:
                        env[name] = v
            elif n != EMPTY_VAR:
                v = res.get(s) if wants_outputs else res[s]
                if v is not None:
                    env[n] = v
        for n in frees:
            env.pop(n, None)
        for n in shrink:
            v = env.get(n)
            if type(v) is np.ndarray and v.nbytes >= MIN_DONATED_BYTES:
                env[n] = shape_stand_in(v)

    return step
