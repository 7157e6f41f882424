"""GPU: the MLP train step (bench_mlp's model, weights and batch) on ``fluid.CUDAPlace(0)``
against PyTorch CUDA, plus the host<->device copy bandwidth against cupy's raw copy.

Every contender raises Unavailable without a usable GPU (no cupy, no driver, no device), so
this file runs unchanged, and reports "unavailable", on machines without one.
"""

from __future__ import annotations

import numpy as np
from bench_mlp import LABEL, LR, WEIGHTS, X, oar_step
from benchlib import Benchmark, Unavailable, require


def _gpu_fluid():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    if not fluid.is_compiled_with_cuda():
        raise Unavailable("no usable CUDA device (oar-kernels-cuda + cupy + a GPU needed)")
    return fluid


def oar_mlp_cuda():
    fluid = _gpu_fluid()
    return oar_step(fluid.CUDAPlace(0))


def torch_mlp_cuda():
    torch = require("torch")
    if not torch.cuda.is_available():
        raise Unavailable("torch sees no CUDA device")
    dev = torch.device("cuda")
    params = []
    for w, b in WEIGHTS:
        params += [
            torch.from_numpy(w.copy()).to(dev).requires_grad_(),
            torch.from_numpy(b.copy()).to(dev).requires_grad_(),
        ]
    w1, b1, w2, b2, w3, b3 = params
    opt = torch.optim.SGD(params, lr=LR)

    def step():
        x = torch.from_numpy(X).to(dev)
        lab = torch.from_numpy(LABEL).reshape(-1).to(dev)
        h = torch.relu(x @ w1 + b1)
        h = torch.relu(h @ w2 + b2)
        loss = torch.nn.functional.cross_entropy(h @ w3 + b3, lab)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach().cpu().numpy().reshape(1)

    return step


COPY = np.random.default_rng(3).standard_normal((1024, 1024), dtype=np.float32)  # 4 MiB


def oar_copy():
    _gpu_fluid()
    from oar.plugins import registries

    dev = registries().devices.get("cuda")

    def step():
        return dev.to_host(dev.from_host(COPY, 0))

    return step


def cupy_copy():
    cupy = require("cupy")
    if not cupy.is_available():
        raise Unavailable("cupy finds no GPU")

    def step():
        return cupy.asnumpy(cupy.asarray(COPY))

    return step


def _same(results: dict, rtol: float = 1e-4) -> None:
    values = [np.asarray(v, dtype=np.float64).ravel() for v in results.values()]
    for v in values[1:]:
        np.testing.assert_allclose(v, values[0], rtol=rtol, atol=1e-5)


BENCHMARKS = [
    Benchmark(
        "mlp_cuda",
        "MLP 784-512-512-10 SGD step, batch 128, on CUDAPlace(0) (torch: CUDA)",
        {"oar": oar_mlp_cuda, "torch": torch_mlp_cuda},
        targets={"oar/torch": 1.3},
        check=_same,
    ),
    Benchmark(
        "copy_cuda",
        "4 MiB float32 host -> device -> host through the cuda Device (cupy: asarray/asnumpy)",
        {"oar": oar_copy, "cupy": cupy_copy},
        check=_same,
    ),
]
