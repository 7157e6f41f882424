"""The products of bmm, addmm, tree_conv, nce, match_matrix_tensor, var_conv_2d, gru_unit,
bilinear_interp, trilinear_interp, pad2d, conv3d, conv3d_transpose, fsp and spectral_norm (and
their gradients) go through kernels-cpu's ``_gemm``, like mul and matmul: oar's thread settings
apply, and under ``FLAGS_cpu_deterministic`` the results at 2 threads equal the one-thread
results bit for bit. The inner dimensions pass 512, where OpenBLAS's own threads sum in another
order: a product called at OpenBLAS's default thread count differs in its last bits.
(spectral_norm's matrix-vector products came out equal at 1 and 2 OpenBLAS threads even
before; through ``_gemm`` they run at one BLAS thread, so OpenBLAS's workers do not spin on.)"""

from __future__ import annotations

import numpy as np
import pytest
from oar import cpu_threads, fluid
from oar.api import LoDTensor, registries
from oar.cpu_threads import limit_cpu_math_threads
from oar_kernels_cpu.kernels import _gemm

rng = np.random.default_rng(17)


def _f32(*shape):
    return rng.standard_normal(shape, dtype=np.float32)


def _lod(array, lengths):
    return LoDTensor(array, [[0, *np.cumsum(lengths).tolist()]])


def _bmm():
    return {"X": _f32(2, 64, 640), "Y": _f32(2, 640, 96), "Out@GRAD": _f32(2, 64, 96)}, {}


def _addmm():
    ins = {"Input": _f32(64, 96), "X": _f32(64, 640), "Y": _f32(640, 96), "Out@GRAD": _f32(64, 96)}
    return ins, {"Alpha": 1.5, "Beta": 0.5}


def _tree_conv():
    edges = np.array([[[1, 2], [1, 3], [2, 4], [2, 5], [3, 6], [0, 0]]] * 2, "int32")
    ins = {"NodesVector": _f32(2, 24, 200), "EdgeSet": edges, "Filter": _f32(200, 3, 8, 8)}
    ins["Out@GRAD"] = _f32(2, 24, 8, 8)
    return ins, {"max_depth": 3}


def _nce():
    ins = {"Input": _f32(16, 600), "Label": rng.integers(0, 40, (16, 1)), "Weight": _f32(40, 600)}
    attrs = {"num_total_classes": 40, "num_neg_samples": 5, "sampler": 0, "seed": 3}
    attrs.update(is_sparse=False, custom_neg_classes=[])
    return ins, attrs


def _match_matrix_tensor():
    xl, yl = [5, 7], [6, 4]
    ins = {"X": _lod(_f32(12, 600), xl), "Y": _lod(_f32(10, 600), yl), "W": _f32(600, 2, 600)}
    ins["Out@GRAD"] = _f32(2 * (5 * 6 + 7 * 4), 1)
    return ins, {"dim_t": 2}


def _var_conv_2d():
    rows, cols, cin = [6, 5], [7, 6], 64
    x = _lod(_f32(sum(cin * r * c for r, c in zip(rows, cols)), 1), [cin * 42, cin * 30])
    ins = {"X": x, "ROW": _lod(np.zeros((11, 1), "float32"), rows)}
    ins.update(COLUMN=_lod(np.zeros((13, 1), "float32"), cols), W=_f32(16, cin * 9))
    ins["Out@GRAD"] = _f32(16 * (42 + 30), 1)
    attrs = {"InputChannel": cin, "OutputChannel": 16, "KernelH": 3, "KernelW": 3}
    attrs.update(StrideH=1, StrideW=1)
    return ins, attrs


def _gru_unit():
    n, d = 16, 600
    ins = {"Input": _f32(n, 3 * d), "HiddenPrev": _f32(n, d), "Weight": _f32(d, 3 * d) / 30}
    ins.update(Bias=_f32(1, 3 * d), **{"Hidden@GRAD": _f32(n, d)})
    return ins, {"activation": 2, "gate_activation": 1, "origin_mode": False}


def _interp(method, shape, out):
    ins = {"X": _f32(*shape), "Out@GRAD": _f32(*shape[:2], *out)}
    attrs = {"out_d": -1, "out_h": -1, "out_w": -1, "scale": 0.0, "interp_method": method}
    attrs.update(dict(zip(("out_d", "out_h", "out_w")[-len(out) :], out)))
    attrs.update(align_corners=False, align_mode=0)
    attrs["data_layout"] = "NCHW" if len(shape) == 4 else "NCDHW"
    return ins, attrs


def _pad2d():
    ins = {"X": _f32(1, 2, 600, 5), "Out@GRAD": _f32(1, 2, 604, 7)}
    return ins, {
        "paddings": [2, 2, 1, 1],
        "mode": "reflect",
        "pad_value": 0.0,
        "data_format": "NCHW",
    }


