"""Every OpCase in tests/kernels_cpu: eager forward and gradients equal the static executor's.

The cases are collected from the kernel test modules' ``CASES`` lists, so an op
added with its OpCases is covered here without touching this file.
"""

from __future__ import annotations

import copy
import importlib.util
import pathlib

import attrs
import numpy as np
import pytest
from oar import fluid
from oar.dygraph.backward import sweep
from oar.dygraph.varbase import VarBase
from oar.framework.mode import _dygraph_tracer
from oar.lod_tensor import LoDTensor
from oar.plugins import registries
from oar.testing import OpCase, _build, _feed, _float_outputs, run_forward

KERNEL_TESTS = pathlib.Path(__file__).resolve().parents[1] / "kernels_cpu"


def _load_cases() -> list:
    cases = []
    for path in sorted(KERNEL_TESTS.glob("test_*.py")):
        spec = importlib.util.spec_from_file_location(f"_dy_cases_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        cases += [c for c in getattr(mod, "CASES", []) if isinstance(c, OpCase)]
    return cases


CASES = _load_cases()


def _fresh(case):
    """A copy of the case with its own input arrays (some kernels update inputs in place)."""
    return attrs.evolve(case, inputs=copy.deepcopy(dict(case.inputs)))


def _out_counts(case) -> dict:
    opdef = registries().ops.get(case.op_type)
    counts = dict(case.outputs or {})
    return {
        s.name: counts.get(s.name, 1 if not s.dispensable or case.outputs is None else 0)
        for s in opdef.outputs
    }


def _eager_run(case, wrt=()):
    ins = {}
    for slot, value in case.inputs.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        vs = []
        for i, arr in enumerate(values):
            arr = np.array(arr)
            name = f"{slot.lower()}_{i}"
            val = LoDTensor(arr, None) if name in case.lod else arr
            if name in case.lod:
                val.set_recursive_sequence_lengths(case.lod[name])
            vs.append(VarBase(val, name=name, stop_gradient=slot not in wrt))
        ins[slot] = vs
    outs = {slot: [VarBase(None) for _ in range(n)] for slot, n in _out_counts(case).items() if n}
    _dygraph_tracer().trace_op(case.op_type, ins, outs, dict(case.attrs))
    return ins, outs


def _plain(v):
    return np.asarray(v._array if isinstance(v, LoDTensor) else v)


def _deterministic(case) -> bool:
    a, b = run_forward(_fresh(case)), run_forward(_fresh(case))
    return all(np.array_equal(x, y) for slot in a for x, y in zip(a[slot], b[slot]))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_eager_forward_equals_static(case):
    static = run_forward(_fresh(case))
    case = _fresh(case)
    exact = _deterministic(case)
    with fluid.dygraph.guard():
        _, outs = _eager_run(case)
        for slot, vs in outs.items():
            for i, v in enumerate(vs):
                got = _plain(v._value)
                want = np.asarray(static[slot][i])
                assert got.shape == want.shape, (
                    f"{case}: {slot}[{i}] shape {got.shape} != static {want.shape}"
                )
                assert got.dtype == want.dtype, (
                    f"{case}: {slot}[{i}] dtype {got.dtype} != static {want.dtype}"
                )
                if exact:
                    np.testing.assert_allclose(
                        got, want, rtol=1e-6, atol=1e-7, err_msg=f"{case}: {slot}[{i}]"
                    )


GRAD_CASES = [c for c in CASES if c.grad]


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_eager_gradient_equals_static(case):
    if not _deterministic(case):
        pytest.skip(f"{case}: random op, gradients depend on the draw")
    case = _fresh(case)
    main, feeds, in_vars, out_vars = _build(case, case.grad)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    fetch = [v.name for vs in out_vars.values() for v in vs]
    first = exe.run(main, feed=_feed(feeds, case.lod), fetch_list=fetch, scope=scope)
    it = iter(first)
    got = {slot: [next(it) for _ in vs] for slot, vs in out_vars.items()}
    outs = _float_outputs(out_vars, got, case.grad_outputs)
    rng = np.random.default_rng(7)
    douts = {v.name: rng.uniform(0.5, 1.5, arr.shape).astype(arr.dtype) for _, v, arr in outs}
    with fluid.program_guard(main):
        block = main.global_block()
        tg = [
            block.create_var(
                name=v.name + "_dout",
                shape=arr.shape,
                dtype=arr.dtype.name,
                is_data=True,
                stop_gradient=True,
            )
            for _, v, arr in outs
        ]
        wrt = [v for slot in case.grad for v in in_vars[slot]]
        grads = fluid.gradients([v for _, v, _ in outs], wrt, target_gradients=tg)
    feed_all = dict(feeds)
    for _, v, _ in outs:
        feed_all[v.name + "_dout"] = douts[v.name]
    fetch_grads = [g.name for g in grads if g is not None]
    values = iter(
        exe.run(main, feed=_feed(feed_all, case.lod), fetch_list=fetch_grads, scope=scope)
    )
    static = {v.name: next(values) if g is not None else None for v, g in zip(wrt, grads)}

    case = _fresh(case)
    with fluid.dygraph.guard():
        ins, eouts = _eager_run(case, case.grad)
        slot_index = {}
        for slot, vs in out_vars.items():
            for i, v in enumerate(vs):
                slot_index[v.name] = (slot, i)
        roots = []
        for _, v, _ in outs:
            slot, i = slot_index[v.name]
            roots.append((eouts[slot][i], douts[v.name]))
        grads_eager = sweep(_dygraph_tracer(), roots)
        for slot in case.grad:
            for var in ins[slot]:
                entry = grads_eager.get(id(var))
                want = static[var.name]
                if want is None:
                    assert entry is None or not np.any(_plain(entry[1])), (
                        f"{case}: eager gives a gradient for {var.name}"
                    )
                    continue
                assert entry is not None, f"{case}: no eager gradient for {var.name}"
                g = entry[1]
                g = g.to_dense() if hasattr(g, "to_dense") else _plain(g)
                np.testing.assert_allclose(
                    g, want, rtol=1e-6, atol=1e-7, err_msg=f"{case}: d{var.name}"
                )
