"""warpctc (loss against brute-force alignment enumeration, gradient check, Fluid 1.8.5's
numbers) and ctc_align / ctc_greedy_decoder."""

import itertools

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(51)
C = 4


def _collapse(path, blank=0):
    out = [p for i, p in enumerate(path) if i == 0 or p != path[i - 1]]
    return [p for p in out if p != blank]


def _ctc_ref(t_lens, l_lens):
    def ref(Logits, Label, blank=0, **_):
        losses = []
        t_off, l_off = np.cumsum([0] + t_lens), np.cumsum([0] + l_lens)
        for i in range(len(t_lens)):
            x = Logits[t_off[i] : t_off[i + 1]]
            p = np.exp(x - x.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            target = list(Label[l_off[i] : l_off[i + 1], 0])
            total = sum(
                np.prod([p[t, k] for t, k in enumerate(path)])
                for path in itertools.product(range(C), repeat=len(x))
                if _collapse(list(path), blank) == target
            )
            losses.append(-np.log(total))
        return {"Loss": np.array(losses).reshape(-1, 1)}

    return ref


def _align_ref(lens, blank=0):
    def ref(Input, **_):
        off = np.cumsum([0] + lens)
        return {
            "Output": np.array(
                sum((_collapse(list(Input[a:b, 0]), blank) for a, b in zip(off[:-1], off[1:])), []),
                dtype=Input.dtype,
            ).reshape(-1, 1)
        }

    return ref


CASES = [
    OpCase(
        "warpctc",
        {"Logits": rng.uniform(-1, 1, (7, C)), "Label": np.array([[1], [2], [2], [3]], np.int32)},
        ref=_ctc_ref([4, 3], [2, 2]),
        grad=["Logits"],
        grad_outputs=["Loss"],
        lod={"logits_0": [[4, 3]], "label_0": [[2, 2]]},
    ),
    OpCase(
        "warpctc",
        {"Logits": rng.uniform(-1, 1, (5, C)), "Label": np.array([[3], [1]], np.int32)},
        {"blank": 2},
        ref=_ctc_ref([5], [2]),
        grad=["Logits"],
        grad_outputs=["Loss"],
        lod={"logits_0": [[5]], "label_0": [[2]]},
        name="blank2",
    ),
    OpCase(
        "ctc_align",
        {"Input": np.array([[0], [1], [1], [0], [1], [2], [2], [0], [0], [3]], np.int64)},
        ref=_align_ref([6, 4]),
        lod={"input_0": [[6, 4]]},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_ctc(case):
    check_case(case)


def test_loss_gradient_and_greedy_decoding_equal_fluid_1_8_5():
    place = fluid.CPUPlace()
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 4], "float32", lod_level=1)
        y = fluid.data("y", [None, 1], "int32", lod_level=1)
        x.stop_gradient = False
        loss = fluid.layers.warpctc(x, y, blank=0, norm_by_times=True)
        dec = fluid.layers.ctc_greedy_decoder(fluid.layers.softmax(x), blank=0)
        (g,) = fluid.gradients([fluid.layers.reduce_sum(loss)], [x])
    rs = np.random.RandomState(0)  # the oracle's draws
    xv = rs.uniform(-1, 1, (7, 4)).astype("float32")
    xv[4:6, 0] = 5.0
    feed = {
        "x": fluid.create_lod_tensor(xv, [[4, 3]], place),
        "y": fluid.create_lod_tensor(np.array([[1], [2], [3], [1]], "int32"), [[3, 1]], place),
    }
    exe = fluid.Executor(place)
    losses, d, gx = exe.run(main, feed=feed, fetch_list=[loss, dec, g], return_numpy=False)
    # printed by Fluid 1.8.5 for the same program and feeds
    np.testing.assert_allclose(
        np.array(losses).ravel(), [4.395694732666016, 1.317291259765625], rtol=1e-5
    )
    assert np.array(d).ravel().tolist() == [1, 3, 1, 3]
    assert d.recursive_sequence_lengths() == [[3, 1]]
    np.testing.assert_allclose(
        np.array(gx)[0],
        [0.02208411693572998, -0.13906633853912354, 0.06187286227941513, 0.055109452456235886],
        rtol=1e-4,
    )
    np.testing.assert_allclose(
        np.array(gx)[6],
        [0.030031448230147362, -0.2368241250514984, 0.034661389887332916, 0.17213132977485657],
        rtol=1e-4,
    )


def test_padded_ctc_equals_lod_ctc():
    place = fluid.CPUPlace()
    xv = rng.uniform(-1, 1, (7, C)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, C], "float32", lod_level=1)
        y = fluid.data("y", [None, 1], "int32", lod_level=1)
        xp = fluid.data("xp", [4, 2, C], "float32")
        yp = fluid.data("yp", [2, 2], "int32")
        xl = fluid.data("xl", [2], "int64")
        yl = fluid.data("yl", [2], "int64")
        lod_loss = fluid.layers.warpctc(x, y)
        pad_loss = fluid.layers.warpctc(xp, yp, input_length=xl, label_length=yl)
    padded = np.zeros((4, 2, C), "float32")
    padded[:4, 0], padded[:3, 1] = xv[:4], xv[4:]
    feed = {
        "x": fluid.create_lod_tensor(xv, [[4, 3]], place),
        "y": fluid.create_lod_tensor(np.array([[1], [2], [3]], "int32"), [[2, 1]], place),
        "xp": padded,
        "yp": np.array([[1, 2], [3, 0]], "int32"),
        "xl": np.array([4, 3], "int64"),
        "yl": np.array([2, 1], "int64"),
    }
    a, b = fluid.Executor(place).run(main, feed=feed, fetch_list=[lod_loss, pad_loss])
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_unalignable_label_is_a_clear_error():
    place = fluid.CPUPlace()
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, C], "float32", lod_level=1)
        y = fluid.data("y", [None, 1], "int32", lod_level=1)
        loss = fluid.layers.warpctc(x, y)
    feed = {
        "x": fluid.create_lod_tensor(np.zeros((2, C), "float32"), [[2]], place),
        "y": fluid.create_lod_tensor(np.array([[1], [1]], "int32"), [[2]], place),
    }
    with pytest.raises(
        ValueError, match="warpctc: a label of length 2 cannot be aligned to 2 time steps"
    ):
        fluid.Executor(place).run(main, feed=feed, fetch_list=[loss])
