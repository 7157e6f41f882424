"""print: passes its input (and gradient) through; prints Fluid's layout by phase, first_n, summarize."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(4)

CASES = [
    OpCase(
        "print",
        {"In": rng.uniform(-1, 1, (2, 3))},
        {"message": "m", "op_print_var": "in_0"},
        ref=lambda In, **a: {"Out": In},
        grad=["In"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_print_op(case):
    check_case(case)


def build(**kw):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [2, 3])
        x.stop_gradient = False
        y = fluid.layers.Print(x, **kw)
        loss = fluid.layers.mean(y * 2.0)
        fluid.backward.append_backward(loss)
    return main, y


def run(main, fetch, times=1):
    exe = fluid.Executor(fluid.CPUPlace())
    x = np.arange(6, dtype="float32").reshape(2, 3)
    for _ in range(times):
        out = exe.run(main, feed={"x": x}, fetch_list=fetch, scope=fluid.Scope())
    return x, out


def test_print_layout_and_pass_through(capsys):
    main, y = build(message="hello", summarize=4)
    x, (yv, gx) = run(main, [y, "x@GRAD"])
    np.testing.assert_array_equal(yv, x)
    np.testing.assert_allclose(gx, np.full((2, 3), 2 / 6))
    out = capsys.readouterr().out
    assert (
        "\thello\tThe place is:CPUPlace\nTensor[x]\n\tshape: [2,3,]\n\tdtype: f\n\tdata: 0,1,2,3,\n"
        in out
    )
    assert "\tdata: 0.333333,0.333333,0.333333,0.333333," in out  # the gradient, backward phase
    assert out.count("Tensor[") == 2


def test_print_phase_first_n_and_switches(capsys):
    main, y = build(
        message="fw",
        print_phase="forward",
        first_n=2,
        summarize=-1,
        print_tensor_type=False,
        print_tensor_shape=False,
    )
    run(main, [y], times=3)
    out = capsys.readouterr().out
    assert out.count("Tensor[x]") == 2  # first_n
    assert "dtype" not in out and "shape" not in out
    assert "\tdata: 0,1,2,3,4,5," in out


@pytest.mark.parametrize(
    "kw,err", [({"print_phase": "sideways"}, ValueError), ({"first_n": 1.5}, TypeError)]
)
def test_print_bad_arguments(kw, err):
    with fluid.program_guard(fluid.Program(), fluid.Program()), pytest.raises(err, match="Print"):
        fluid.layers.Print(fluid.data("x", [2]), **kw)
