"""The recurrent kernels' time-step loops run at one BLAS thread while a step's product is
small (``_sequence.step_products_at_one_blas_thread``): OpenBLAS's workers, spinning after
each step's few-microsecond product, made dynamic_lstm ten times slower on a busy machine."""

from __future__ import annotations

import numpy as np
import pytest
from oar import cpu_threads
from oar.api import LoDTensor, registries
from oar_kernels_cpu.kernels import _gemm, lstmp, recurrent


@pytest.fixture
def blas_seen(monkeypatch, two_threads):
    """The BLAS thread counts the lstm/gru cells of kernels-cpu ran at."""
    if cpu_threads.blas_num_threads() != 2:
        pytest.skip("numpy's OpenBLAS was not found")
    seen = []

    def spy(module, name):
        real = getattr(module, name)

        def recorded(*args, **kwargs):
            seen.append(cpu_threads.blas_num_threads())
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, recorded)

    spy(recurrent, "lstm_cell")
    spy(lstmp, "lstm_cell")
    spy(recurrent, "_gru_weights")
    return seen


def _inputs(op, rng, h=8, seqs=(3, 2)):
    rows = sum(seqs)
    lod = [[0, *np.cumsum(seqs).tolist()]]
    gates = {"lstm": 4, "gru": 3, "lstmp": 4}[op]
    x = LoDTensor(rng.standard_normal((rows, gates * h)).astype(np.float32), lod)
    inputs = {"Input": x, "Weight": rng.standard_normal((h, gates * h)).astype(np.float32)}
    inputs["Bias"] = np.zeros((1, (7 if op == "lstm" else gates) * h), np.float32)
    attrs = {"is_reverse": False, "use_peepholes": op == "lstm", "gate_activation": "sigmoid"}
    attrs.update(cell_activation="tanh", candidate_activation="tanh", activation="tanh")
    attrs["origin_mode"] = False
    if op == "lstmp":
        inputs["Weight"] = rng.standard_normal((h // 2, 4 * h)).astype(np.float32)
        inputs["ProjWeight"] = rng.standard_normal((h, h // 2)).astype(np.float32)
        inputs["Bias"] = np.zeros((1, 4 * h), np.float32)
        attrs.update(use_peepholes=False, proj_activation="tanh", cell_clip=0.0, proj_clip=0.0)
    return inputs, attrs


@pytest.mark.parametrize("op", ["lstm", "gru", "lstmp"])
@pytest.mark.parametrize("large", [False, True])
def test_step_loops_at_one_blas_thread_while_steps_are_small(blas_seen, monkeypatch, op, large):
    if large:  # every product counts as large: the loop keeps the BLAS count in force
        monkeypatch.setattr(_gemm, "THREADED_MACS", 1)
    kernel = registries().kernels.lookup(op, "cpu", "float32").kernel
    inputs, attrs = _inputs(op, np.random.default_rng(0))
    out = kernel(inputs, attrs)
    assert blas_seen and set(blas_seen) == {2 if large else 1}
    assert cpu_threads.blas_num_threads() == 2  # as it was
    hidden = out["Hidden"] if op != "lstmp" else out["Projection"]
    assert np.isfinite(np.asarray(hidden._array if hasattr(hidden, "_array") else hidden)).all()


def test_a_missing_lod_still_gets_the_kernels_own_error():
    kernel = registries().kernels.lookup("lstm", "cpu", "float32").kernel
    inputs, attrs = _inputs("lstm", np.random.default_rng(0))
    inputs["Input"] = inputs["Input"]._array
    with pytest.raises(Exception, match="lstm: input Input must be a LoDTensor"):
        kernel(inputs, attrs)