def _conv3d(op, groups):
    # inner dimensions: C/g*K = 648 (forward), L = 384 (filter gradient)
    x, w = (_f32(2, 24, 6, 8, 8), _f32(16, 24 // groups, 3, 3, 3))
    if op == "conv3d_transpose":
        x, w = _f32(2, 16, 6, 8, 8), _f32(16, 24 // groups, 3, 3, 3)
    y = (2, 16 if op == "conv3d" else 24, 6, 8, 8)
    ins = {"Input": x, "Filter": w, "Output@GRAD": _f32(*y)}
    attrs = {"strides": [1, 1, 1], "paddings": [1, 1, 1], "dilations": [1, 1, 1]}
    attrs.update(groups=groups, padding_algorithm="EXPLICIT", data_format="NCDHW")
    return ins, dict(attrs, output_size=[]) if op == "conv3d_transpose" else attrs


def _spectral_norm():
    w, u, v = _f32(160, 3, 200), _f32(3), _f32(160 * 200)  # matrix-vector products of 96000
    ins = {"Weight": w, "U": u, "V": v, "Out@GRAD": _f32(160, 3, 200)}
    return ins, {"dim": 1, "power_iters": 2, "eps": 1e-12}


def _fsp():
    ins = {"X": _f32(2, 128, 28, 28), "Y": _f32(2, 96, 28, 28), "Out@GRAD": _f32(2, 128, 96)}
    return ins, {}  # inner dimension of the forward: 784


CASES = {
    "fsp": _fsp,
    "spectral_norm": _spectral_norm,
    "conv3d": lambda: _conv3d("conv3d", 1),
    "conv3d_grouped": lambda: _conv3d("conv3d", 2),
    "conv3d_transpose": lambda: _conv3d("conv3d_transpose", 1),
    "gru_unit": _gru_unit,
    "bilinear_interp": lambda: _interp("bilinear", (2, 3, 600, 6), (200, 4)),
    "trilinear_interp": lambda: _interp("trilinear", (1, 2, 2, 3, 600), (3, 2, 300)),
    "pad2d": _pad2d,
    "bmm": _bmm,
    "addmm": _addmm,
    "tree_conv": _tree_conv,
    "nce": _nce,
    "match_matrix_tensor": _match_matrix_tensor,
    "var_conv_2d": _var_conv_2d,
}


def _arrays(res):
    return {k: np.asarray(getattr(v, "_array", v)) for k, v in res.items()}


def _forward(op, ins, attrs):
    slots = (
        "Out",
        "Output",
        "Cost",
        "SampleLogits",
        "SampleLabels",
        "Tmp",
        "Gate",
        "ResetHiddenPrev",
    )
    fwd = registries().kernels.lookup(_op(op), "cpu", "float32")
    return fwd.call(ins, attrs, frozenset(slots + ("Hidden",)))


def _backward(op, ins, attrs, out):
    wanted = frozenset(f"{slot}@GRAD" for slot in ins if "@" not in slot)
    ins = dict(ins, **out)  # gradients read forward outputs (nce's samples, gru_unit's gates)
    if op == "nce":
        ins["Cost@GRAD"] = np.ones_like(out["Cost"])
    return registries().kernels.lookup(_op(op) + "_grad", "cpu", "float32").call(ins, attrs, wanted)


def _op(case):
    """The op a case runs (``conv3d_grouped``: conv3d)."""
    return case.removesuffix("_grouped")


def _run(op, ins, attrs):
    # a fresh copy of each input array: spectral_norm updates U and V in place
    ins = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in ins.items()}
    out = _forward(op, ins, attrs)
    res = {"fwd_" + k: v for k, v in _arrays(out).items()}
    res.update(_arrays(_backward(op, ins, attrs, out)))
    return res


@pytest.fixture
def deterministic():
    fluid.set_flags({"FLAGS_cpu_deterministic": True})
    yield
    fluid.set_flags({"FLAGS_cpu_deterministic": False})


@pytest.fixture
def products(monkeypatch):
    """The number of products of each ``_gemm.matmuls`` call."""
    seen: list = []
    real = _gemm.matmuls

    def recorded(xp, pairs):
        seen.append(len(pairs))
        return real(xp, pairs)

    monkeypatch.setattr(_gemm, "matmuls", recorded)
    return seen


@pytest.mark.parametrize("op", sorted(CASES))
def test_forward_and_gradient_products_go_through_gemm(products, op):
    ins, attrs = CASES[op]()
    out = _forward(op, ins, attrs)
    assert products or op == "pad2d", f"{op}: no product went through _gemm"  # pad2d: a gather
    del products[:]
    _backward(op, ins, attrs, out)
    assert products, f"{op}_grad: no product went through _gemm"


@pytest.mark.parametrize("op", sorted(CASES))
def test_two_threads_equal_one_thread_bit_for_bit(two_threads, deterministic, op):
    if cpu_threads.blas_num_threads() != 2:
        pytest.skip("numpy's OpenBLAS was not found")
    ins, attrs = CASES[op]()
    two = _run(op, ins, attrs)
    assert cpu_threads.blas_num_threads() == 2  # the setting in force is kept
    with limit_cpu_math_threads(1):
        one = _run(op, ins, attrs)
    assert two.keys() == one.keys() and any(k.endswith("@GRAD") for k in two)
    for key in two:
        np.testing.assert_array_equal(two[key], one[key], err_msg=f"{op} {key}")
