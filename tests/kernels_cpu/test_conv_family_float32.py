"""float32 stays float32: every conv/pool/norm/dropout/interp case, forward outputs and input gradients."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

HERE = Path(__file__).parent


def _cases():
    out = []
    for fam in ("conv", "pool", "norm", "dropout", "interp"):
        spec = importlib.util.spec_from_file_location(f"_f32_{fam}", HERE / f"test_{fam}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out += [c for c in mod.CASES if c.grad]
    return out


F32_CASES = _cases()  # not named CASES: registry-wide tests already run the originals


@pytest.mark.parametrize("case", F32_CASES, ids=str)
def test_float32_in_float32_out(case):
    main = fluid.Program()
    feeds, wrt = {}, []
    with fluid.program_guard(main, fluid.Program()):
        block = main.global_block()
        ins = {}
        for slot, arr in case.inputs.items():
            arr = np.asarray(arr)
            arr = arr.astype("float32") if arr.dtype == np.float64 else arr
            v = block.create_var(
                name=slot.lower(),
                shape=arr.shape,
                dtype=arr.dtype.name,
                is_data=True,
                stop_gradient=slot not in case.grad,
            )
            feeds[v.name] = arr
            ins[slot] = [v]
            if slot in case.grad:
                wrt.append(v)
        from oar.plugins import registries

        opdef = registries().ops.get(case.op_type)
        outs = {
            s.name: [block.create_var(name=f"out_{s.name.lower()}")]
            for s in opdef.outputs
            if not s.dispensable
        }
        block.append_op(case.op_type, ins, outs, dict(case.attrs))
        target = outs[(case.grad_outputs or [next(iter(outs))])[0]][0]
        grads = fluid.gradients([target], wrt)
    res = fluid.Executor(fluid.CPUPlace()).run(
        main, feed=feeds, fetch_list=[target] + grads, scope=fluid.Scope()
    )
    for r in res:
        assert r.dtype == np.float32, f"{case}: got {r.dtype}"
