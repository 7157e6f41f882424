"""Turning a compiled plan step into one small straight-line Python function.

Per-op Python overhead decides small-model speed. A generic loop over step
tuples pays, per op, for unpacking the tuple, building the inputs dict in a
comprehension (a frame of its own), checking flags and looping over outputs.
Every one of those facts is fixed when the plan is compiled, so for each step
we generate (once, with ``exec``, as ``attrs`` and ``dataclasses`` do) a
function that does only the work left::

    def step(env):
        res = fn({'X': env['x'], 'Y': env['w']}, attrs)
        v = res['Out']
        if v is not None:
            env['fc_0.tmp_0'] = v
        env.pop('x@GRAD', None)

Variable names are embedded with ``repr``, so any string is safe. Steps with
rarer needs (LoD kernels, SelectedRows densifying, duplicable outputs) get a
closure that runs the generic code for that one step; the plan falls back to
its generic loop when LoD is present at all (see ``Plan.run``).
"""

from __future__ import annotations

from collections.abc import Callable

from oar.lod_tensor import SelectedRows
from oar.registry import EMPTY_VAR


def make_step_fn(fn: Callable, singles: tuple, dups: tuple, attrs: dict, outs: tuple,
                 frees: tuple, wanted: frozenset, flags: tuple) -> Callable:
    """A function ``step(env)`` that runs one compiled op against the value dict ``env``.

    Behaves exactly like one iteration of the plan's generic loop when no LoD
    is tracked: same inputs, same tolerance of ``None`` outputs, same frees.
    """
    lod, wants_outputs, densify = flags
    if lod or densify or any(dup for _s, _n, dup in outs):
        return _generic_step(fn, singles, dups, attrs, outs, frees, wanted, flags)
    items = [f"{s!r}: env[{n!r}]" for s, n in singles]
    items += [f"{s!r}: [" + ", ".join(f"env[{n!r}]" for n in ns) + "]" for s, ns in dups]
    call = "_fn({" + ", ".join(items) + "}, _attrs" + (", _wanted)" if wants_outputs else ")")
    lines = ["def step(env):", f"    res = {call}"]
    for s, n, _dup in outs:
        if n == EMPTY_VAR:
            continue
        get = f"res.get({s!r})" if wants_outputs else f"res[{s!r}]"
        lines += [f"    v = {get}", "    if v is not None:", f"        env[{n!r}] = v"]
    for n in frees:
        lines.append(f"    env.pop({n!r}, None)")
    namespace = {"_fn": fn, "_attrs": attrs, "_wanted": wanted}
    exec(compile("\n".join(lines), f"<oar plan step {getattr(fn, '__name__', 'kernel')}>", "exec"),
         namespace)
    return namespace["step"]


def _generic_step(fn, singles, dups, attrs, outs, frees, wanted, flags) -> Callable:
    _lod, wants_outputs, densify = flags

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

    return step
