"""A CNN trained and saved by the real Fluid 1.8.5 loads into oar and gives Fluid's outputs.

The model (data/fluid18_cnn_model, made by data/make_fluid18_cnn_model.py)
uses conv2d, batch_norm (moving stats from training), pool2d, dropout,
img_conv_group, resize_bilinear, lrn, adaptive_pool2d, conv2d_transpose,
layer_norm and fc.
"""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid

pytest.importorskip("oar_io")
DATA = Path(__file__).parent / "data"


def test_fluid18_cnn_inference_model_matches():
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        prog, feeds, fetches = fluid.io.load_inference_model(str(DATA / "fluid18_cnn_model"), exe,
                                                             params_filename="params")
        io = np.load(DATA / "fluid18_cnn_io.npz")
        (got,) = exe.run(prog, feed={feeds[0]: io["x"]}, fetch_list=fetches)
    types = {op.type for op in prog.global_block().ops}
    assert {"conv2d", "conv2d_transpose", "batch_norm", "pool2d", "dropout", "bilinear_interp", "lrn",
            "layer_norm"} <= types
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, io["out"], rtol=1e-4, atol=1e-6)
